// Subprocess: one child process started by fork and exec, owned by one object. Its standard
// streams go where SpawnOptions say (inherited, /dev/null, a file, or a pipe this object reads),
// it is signalled by pid (never a process group), and every wait for it is bounded: a child
// that outlives a bound is SIGKILLed and reaped. The object never leaves its child running or
// unreaped: destroying it SIGKILLs and reaps a child that still runs. Not thread-safe; the
// child dies with the thread that spawned it when die_with_parent is set (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "seqby/core/result.h"

namespace seqby::redis {

// Where one standard stream of the child goes.
struct Redirect {
  enum class Kind { inherit, null, file, pipe };
  Kind kind = Kind::inherit;
  std::string path;  // Kind::file: created or truncated, mode 0644

  static Redirect inherit() { return Redirect{}; }
  static Redirect null() { return Redirect{Kind::null, {}}; }
  static Redirect file(std::string path) { return Redirect{Kind::file, std::move(path)}; }
  static Redirect pipe() { return Redirect{Kind::pipe, {}}; }  // stdout only: read_stdout()
};

struct SpawnOptions {
  Redirect in;                  // inherit or null
  Redirect out;                 // any kind
  Redirect err;                 // inherit, null or file
  std::string program;          // the file to exec; empty: argv[0]
  bool search_path = false;     // look `program` up in PATH (execvp) instead of execv
  bool die_with_parent = true;  // SIGKILL the child when the spawning thread ends
};

class Subprocess {
 public:
  // The exit status wait() reports for a child that did not exit normally (a signal, or
  // SIGKILLed at the bound).
  static constexpr int kNotExited = -1;

  Subprocess() = default;  // no child
  // Forks and execs `argv` (REQUIRES: not empty). An exec failure shows as exit status 127.
  static Result<Subprocess> spawn(const std::vector<std::string>& argv,
                                  const SpawnOptions& options);
  ~Subprocess();  // SIGKILLs and reaps a child that still runs
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }  // -1 when there is no child
  // True from spawn until the child is reaped (a stopped child is running).
  bool running() const { return pid_ > 0 && !reaped_; }

  // Sends `signal` to the child; false when it is not running or kill(2) failed.
  bool send(int signal);
  bool stop() { return send(SIGSTOP); }
  bool resume() { return send(SIGCONT); }

  // Reaps the child if it has exited, without waiting; true when it is reaped (now or before).
  bool try_reap();
  // Waits at most `wait_max_ms` for the child to exit and reaps it; SIGKILLs and reaps it at the
  // bound. Returns its exit status, or kNotExited. REQUIRES: started by spawn().
  int wait(std::uint64_t wait_max_ms);
  // SIGTERM (and SIGCONT: a stopped child acts on SIGTERM only once continued), then wait().
  int terminate(std::uint64_t wait_max_ms);
  // The signal that ended the child once it is reaped (SIGKILL when wait() killed it at its
  // bound), 0 when it exited or has not been reaped.
  int term_signal() const { return term_signal_; }
  // SIGKILL and reap (a crash). No-op when not running.
  void kill();

  // Reads the child's stdout pipe (Redirect::pipe) until it closes or `wait_max_ms` passed, and
  // closes it. REQUIRES: spawned with out = Redirect::pipe().
  std::string read_stdout(std::uint64_t wait_max_ms);

 private:
  void record_status(int status);
  void close_pipe();

  pid_t pid_ = -1;
  bool reaped_ = false;
  int exit_status_ = kNotExited;
  int term_signal_ = 0;
  int stdout_fd_ = -1;  // our end of the stdout pipe
};

}  // namespace seqby::redis
