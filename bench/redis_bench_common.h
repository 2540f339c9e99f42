// Helpers shared by the real-Redis benchmarks (bench/redis_*.cpp, bench/failover_*.cpp): the
// server from SEQBY_TEST_REDIS_URL (or a usage message and exit status 2), the machine's load
// average, steady and per-thread CPU clocks, the benchmark events ({"id": K, "seq": n}) and their
// publishing, pipelined setup commands over one HiredisLink, and the server's CPU and command
// counters from INFO. Nothing here asserts a figure; it measures.
#pragma once

#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/core/engine.h"
#include "seqby/core/history.h"
#include "seqby/core/json_flat.h"
#include "seqby/core/naming.h"
#include "seqby/core/task.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/hiredis_link.h"
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

// The malloc this program runs on (cmake's seqby_link_tcmalloc: tcmalloc_minimal, as the seqby
// command and so `seqby worker`, unless built with -DSEQBY_TCMALLOC=OFF), said in the header of
// the benches whose client figures it moves.
inline void print_malloc_line() {
#ifdef SEQBY_MALLOC_NAME
  std::printf("# malloc: %s, as the seqby command's (cmake -DSEQBY_TCMALLOC=ON|OFF)\n",
              SEQBY_MALLOC_NAME);
#endif
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
  // Each command's execution time ("get", "exec", ...; a transaction's EXEC holds the commands it
  // ran, and those are counted under their own names too).
  std::map<std::string, std::uint64_t> usec_by_command;
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
    out.usec_by_command[name] = usec;
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

// --- command lines ------------------------------------------------------------------------

inline bool parse_u64(const char* text, std::uint64_t* out) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-') return false;
  *out = v;
  return true;
}

// Whether the command line asks for help (--help or -h anywhere in it): then `usage` (the
// program's options, one text) is printed on stdout and the program exits 0 without a server.
// Every program also prints its usage on stderr under a bad argument's error (exit 2).
inline bool usage_asked(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      return true;
    }
  }
  return false;
}

// The command line before anything runs: 0 after --help (usage_asked), 2 after a bad argument
// (`parse` said what was wrong on stderr; the usage follows it there), nullopt to go on with `*o`
// filled. `parse` is bool(int argc, char** argv, Options*).
template <typename Options, typename Parse>
std::optional<int> read_command_line(int argc, char** argv, const char* usage, Options* o,
                                     Parse parse) {
  if (usage_asked(argc, argv, usage)) return 0;
  if (!parse(argc, argv, o)) {
    std::fputs(usage, stderr);
    return 2;
  }
  return std::nullopt;
}

// The `seqby` command next to the running program (the benchmarks and seqby share build/), or
// "seqby" (found on PATH) when /proc/self/exe cannot be read.
inline std::string seqby_next_to_this_program() {
  char path[PATH_MAX] = {};
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "seqby";
  const std::string self(path, static_cast<std::size_t>(n));
  return self.substr(0, self.rfind('/') + 1) + "seqby";
}

// "1000,10000" -> {1000, 10000}; false when an item is not a positive number.
inline bool parse_u64_list(const std::string& text, std::vector<std::uint64_t>* out) {
  out->clear();
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::uint64_t value = 0;
    if (!parse_u64(text.substr(at, comma - at).c_str(), &value) || value == 0) return false;
    out->push_back(value);
    at = comma + 1;
  }
  return !out->empty();
}

// --- one engine instance's connections: THE place that builds them -------------------------

// The links and broker of one engine instance, as `seqby worker` builds them: `link` (one
// pipelined connection, every fenced step), `leases` (the heartbeat's renew_many batches,
// pipelined on a connection of their own) and `wake_links` (one per wake channel the engine
// uses, made on first use: a HiredisLink connects on its first command). REQUIRES: built and
// destroyed on the runtime's loop thread or while no loop runs.
struct InstanceBroker {
  InstanceBroker(RealRuntime& runtime, const RedisConfig& config, RedisBrokerOptions options = {})
      : link(runtime, config),
        leases(runtime, config),
        wake_links(runtime, config),
        broker(std::make_unique<RedisBroker>(link, std::move(options), wake_links.source(),
                                             &leases)) {}

  // Commands every link sent. Loop thread only.
  std::uint64_t commands_sent() const {
    return link.stats().commands_sent + leases.stats().commands_sent + wake_links.commands_sent();
  }

  HiredisLink link;
  HiredisLink leases;
  HiredisWakeLinks wake_links;
  std::unique_ptr<RedisBroker> broker;
};

// --- idle partitions ------------------------------------------------------------------------

