// PrivateRedis: the redis-server a chaos run owns (and may restart: the server_restart nemesis).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "chaos_detail.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/free_port.h"

namespace seqby::scenarios::chaos_detail {
namespace {

constexpr int kPortAttemptsMax = 5;
constexpr std::uint64_t kReadyLimitMs = 15000;  // AOF loading included
constexpr std::uint64_t kPollMs = 20;
constexpr std::uint64_t kTermLimitMs = 5000;

std::string last_log_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::string last = "(no log)";
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace

PrivateRedis::~PrivateRedis() {
  if (process_.running()) process_.terminate(kTermLimitMs);  // SIGTERM by pid, SIGKILL at bound
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Status PrivateRedis::start() {
  std::string pattern = std::filesystem::temp_directory_path().string() + "/seqby-chaos.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status(Error{Errc::closed, "cannot create a temporary directory for redis-server"});
  }
  dir_ = pattern;
  Status last = Status(Error{Errc::closed, "no free loopback port"});
  for (int attempt = 0; attempt < kPortAttemptsMax; ++attempt) {
    port_ = redis::free_loopback_port();
    if (port_ == 0) continue;
    url_ = "redis://127.0.0.1:" + std::to_string(port_);
    last = spawn_and_wait();
    if (last.ok()) return last;
    kill();  // most likely the port was taken meanwhile: try another one
  }
  return last;
}

void PrivateRedis::kill() { process_.kill(); }

Status PrivateRedis::restart() {
  kill();
  return spawn_and_wait();
}

Status PrivateRedis::spawn_and_wait() {
  const char* program = std::getenv("SEQBY_REDIS_SERVER");
  if (program == nullptr || program[0] == '\0') program = "redis-server";
  const std::vector<std::string> args = {program,
                                         "--bind",
                                         "127.0.0.1",
                                         "--port",
                                         std::to_string(port_),
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "yes",
                                         "--appendfsync",
                                         "always",
                                         "--daemonize",
                                         "no",
                                         "--dir",
                                         dir_,
                                         "--logfile",
                                         dir_ + "/redis.log"};
  redis::SpawnOptions options;
  options.in = redis::Redirect::null();
  options.out = redis::Redirect::null();
  options.err = redis::Redirect::null();
  options.search_path = true;
  Result<redis::Subprocess> spawned = redis::Subprocess::spawn(args, options);
  if (!spawned.ok()) return Status(spawned.error());
  process_ = std::move(spawned).value();

  Result<redis::RedisConfig> config = redis::parse_redis_url(url_);
  SEQBY_CHECK(config.ok());
  config.value().connect_timeout_ms = 200;
  config.value().command_timeout_ms = 500;
  redis::BlockingRedis probe(config.value());
  for (std::uint64_t waited_ms = 0; waited_ms < kReadyLimitMs; waited_ms += kPollMs) {
    if (process_.try_reap()) {
      const int status = process_.wait(0);  // 127: it could not be executed
      return Status(Error{Errc::closed, std::string(program) + " exited " + std::to_string(status) +
                                            " at start on port " + std::to_string(port_) + ": " +
                                            last_log_line(dir_ + "/redis.log")});
    }
    Result<redis::Reply> pong = probe.execute({"PING"});
    if (pong.ok() && pong.value() == redis::Reply::status("PONG")) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  return Status(Error{Errc::timeout, std::string(program) + " on port " + std::to_string(port_) +
                                         " did not answer PING within " +
                                         std::to_string(kReadyLimitMs) + " ms"});
}

}  // namespace seqby::scenarios::chaos_detail
