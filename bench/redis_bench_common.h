// Helpers shared by the real-Redis benchmarks (bench/redis_*.cpp, bench/failover_*.cpp): the
// server from SEQBY_TEST_REDIS_URL (or a usage message and exit status 2), the machine's load
// average, steady and per-thread CPU clocks, the benchmark events ({"id": K, "seq": n}) and their
// publishing, pipelined setup commands over one HiredisLink, and the server's CPU and command
// counters from INFO. Nothing here asserts a figure; it measures.
#pragma once

#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/core/json_flat.h"
#include "seqby/core/naming.h"
#include "seqby/core/task.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis::bench {

inline constexpr int kExitNoServer = 2;

// The server of SEQBY_TEST_REDIS_URL, or nullopt after printing how to run `program`.
inline std::optional<RedisConfig> redis_config_from_env(const char* program) {
  const char* url = std::getenv("SEQBY_TEST_REDIS_URL");
  if (url == nullptr || url[0] == '\0') {
    std::fprintf(stderr,
                 "%s: needs a redis-server: set SEQBY_TEST_REDIS_URL=redis://HOST:PORT, or run it "
                 "under a private server with\n  scripts/with-redis %s [ARGS]\n(make bench runs "
                 "every benchmark that way)\n",
                 program, program);
    return std::nullopt;
  }
  Result<RedisConfig> config = parse_redis_url(url);
  if (!config.ok()) {
    std::fprintf(stderr, "%s: SEQBY_TEST_REDIS_URL: %s\n", program, config.error().message.c_str());
    return std::nullopt;
  }
  return config.value();
}

// "1.23 0.98 0.70": the 1, 5 and 15 minute load averages of the machine.
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

