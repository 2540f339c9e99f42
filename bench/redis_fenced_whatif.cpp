// bench_redis_fenced_whatif: what fewer round trips per event would buy the fenced engine, measured
// without changing it. The same workload as bench_redis_throughput (two instances, each on its
// own thread, RealRuntime and HiredisLink, 64 pre-published partitions split between them, one
// event in flight per partition, the effect committed through the fenced sink) runs as a bare
// per-partition loop over RedisBroker, in four shapes:
// - engine:   the Engine itself with the trivial handler (as in bench_redis_throughput);
// - 4 scripts: fenced_read, check_lease, fenced_commit, fenced_ack (the engine's steps before it
//   dropped check_lease, no Engine);
// - 3 scripts: the same without check_lease (the read has just checked the lease);
// - 2 scripts: fenced_commit, then one script that acks this event and reads the next, fenced;
// - 1 script: one fenced script per event that commits this event's effect (as fenced_commit
//   does), acks it and reads the next: issue 14's "commit, ack and next read in one script".
// The bare loops record no history and handle no failure: they bound what the engine could reach
// with that many round trips. Prints a table; asserts nothing.
//
//   scripts/with-redis build/bench_redis_fenced_whatif [--repetitions 3] [--partitions 64]
//       [--events-per-partition 200]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_redis_fenced_whatif";
constexpr const char* kUsage =
    "usage: scripts/with-redis build/bench_redis_fenced_whatif [--repetitions 3] [--partitions "
    "64]\n"
    "           [--events-per-partition 200]\n";
constexpr const char* kGroup = "bench";
constexpr std::uint64_t kLeaseTtlMs = 60000;  // the bare loops hold leases without a heartbeat

// The end of both bare-loop scripts: read the next new entry of KEYS[2] for consumer ARGV[1] of
// group ARGV[2]; {id, data}, or false when there is none.
constexpr const char* kReadNextLua = R"lua(
local reply = redis.call('XREADGROUP', 'GROUP', ARGV[2], ARGV[1], 'COUNT', 1,
                         'STREAMS', KEYS[2], '>')
if not reply or not reply[1] or #reply[1][2] == 0 then
  return false
end
local entry = reply[1][2][1]
local data = ''
for i = 1, #entry[2], 2 do
  if entry[2][i] == 'data' then data = entry[2][i + 1] end
end
return {entry[1], data}
)lua";

// Fenced: acknowledges ARGV[3] (unless "") and reads the next new entry for consumer ARGV[1].
// KEYS[1] = lease key, KEYS[2] = C:K; ARGV[1] = token O:N, ARGV[2] = group, ARGV[3] = id or "".
// Returns {id, data} or nil (kReadNextLua ends it); FENCED when the lease is not ours.
constexpr const char* kAckAndReadScript = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease not held by ' .. ARGV[1])
end
if ARGV[3] ~= '' then
  redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
end
)lua";

// Fenced: commits seq ARGV[4] (effect ARGV[5]) for entry ARGV[3] as fenced_commit does (only
// last + 1 accepted), acknowledges it, then reads the next new entry. ARGV[3] = "" on the first
// call: nothing committed or acknowledged. KEYS[1] = lease key, KEYS[2] = C:K, KEYS[3] = sink,
// KEYS[4] = effects; ARGV[1] = token O:N, ARGV[2] = group. Returns {id, data} or nil; FENCED;
// OUT_OF_ORDER when the commit is not last + 1.
constexpr const char* kCommitAckReadScript = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease not held by ' .. ARGV[1])
end
if ARGV[3] ~= '' then
  local last = tonumber(redis.call('HGET', KEYS[3], 'last_seq') or '0')
  if tonumber(ARGV[4]) ~= last + 1 then
    return redis.error_reply('OUT_OF_ORDER last=' .. last)
  end
  redis.call('HSET', KEYS[3], 'last_seq', ARGV[4], 'last_token', ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[4], ARGV[5])
  redis.call('XACK', KEYS[2], ARGV[2], ARGV[3])
end
)lua";

enum class Shape : std::uint8_t { engine, four, three, two, one };

constexpr std::size_t kShapes = 5;

const char* shape_name(Shape shape) {
  switch (shape) {
    case Shape::engine:
      return "engine (2 scripts)";
    case Shape::four:
      return "bare loop, 4 scripts";
    case Shape::three:
      return "bare loop, 3 scripts";
    case Shape::two:
      return "bare loop, 2 scripts";
    case Shape::one:
      return "bare loop, 1 script";
  }
  return "?";
}

struct Options {
  std::uint32_t partitions = 64;
  std::uint32_t events_per_partition = 200;
  std::uint32_t repetitions = 3;
};

