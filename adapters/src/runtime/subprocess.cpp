#include "seqby/runtime/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <thread>
#include <utility>

#include "seqby/core/check.h"

namespace seqby::redis {
namespace {

constexpr std::uint64_t kPollMs = 10;  // the wait's step when pidfd_open is not available

std::uint64_t steady_now_ms() {
  const auto since_origin = std::chrono::steady_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(since_origin).count());
}

int poll_timeout(std::uint64_t remaining_ms) {
  return remaining_ms > static_cast<std::uint64_t>(INT_MAX) ? INT_MAX
                                                            : static_cast<int>(remaining_ms);
}

// Only async-signal-safe calls from here to exec: the parent may have other threads.
void redirect_in_child(const Redirect& redirect, const char* path, int pipe_write_fd, int target) {
  int fd = -1;
  switch (redirect.kind) {
    case Redirect::Kind::inherit:
      return;
    case Redirect::Kind::null:
      fd = ::open("/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
      break;
    case Redirect::Kind::file:
      fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      break;
    case Redirect::Kind::pipe:
      ::dup2(pipe_write_fd, target);
      return;
  }
  if (fd < 0) return;  // keeps the parent's stream
  ::dup2(fd, target);
  ::close(fd);
}

}  // namespace

Result<Subprocess> Subprocess::spawn(const std::vector<std::string>& argv,
                                     const SpawnOptions& options) {
  SEQBY_CHECK(!argv.empty());
  SEQBY_CHECK(options.in.kind == Redirect::Kind::inherit ||
              options.in.kind == Redirect::Kind::null);
  SEQBY_CHECK(options.err.kind != Redirect::Kind::pipe);
  // Everything the child needs is built before fork: no allocation between fork and exec.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const char* program = options.program.empty() ? argv[0].c_str() : options.program.c_str();
  int pipe_fds[2] = {-1, -1};
  if (options.out.kind == Redirect::Kind::pipe && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Error{Errc::refused, "pipe failed for " + argv[0]};
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    if (pipe_fds[0] >= 0) ::close(pipe_fds[0]);
    if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
    return Error{Errc::refused, "fork failed for " + argv[0]};
  }
  if (pid == 0) {
    if (options.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    }
    redirect_in_child(options.in, nullptr, -1, STDIN_FILENO);
    redirect_in_child(options.out, options.out.path.c_str(), pipe_fds[1], STDOUT_FILENO);
    redirect_in_child(options.err, options.err.path.c_str(), -1, STDERR_FILENO);
    if (options.search_path) {
      ::execvp(program, args.data());
    } else {
      ::execv(program, args.data());
    }
    ::_exit(127);
  }
  Subprocess child;
  child.pid_ = pid;
  if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  child.stdout_fd_ = pipe_fds[0];
  return child;
}

Subprocess::~Subprocess() {
  kill();
  close_pipe();
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      reaped_(std::exchange(other.reaped_, false)),
      exit_status_(std::exchange(other.exit_status_, kNotExited)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this == &other) return *this;
  kill();
  close_pipe();
  pid_ = std::exchange(other.pid_, -1);
  reaped_ = std::exchange(other.reaped_, false);
  exit_status_ = std::exchange(other.exit_status_, kNotExited);
  stdout_fd_ = std::exchange(other.stdout_fd_, -1);
  return *this;
}

bool Subprocess::send(int signal) { return running() && ::kill(pid_, signal) == 0; }

void Subprocess::record_status(int status) {
  reaped_ = true;
  exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : kNotExited;
  term_signal_ = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

bool Subprocess::try_reap() {
  if (pid_ <= 0) return false;
  if (reaped_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
  record_status(status);
  return true;
}

int Subprocess::wait(std::uint64_t wait_max_ms) {
  SEQBY_CHECK(pid_ > 0);
  const std::uint64_t deadline_ms = steady_now_ms() + wait_max_ms;
  // A pidfd becomes readable when the child exits: the wait ends at once, without polling steps.
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  while (!try_reap()) {
    const std::uint64_t now_ms = steady_now_ms();
    if (now_ms >= deadline_ms) {
      kill();
      break;
    }
    if (pidfd >= 0) {
      pollfd fd{pidfd, POLLIN, 0};
      const int ready = ::poll(&fd, 1, poll_timeout(deadline_ms - now_ms));
      SEQBY_CHECK(ready >= 0 || errno == EINTR);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    }
  }
  if (pidfd >= 0) ::close(pidfd);
  return exit_status_;
}

int Subprocess::terminate(std::uint64_t wait_max_ms) {
  send(SIGTERM);
  send(SIGCONT);
  return wait(wait_max_ms);
}

void Subprocess::kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);  // ends a stopped child too
  int status = 0;
  pid_t got = -1;
  do {
    got = ::waitpid(pid_, &status, 0);
  } while (got < 0 && errno == EINTR);
  SEQBY_CHECK(got == pid_);
  record_status(status);
}

std::string Subprocess::read_stdout(std::uint64_t wait_max_ms) {
  SEQBY_CHECK(stdout_fd_ >= 0);
  const std::uint64_t deadline_ms = steady_now_ms() + wait_max_ms;
  std::string out;
  char buffer[4096];
  for (;;) {
    const std::uint64_t now_ms = steady_now_ms();
    if (now_ms >= deadline_ms) break;
    pollfd fd{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&fd, 1, poll_timeout(deadline_ms - now_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const ssize_t n = ::read(stdout_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file: the child closed its stdout
    out.append(buffer, static_cast<std::size_t>(n));
  }
  close_pipe();
  return out;
}

void Subprocess::close_pipe() {
  if (stdout_fd_ < 0) return;
  ::close(stdout_fd_);
  stdout_fd_ = -1;
}

}  // namespace seqby::redis