// Creates partitions partition_key(0..count-1) of `category` as a publisher and a subscribed
// group leave them once drained: the index entry and an empty stream with `group` at id 0.
// Pipelined (64 in flight). Returns how many commands failed. REQUIRES: no loop runs on `runtime`.
inline std::size_t create_idle_partitions(RealRuntime& runtime, RedisLink& link,
                                          const std::string& category, const std::string& group,
                                          std::uint64_t count) {
  std::vector<Command> setup;
  setup.reserve(2 * count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string key = partition_key(static_cast<std::uint32_t>(i));
    setup.push_back(Command{"SADD", partition_index_name(category), key});
    setup.push_back(
        Command{"XGROUP", "CREATE", partition_stream_name(category, key), group, "0", "MKSTREAM"});
  }
  return run_pipelined(runtime, link, setup, 64);
}

// --- the server's counters over a window ----------------------------------------------------

inline std::uint64_t info_u64(BlockingRedis& redis, const char* section, std::string_view field) {
  Command command{"INFO", section};
  Result<Reply> reply = redis.execute(command);
  if (!reply.ok() || reply.value().kind != Reply::Kind::bulk) return 0;
  return std::strtoull(info_field("\n" + reply.value().str, field).c_str(), nullptr, 10);
}

// What the server did since `begin()`: its CPU and the commands it ran, minus those this meter
// sends itself (counted once by `calibrate()`, before anything else talks to the server).
// Redis 7 counts the commands a script runs in total_commands_processed as well as the script
// call itself: `calls` is every command, `scripts` the EVALSHA/EVAL calls among them.
class ServerMeter {
 public:
  explicit ServerMeter(BlockingRedis& admin) : admin_(admin) {}

  // The meter's own commands between begin() and end(), with nobody else talking to the server.
  void calibrate() {
    begin();
    own_calls_ = 0;
    own_calls_ = end().calls;
  }

  void begin() {
    reset_command_stats(admin_);
    start_us_ = steady_now_us();
    cpu_start_us_ = server_cpu_us(admin_);
  }

  struct Reading {
    std::uint64_t elapsed_us = 0;
    std::uint64_t cpu_us = 0;     // redis-server user + system CPU
    std::uint64_t calls = 0;      // INFO stats total_commands_processed (inside scripts too)
    std::uint64_t scripts = 0;    // EVALSHA and EVAL calls (INFO commandstats)
    std::uint64_t script_us = 0;  // their execution time, the commands they ran included
    double cpu_percent() const { return elapsed_us == 0 ? 0 : 100.0 * cpu_us / elapsed_us; }
    // Milliseconds of script execution per second of the window.
    double script_ms_per_s() const { return elapsed_us == 0 ? 0 : script_us * 1e3 / elapsed_us; }
    double calls_per_s() const { return elapsed_us == 0 ? 0 : calls * 1e6 / elapsed_us; }
    double scripts_per_s() const { return elapsed_us == 0 ? 0 : scripts * 1e6 / elapsed_us; }
  };

  Reading end() {
    Reading out;
    out.cpu_us = server_cpu_us(admin_) - cpu_start_us_;
    out.elapsed_us = steady_now_us() - start_us_;
    const std::uint64_t calls = info_u64(admin_, "stats", "total_commands_processed");
    out.calls = calls > own_calls_ ? calls - own_calls_ : 0;
    const CommandStats stats = command_stats(admin_);
    out.scripts = stats.script_calls;
    out.script_us = stats.script_calls > 0 ? stats.usec : 0;
    return out;
  }

 private:
  BlockingRedis& admin_;
  std::uint64_t own_calls_ = 0;
  std::uint64_t start_us_ = 0;
  std::uint64_t cpu_start_us_ = 0;
};

// CPU (user + system) of this whole process, in microseconds.
inline std::uint64_t process_cpu_us() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto us = [](const timeval& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000 + static_cast<std::uint64_t>(t.tv_usec);
  };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

// --- one engine instance on a thread of its own ---------------------------------------------

// Counts an engine's lease steps (any thread may read the counters) and keeps the steady time of
// every `renew` record, from which heartbeat rounds are told apart. Everything else is dropped.
class StepCounter final : public HistorySink {
 public:
  void record(HistoryRecord record) override {
    switch (record.op) {
      case HistoryOp::acquire:
        acquires.fetch_add(1, std::memory_order_relaxed);
        break;
      case HistoryOp::lose:
        losses.fetch_add(1, std::memory_order_relaxed);
        break;
      case HistoryOp::renew: {
        renews.fetch_add(1, std::memory_order_relaxed);
        const std::lock_guard<std::mutex> lock(mutex_);
        renew_us_.push_back(steady_now_us());
        break;
      }
      default:
        break;
    }
  }

