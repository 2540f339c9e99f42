// RedisServer: a redis-server for one test. When SEQBY_TEST_REDIS_URL is set (and the test does
// not ask for its own server) it stands for that shared server; otherwise it starts its own
// redis-server on a free loopback port (no persistence), waits until PING answers, and stops it
// by pid when destroyed (SIGTERM, then SIGKILL after a bound). Process helpers send
// SIGSTOP/SIGCONT/SIGKILL to a child by pid, for stall and crash tests. An own server dies with
// the thread that started it (PR_SET_PDEATHSIG), so create it on the test's main thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "seqby/runtime/subprocess.h"

namespace seqby::testing {

struct RedisServerOptions {
  bool own = false;                     // always start an own server (ignore the env variable)
  std::string password;                 // --requirepass; url() then carries it
  std::vector<std::string> extra_args;  // more redis-server arguments, e.g. {"--maxclients", "8"}
};

class RedisServer {
 public:
  RedisServer();
  explicit RedisServer(RedisServerOptions options);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  // False when no server could be reached or started; error() then says why.
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  const std::string& url() const { return url_; }  // redis://[:password@]127.0.0.1:PORT
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return process_.pid(); }  // -1 for a shared (external) server
  bool owned() const { return own_; }           // true when this object runs the server

  // FLUSHALL (the shared server between tests). Returns false when it failed.
  bool flushall();
  // SIGKILLs the own server and reaps it (a crash). REQUIRES: owned().
  void kill();
  // Starts the own server again on the same port; false when it did not answer PING in time.
  bool restart();

  // Signals for a child process by pid (never a process group). Return false when kill(2) failed.
  static bool stop_process(pid_t pid);      // SIGSTOP
  static bool continue_process(pid_t pid);  // SIGCONT
  static bool kill_process(pid_t pid);      // SIGKILL

 private:
  bool start_on(std::uint16_t port);
  bool wait_ready(std::uint64_t limit_ms);
  void terminate();

  RedisServerOptions options_;
  bool own_ = false;
  bool ok_ = false;
  std::string error_;
  std::string url_;
  std::uint16_t port_ = 0;
  redis::Subprocess process_;  // the own server
};

}  // namespace seqby::testing