inline std::uint64_t steady_now_us() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The same clock as SteadyClock (and so as the time_ms of a worker's history records: every
// process of the machine reads one CLOCK_MONOTONIC).
inline std::uint64_t steady_now_ms() { return steady_now_us() / 1000; }

// CPU time of the calling thread, in microseconds.
inline std::uint64_t thread_cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

// --- the benchmark events: {"id": K, "seq": n} in partition K -----------------------------

inline std::string event_data(const std::string& key, std::uint32_t seq) {
  return "{\"id\":\"" + key + "\",\"seq\":" + std::to_string(seq) + "}";
}

inline std::string partition_key(std::uint32_t index) {
  char name[32];
  std::snprintf(name, sizeof(name), "k%04u", index);
  return name;
}

// The event's per-key seq from its JSON data, or -1.
inline std::int64_t seq_of(std::string_view data) {
  Result<JsonObject> object = decode_json_object(data);
  if (!object.ok()) return -1;
  auto it = object.value().find("seq");
  if (it == object.value().end() || !std::holds_alternative<std::int64_t>(it->second)) return -1;
  return std::get<std::int64_t>(it->second);
}

// The event's partition key from its JSON data, or "".
inline std::string key_of(std::string_view data) {
  Result<JsonObject> object = decode_json_object(data);
  if (!object.ok()) return "";
  auto it = object.value().find("id");
  if (it == object.value().end() || !std::holds_alternative<std::string>(it->second)) return "";
  return std::get<std::string>(it->second);
}

// Publishes events 1..count of `partition` through the broker, one after another.
inline Task<void> publish_partition(RedisBroker& broker, PartitionRef partition,
                                    std::uint32_t count, std::size_t* errors, std::size_t* done) {
  for (std::uint32_t seq = 1; seq <= count; ++seq) {
    const std::string data = event_data(partition.key, seq);
    Result<std::string> id = co_await broker.publish(partition, "Ticked", data);
    if (!id.ok()) ++*errors;
  }
  ++*done;
}

namespace detail {

inline Task<void> drain_commands(RedisLink& link, const std::vector<Command>& commands,
                                 std::size_t* next, std::size_t* errors, std::size_t* done) {
  while (*next < commands.size()) {
    Command command = commands[(*next)++];
    Result<Reply> reply = co_await link.execute(std::move(command));
    if (!reply.ok() || reply.value().is_error()) ++*errors;
  }
  ++*done;
}

inline Task<void> wait_count(RealRuntime& runtime, const std::size_t* done, std::size_t target) {
  while (*done < target) co_await runtime.sleep_ms(1);
}

}  // namespace detail

// Runs `commands` over `link` with at most `window` in flight; returns how many failed or got
// an error reply. REQUIRES: no loop runs on `runtime`.
inline std::size_t run_pipelined(RealRuntime& runtime, RedisLink& link,
                                 const std::vector<Command>& commands, std::size_t window) {
  std::size_t next = 0;
  std::size_t errors = 0;
  std::size_t done = 0;
  for (std::size_t i = 0; i < window; ++i) {
    runtime.spawn("pipelined", detail::drain_commands(link, commands, &next, &errors, &done));
  }
  runtime.block_on(detail::wait_count(runtime, &done, window));
  return errors;
}

// The value of `field` in an INFO reply text ("" when absent).
inline std::string info_field(const std::string& info, std::string_view field) {
  const std::string needle = "\n" + std::string(field) + ":";
  std::size_t at = info.find(needle);
  if (at == std::string::npos) return "";
  at += needle.size();
  const std::size_t end = info.find_first_of("\r\n", at);
  return info.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The server process's CPU time (user + system) in microseconds, or 0 when unknown.
inline std::uint64_t server_cpu_us(BlockingRedis& redis) {
  Command command{"INFO", "cpu"};
  Result<Reply> reply = redis.execute(command);
  if (!reply.ok() || reply.value().kind != Reply::Kind::bulk) return 0;
  const std::string text = "\n" + reply.value().str;
  const double user_s = std::atof(info_field(text, "used_cpu_user").c_str());
  const double sys_s = std::atof(info_field(text, "used_cpu_sys").c_str());
  return static_cast<std::uint64_t>((user_s + sys_s) * 1e6);
}

// Command execution time inside the server (INFO commandstats), since the last CONFIG RESETSTAT.
// Commands a script runs are counted under their own names as well as inside EVALSHA's time.
struct CommandStats {
  std::uint64_t calls = 0;         // every command, those run inside scripts included
  std::uint64_t usec = 0;          // execution time of top-level commands (EVALSHA's includes
                                   // the commands its script ran)
  std::uint64_t script_calls = 0;  // EVALSHA and EVAL calls
};

inline CommandStats command_stats(BlockingRedis& redis) {
  CommandStats out;
  Command command{"INFO", "commandstats"};
  Result<Reply> reply = redis.execute(command);
  if (!reply.ok() || reply.value().kind != Reply::Kind::bulk) return out;
  const std::string& text = reply.value().str;
  std::uint64_t usec_all = 0;
  std::uint64_t usec_scripts = 0;
  std::size_t at = 0;
  while ((at = text.find("cmdstat_", at)) != std::string::npos) {
    const std::size_t colon = text.find(':', at);
    const std::string name = text.substr(at + 8, colon - at - 8);
    const std::size_t calls_at = text.find("calls=", colon);
    const std::size_t usec_at = text.find("usec=", colon);
    const std::uint64_t calls = std::strtoull(text.c_str() + calls_at + 6, nullptr, 10);
    const std::uint64_t usec = std::strtoull(text.c_str() + usec_at + 5, nullptr, 10);
    out.calls += calls;
    usec_all += usec;
    if (name == "evalsha" || name == "eval") {
      out.script_calls += calls;
      usec_scripts += usec;
    }
    at = colon;
  }
  // With scripts, the commands they ran are inside EVALSHA's time: count the scripts alone.
  out.usec = out.script_calls > 0 ? usec_scripts : usec_all;
  return out;
}

inline void reset_command_stats(BlockingRedis& redis) {
  Command command{"CONFIG", "RESETSTAT"};
  (void)redis.execute(command);
}

// A measured run that takes longer than this is cut (and reported incomplete).
inline constexpr std::uint64_t kRunWaitMaxUs = 300ull * 1000 * 1000;

// What the server did during one measured window.
struct Window {
  std::uint64_t elapsed_us = 0;
  std::uint64_t server_cpu_us = 0;
  CommandStats commands;
};

// One measured window, the same for every throughput program: resets the server's command
// counters, lets the workers loose through `go`, polls `finished()` every 200 us until it is true
// or kRunWaitMaxUs passed, then reads the elapsed time, the server's CPU and its counters.
template <typename Finished>
Window measure_window(BlockingRedis& admin, std::atomic<bool>& go, Finished finished) {
  Window out;
  reset_command_stats(admin);
  const std::uint64_t cpu_before = server_cpu_us(admin);
  const std::uint64_t start_us = steady_now_us();
  go.store(true);
  while (!finished() && steady_now_us() - start_us < kRunWaitMaxUs) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  out.elapsed_us = steady_now_us() - start_us;
  out.server_cpu_us = server_cpu_us(admin) - cpu_before;
  out.commands = command_stats(admin);
  return out;
}

// Deletes every key matching `pattern` (SCAN + UNLINK, bounded), so that a run leaves the
// server as it found it. Returns how many keys were unlinked.
inline std::uint64_t unlink_matching(BlockingRedis& redis, const std::string& pattern) {
  std::uint64_t unlinked = 0;
  std::string cursor = "0";
  for (int round = 0; round < 1000000; ++round) {
    Command scan{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
    Result<Reply> reply = redis.execute(scan);
    if (!reply.ok() || reply.value().kind != Reply::Kind::array ||
        reply.value().elements.size() != 2) {
      break;
    }
    const Reply& r = reply.value();
    Command unlink{"UNLINK"};
    for (const Reply& key : r.elements[1].elements) unlink.push_back(key.str);
    if (unlink.size() > 1) {
      unlinked += unlink.size() - 1;
      (void)redis.execute(unlink);
    }
    cursor = r.elements[0].str;
    if (cursor == "0") break;
  }
  return unlinked;
}

}  // namespace seqby::redis::bench