  // The renews of each heartbeat round seen after `since_us`: renew records closer than
  // `gap_us` to the previous one belong to its round.
  std::vector<std::uint64_t> renews_per_round(std::uint64_t since_us, std::uint64_t gap_us) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::uint64_t> out;
    std::uint64_t last = 0;
    for (const std::uint64_t t : renew_us_) {
      if (t < since_us) continue;
      if (out.empty() || t - last > gap_us) out.push_back(0);
      last = t;
      ++out.back();
    }
    return out;
  }

  std::atomic<std::uint64_t> acquires{0};
  std::atomic<std::uint64_t> losses{0};
  std::atomic<std::uint64_t> renews{0};

 private:
  mutable std::mutex mutex_;
  std::vector<std::uint64_t> renew_us_;
};

// A trivial handler: accepts every event, commits nothing.
class AcceptHandler final : public Handler {
 public:
  Task<HandlerResult> handle(const Event&, HandlerContext&) override {
    co_return HandlerResult::success();
  }
};

// One Engine (RealRuntime loop on its own thread, InstanceBroker, `handler`, a StepCounter) that
// the calling thread drives from outside: everything that touches the engine runs on its loop
// through post(), waited for at most a deadline. A deadline missed is a hung instance: the caller
// reports it and exits (nothing here waits without a bound).
class EngineThread {
 public:
  EngineThread(const RedisConfig& config, EngineOptions options, Handler& handler)
      : runtime_(runtime_options()),
        connections_(runtime_, config),
        engine_(runtime_, *connections_.broker, steps_, handler, std::move(options)),
        thread_([this] { runtime_.run(); }) {}
  ~EngineThread() {
    runtime_.stop();
    if (thread_.joinable()) thread_.join();
  }
  EngineThread(const EngineThread&) = delete;
  EngineThread& operator=(const EngineThread&) = delete;

  // Runs `fn` on the loop and returns its value, or nullopt when the loop did not run it within
  // `timeout_ms`.
  template <typename F>
  auto on_loop(F fn, std::uint64_t timeout_ms) -> std::optional<decltype(fn())> {
    using T = decltype(fn());
    auto promise = std::make_shared<std::promise<T>>();
    std::future<T> result = promise->get_future();
    runtime_.post([promise, fn = std::move(fn)]() mutable { promise->set_value(fn()); });
    if (result.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready) {
      return std::nullopt;
    }
    return result.get();
  }

  // Starts the engine on its loop; returns the steady time (us) at Engine::start().
  std::optional<std::uint64_t> start(std::uint64_t timeout_ms) {
    return on_loop(
        [this] {
          const std::uint64_t at = steady_now_us();
          engine_.start();
          return at;
        },
        timeout_ms);
  }

  std::optional<std::size_t> held(std::uint64_t timeout_ms) {
    return on_loop([this] { return engine_.held().size(); }, timeout_ms);
  }
  // Engine::heartbeat_rounds_ms, read on the loop.
  std::optional<std::vector<std::uint64_t>> heartbeat_rounds_ms(std::uint64_t timeout_ms) {
    return on_loop([this] { return engine_.heartbeat_rounds_ms(); }, timeout_ms);
  }

  // What the instance has done so far: commands its links sent and its loop thread's CPU.
  struct Snapshot {
    std::uint64_t commands_sent = 0;
    std::uint64_t loop_cpu_us = 0;
    std::uint64_t at_us = 0;
  };
  std::optional<Snapshot> snapshot(std::uint64_t timeout_ms) {
    return on_loop(
        [this] {
          return Snapshot{connections_.commands_sent(), thread_cpu_us(), steady_now_us()};
        },
        timeout_ms);
  }

  // Engine::stop() (workers release their leases, the instance leaves), then the loop ends.
  // False when that did not happen within `timeout_ms`.
  bool stop(std::uint64_t timeout_ms) {
    runtime_.post([this] { runtime_.spawn("bench stop", stop_engine()); });
    const std::uint64_t deadline = steady_now_us() + timeout_ms * 1000;
    while (!stopped_.load() && steady_now_us() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!stopped_.load()) return false;
    thread_.join();
    return true;
  }

  const StepCounter& steps() const { return steps_; }
  RedisBroker& broker() { return *connections_.broker; }

 private:
  static RealRuntimeOptions runtime_options() {
    RealRuntimeOptions options;
    options.worker_count = 1;  // the benchmark handlers never call run_blocking
    return options;
  }

  Task<void> stop_engine() {
    co_await engine_.stop();
    stopped_.store(true);
    runtime_.stop();
  }

  RealRuntime runtime_;
  InstanceBroker connections_;
  StepCounter steps_;
  Engine engine_;
  std::atomic<bool> stopped_{false};
  std::thread thread_;  // last: starts once everything else is built
};

// Percentile `p` (0..100) of `sorted` (nearest rank), 0 when empty.
inline double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  std::size_t rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size()));
  if (rank >= sorted.size()) rank = sorted.size() - 1;
  return sorted[rank];
}

}  // namespace seqby::redis::bench