// Commits the event's seq through the fenced sink; nothing else (as in bench_redis_throughput).
class TrivialHandler final : public Handler {
 public:
  explicit TrivialHandler(std::atomic<std::uint64_t>* committed) : committed_(committed) {}

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    const std::int64_t seq = seq_of(event.data);
    Result<CommitReply> reply = co_await context.commit(seq, event.id);
    if (!reply.ok() || reply.value().outcome != CommitOutcome::accepted) {
      co_return HandlerResult::failed("commit not accepted");
    }
    committed_->fetch_add(1, std::memory_order_relaxed);
    co_return HandlerResult::success();
  }

 private:
  std::atomic<std::uint64_t>* committed_;
};

struct Shared {
  std::atomic<std::uint64_t> committed{0};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  std::atomic<std::uint32_t> ready{0};
};

// One partition's loop until its stream has nothing new. Stops at the first failure.
struct Shas {
  std::string ack_read;
  std::string commit_ack_read;
};

// One partition's loop of the 1-script shape: every call commits and acks the entry before and
// reads the next; the last call commits the last entry and finds nothing new.
Task<void> one_script_partition(RedisLink& link, Lease lease, std::string sha, Shared* shared,
                                std::size_t* finished) {
  const std::string sink = sink_key_name(lease.partition, kGroup);
  const std::string effects = effects_hash_name(lease.partition, kGroup);
  std::string previous_id;
  std::int64_t previous_seq = 0;
  for (std::uint32_t step = 0; step < (1u << 30); ++step) {
    Command command{
        "EVALSHA", sha,           "4",    lease.key(), lease.partition.stream(),     sink,
        effects,   lease.token(), kGroup, previous_id, std::to_string(previous_seq), previous_id};
    Result<Reply> reply = co_await link.execute(std::move(command));
    if (!reply.ok() || reply.value().is_error()) {
      shared->failures.fetch_add(1);
      break;
    }
    if (!previous_id.empty()) shared->committed.fetch_add(1, std::memory_order_relaxed);
    if (reply.value().kind != Reply::Kind::array) break;  // nothing new: done
    previous_id = reply.value().elements[0].str;
    previous_seq = seq_of(reply.value().elements[1].str);
  }
  ++*finished;
}

Task<void> bare_partition(RedisLink& link, RedisBroker& broker, Lease lease, Shape shape,
                          std::string ack_read_sha, Shared* shared, std::size_t* finished) {
  std::string previous_id;
  for (std::uint32_t step = 0; step < (1u << 30); ++step) {
    std::string id;
    std::string data;
    if (shape == Shape::two) {
      Command command{
          "EVALSHA",     ack_read_sha, "2",        lease.key(), lease.partition.stream(),
          lease.token(), kGroup,       previous_id};
      Result<Reply> reply = co_await link.execute(std::move(command));
      if (!reply.ok() || reply.value().is_error()) {
        shared->failures.fetch_add(1);
        break;
      }
      if (reply.value().kind != Reply::Kind::array) break;  // nothing new: done
      id = reply.value().elements[0].str;
      data = reply.value().elements[1].str;
    } else {
      Result<std::optional<StreamEntry>> read =
          co_await broker.fenced_read(lease, kGroup, ReadFrom::new_entries);
      if (!read.ok()) {
        shared->failures.fetch_add(1);
        break;
      }
      if (!read.value().has_value()) break;
      id = read.value()->id;
      data = read.value()->data;
      if (shape == Shape::four) {
        Status held = co_await broker.check_lease(lease);
        if (!held.ok()) {
          shared->failures.fetch_add(1);
          break;
        }
      }
    }
    const std::int64_t seq = seq_of(data);
    Result<CommitReply> committed = co_await broker.fenced_commit(lease, kGroup, seq, id);
    if (!committed.ok() || committed.value().outcome != CommitOutcome::accepted) {
      shared->failures.fetch_add(1);
      break;
    }
    shared->committed.fetch_add(1, std::memory_order_relaxed);
    if (shape == Shape::two) {
      previous_id = id;
      continue;
    }
    Status acked = co_await broker.fenced_ack(lease, kGroup, id);
    if (!acked.ok()) {
      shared->failures.fetch_add(1);
      break;
    }
  }
  ++*finished;
}

Task<void> wait_flag(RealRuntime& runtime, const std::atomic<bool>& flag) {
  while (!flag.load()) co_await runtime.sleep_ms(1);
}

struct InstanceFigures {
  std::uint64_t cpu_us = 0;
  std::uint64_t commands = 0;
};

