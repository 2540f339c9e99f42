#include "redis_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/free_port.h"

namespace seqby::testing {
namespace {

constexpr int kStartAttemptsMax = 5;
constexpr std::uint64_t kReadyLimitMs = 10000;
constexpr std::uint64_t kPollMs = 20;
constexpr std::uint64_t kTermLimitMs = 5000;

void sleep_for_ms(std::uint64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

RedisServer::RedisServer() : RedisServer(RedisServerOptions{}) {}

RedisServer::RedisServer(RedisServerOptions options) : options_(std::move(options)) {
  const char* shared = std::getenv("SEQBY_TEST_REDIS_URL");
  if (!options_.own && shared != nullptr && shared[0] != '\0') {
    url_ = shared;
    auto config = redis::parse_redis_url(url_);
    if (!config.ok()) {
      error_ = config.error().message;
      return;
    }
    port_ = config.value().port;
    ok_ = wait_ready(kReadyLimitMs);
    if (!ok_) error_ = "the server of SEQBY_TEST_REDIS_URL does not answer PING";
    return;
  }
  own_ = true;
  for (int attempt = 0; attempt < kStartAttemptsMax && !ok_; ++attempt) {
    const std::uint16_t port = redis::free_loopback_port();
    if (port == 0) continue;
    port_ = port;
    url_ = "redis://" + (options_.password.empty() ? "" : ":" + options_.password + "@") +
           "127.0.0.1:" + std::to_string(port_);
    ok_ = start_on(port_) && wait_ready(kReadyLimitMs);
    if (!ok_) terminate();  // most likely the port was taken meanwhile: try another one
  }
  if (!ok_ && error_.empty()) error_ = "could not start redis-server";
}

RedisServer::~RedisServer() { terminate(); }

bool RedisServer::start_on(std::uint16_t port) {
  const char* program = std::getenv("SEQBY_REDIS_SERVER");
  if (program == nullptr || program[0] == '\0') program = "redis-server";
  const std::string dir = std::filesystem::temp_directory_path().string();
  std::vector<std::string> args = {program,
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(port),
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--daemonize",
                                   "no",
                                   "--dir",
                                   dir};
  if (!options_.password.empty()) {
    args.push_back("--requirepass");
    args.push_back(options_.password);
  }
  for (const auto& arg : options_.extra_args) args.push_back(arg);
  redis::SpawnOptions spawn_options;  // dies with the test process's thread that started it
  spawn_options.in = redis::Redirect::null();
  spawn_options.out = redis::Redirect::null();
  spawn_options.err = redis::Redirect::null();
  spawn_options.search_path = true;
  Result<redis::Subprocess> process = redis::Subprocess::spawn(args, spawn_options);
  if (!process.ok()) {
    error_ = "fork failed";
    return false;
  }
  process_ = std::move(process).value();
  return true;
}

bool RedisServer::wait_ready(std::uint64_t limit_ms) {
  auto config = redis::parse_redis_url(url_);
  if (!config.ok()) return false;
  config.value().connect_timeout_ms = 200;
  config.value().command_timeout_ms = 500;
  redis::BlockingRedis redis(config.value());
  for (std::uint64_t waited_ms = 0; waited_ms < limit_ms; waited_ms += kPollMs) {
    if (process_.pid() > 0 && process_.try_reap()) {
      process_ = redis::Subprocess();
      error_ = "redis-server exited at start (port " + std::to_string(port_) + ")";
      return false;
    }
    auto reply = redis.execute({"PING"});
    if (reply.ok() && reply.value() == redis::Reply::status("PONG")) return true;
    sleep_for_ms(kPollMs);
  }
  error_ = "redis-server on port " + std::to_string(port_) + " did not answer PING";
  return false;
}

void RedisServer::terminate() {
  if (process_.pid() <= 0) return;
  process_.terminate(kTermLimitMs);  // SIGTERM (and SIGCONT), SIGKILL at the bound
  process_ = redis::Subprocess();
}

bool RedisServer::flushall() {
  auto reply = redis::run_command_blocking(url_, {"FLUSHALL"});
  return reply.ok() && reply.value() == redis::Reply::status("OK");
}

void RedisServer::kill() {
  process_.kill();
  process_ = redis::Subprocess();
}

bool RedisServer::restart() {
  if (!own_) return false;
  kill();
  ok_ = start_on(port_) && wait_ready(kReadyLimitMs);
  return ok_;
}

bool RedisServer::stop_process(pid_t pid) { return pid > 0 && ::kill(pid, SIGSTOP) == 0; }
bool RedisServer::continue_process(pid_t pid) { return pid > 0 && ::kill(pid, SIGCONT) == 0; }
bool RedisServer::kill_process(pid_t pid) { return pid > 0 && ::kill(pid, SIGKILL) == 0; }

}  // namespace seqby::testing