void run_instance(const RedisConfig& config, Shape shape, std::vector<Lease> leases,
                  EngineOptions options, const Shas& shas, Shared* shared, InstanceFigures* out) {
  RealRuntimeOptions runtime_options;
  runtime_options.worker_count = 1;
  RealRuntime runtime(runtime_options);
  HiredisLink link(runtime, config);
  RedisBroker broker(link);
  NullHistorySink history;
  TrivialHandler handler(&shared->committed);
  Engine engine(runtime, broker, history, handler, options);
  Command ping{"PING"};
  (void)runtime.block_on(link.execute(ping));
  // The broker loads each script on its first use: do it before the clock starts.
  if (!leases.empty()) {
    (void)runtime.block_on(broker.check_lease(leases[0]));
    (void)runtime.block_on(broker.fenced_ack(leases[0], kGroup, "0-1"));
    (void)runtime.block_on(broker.fenced_read(leases[0], kGroup, ReadFrom::pending));
    (void)runtime.block_on(broker.fenced_commit(leases[0], kGroup, 0, ""));  // a no-op duplicate
  }
  shared->ready.fetch_add(1);
  while (!shared->go.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const std::uint64_t cpu_start_us = thread_cpu_us();
  std::size_t finished = 0;
  if (shape == Shape::engine) {
    engine.start();
  } else if (shape == Shape::one) {
    for (const Lease& lease : leases) {
      runtime.spawn("worker",
                    one_script_partition(link, lease, shas.commit_ack_read, shared, &finished));
    }
  } else {
    for (const Lease& lease : leases) {
      runtime.spawn("worker",
                    bare_partition(link, broker, lease, shape, shas.ack_read, shared, &finished));
    }
  }
  runtime.block_on(wait_flag(runtime, shared->done));
  out->cpu_us = thread_cpu_us() - cpu_start_us;
  if (shape == Shape::engine) runtime.block_on(engine.stop());
  out->commands = link.stats().commands_sent;
}

struct Figures {
  double rate = 0;
  double client_us = 0;  // per event, both instance threads
  double server_us = 0;  // per event
  double commands = 0;   // per event, sent by the clients
  double calls = 0;      // per event, run by the server (inside scripts too)
  std::uint64_t failures = 0;
  bool complete = false;
};

Figures run_shape(const RedisConfig& config, const Options& o, const std::string& prefix,
                  Shape shape) {
  const std::string category = prefix + "c" + std::to_string(static_cast<int>(shape));
  const std::uint64_t total = std::uint64_t{o.partitions} * o.events_per_partition;
  const std::string owners[2] = {prefix + "a", prefix + "b"};

  RealRuntime setup_runtime;
  HiredisLink setup_link(setup_runtime, config);
  RedisBroker setup_broker(setup_link);
  std::size_t errors = 0;
  std::size_t published = 0;
  for (std::uint32_t p = 0; p < o.partitions; ++p) {
    setup_runtime.spawn("publish",
                        publish_partition(setup_broker, PartitionRef{category, partition_key(p)},
                                          o.events_per_partition, &errors, &published));
  }
  setup_runtime.block_on(detail::wait_count(setup_runtime, &published, o.partitions));
  Shas shas;
  Command load{"SCRIPT", "LOAD", std::string(kAckAndReadScript) + kReadNextLua};
  Result<Reply> loaded = setup_runtime.block_on(setup_link.execute(load));
  shas.ack_read = loaded.ok() ? loaded.value().str : "";
  Command load_one{"SCRIPT", "LOAD", std::string(kCommitAckReadScript) + kReadNextLua};
  Result<Reply> loaded_one = setup_runtime.block_on(setup_link.execute(load_one));
  shas.commit_ack_read = loaded_one.ok() ? loaded_one.value().str : "";

  std::vector<Lease> leases[2];
  EngineOptions options[2];
  for (int i = 0; i < 2; ++i) {
    options[i].owner_id = owners[i];
    options[i].category = category;
    options[i].group = kGroup;
    options[i].poll_interval_ms = 1;
    options[i].discovery_interval_ms = 100;
    (void)setup_runtime.block_on(
        setup_broker.announce_member(category, kGroup, owners[i], options[i].lease_ttl_ms));
  }
  if (shape != Shape::engine) {
    for (std::uint32_t p = 0; p < o.partitions; ++p) {
      const PartitionRef partition{category, partition_key(p)};
      (void)setup_runtime.block_on(setup_broker.ensure_group(partition, kGroup));
      Result<std::optional<Lease>> got =
          setup_runtime.block_on(setup_broker.acquire(partition, "", owners[p % 2], kLeaseTtlMs));
      if (got.ok() && got.value().has_value()) leases[p % 2].push_back(*got.value());
    }
  }

  BlockingRedis admin(config);
  Shared shared;
  InstanceFigures instance[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back(run_instance, std::cref(config), shape, leases[i], options[i],
                         std::cref(shas), &shared, &instance[i]);
  }
  while (shared.ready.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const Window window = measure_window(admin, shared.go, [&] {
    return shared.committed.load() >= total || shared.failures.load() != 0;
  });
  const std::uint64_t elapsed_us = window.elapsed_us;
  const std::uint64_t server_us = window.server_cpu_us;
  const CommandStats& stats = window.commands;
  shared.done.store(true);
  for (auto& thread : threads) thread.join();
  (void)unlink_matching(admin, category + "*");

  Figures out;
  const double events = static_cast<double>(shared.committed.load());
  out.complete = shared.committed.load() == total;
  out.failures = shared.failures.load() + errors;
  if (events == 0) return out;
  out.rate = events * 1e6 / static_cast<double>(elapsed_us);
  out.client_us = static_cast<double>(instance[0].cpu_us + instance[1].cpu_us) / events;
  out.server_us = static_cast<double>(server_us) / events;
  out.commands = static_cast<double>(instance[0].commands + instance[1].commands) / events;
  out.calls = static_cast<double>(stats.calls) / events;
  return out;
}

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    char* end = nullptr;
    const unsigned long long value = i + 1 < argc ? std::strtoull(argv[i + 1], &end, 10) : 0;
    if (i + 1 >= argc || end == argv[i + 1] || *end != '\0' || value == 0) {
      std::fprintf(stderr, "%s: %s needs a positive number\n", kProgram, flag.c_str());
      return false;
    }
    ++i;
    if (flag == "--partitions" && value >= 2) {
      o->partitions = static_cast<std::uint32_t>(value);
    } else if (flag == "--events-per-partition") {
      o->events_per_partition = static_cast<std::uint32_t>(value);
    } else if (flag == "--repetitions") {
      o->repetitions = static_cast<std::uint32_t>(value);
    } else {
      std::fprintf(stderr, "%s: unknown option or bad value: %s\n", kProgram, flag.c_str());
      return false;
    }
  }
  return true;
}

int run(int argc, char** argv) {
  Options o;
  if (const std::optional<int> stop = read_command_line(argc, argv, kUsage, &o, parse_options)) {
    return *stop;
  }
  std::optional<RedisConfig> config = redis_config_from_env(kProgram);
  if (!config) return kExitNoServer;
  std::printf(
      "# %s: %u partitions x %u events, 2 instances (threads), one event in flight per "
      "partition, trivial fenced commit\n",
      kProgram, o.partitions, o.events_per_partition);
  std::printf(
      "# per event: cmds sent by the clients, calls run by the server (inside scripts "
      "too), client CPU (both threads), server CPU\n");
  std::printf("%3s  %-22s %9s %7s %7s %8s %8s  %-15s %s\n", "rep", "shape", "events/s", "cmds",
              "calls", "cli_us", "srv_us", "load avg", "note");
  const Shape shapes[kShapes] = {Shape::engine, Shape::four, Shape::three, Shape::two, Shape::one};
  std::vector<double> rates[kShapes];
  std::vector<double> cpu[kShapes];
  for (std::uint32_t rep = 1; rep <= o.repetitions; ++rep) {
    for (std::size_t s = 0; s < kShapes; ++s) {
      const std::string prefix = "whatif" + std::to_string(::getpid()) + "r" + std::to_string(rep);
      const std::string load = load_average();
      const Figures f = run_shape(*config, o, prefix, shapes[s]);
      rates[s].push_back(f.rate);
      cpu[s].push_back(f.client_us + f.server_us);
      std::printf("%3u  %-22s %9.0f %7.2f %7.2f %8.1f %8.1f  %-15s %s%s\n", rep,
                  shape_name(shapes[s]), f.rate, f.commands, f.calls, f.client_us, f.server_us,
                  load.c_str(), f.complete ? "" : "INCOMPLETE ",
                  f.failures > 0 ? ("failures " + std::to_string(f.failures)).c_str() : "");
      std::fflush(stdout);
    }
  }
  const auto median = [](std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values.empty() ? 0.0 : values[values.size() / 2];
  };
  std::printf("\nmedian over %u repetitions\n", o.repetitions);
  for (std::size_t s = 0; s < kShapes; ++s) {
    std::printf(
        "  %-22s %9.0f events/s  %6.1f us CPU per event (client + server)  %.2fx the "
        "engine's rate\n",
        shape_name(shapes[s]), median(rates[s]), median(cpu[s]),
        median(rates[0]) > 0 ? median(rates[s]) / median(rates[0]) : 0.0);
  }
  std::printf("  load average at the end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) { return seqby::redis::bench::run(argc, argv); }
