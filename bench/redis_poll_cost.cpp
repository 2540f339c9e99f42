// bench_redis_poll_cost: what one instance's periodic work costs against a real redis-server as
// the number of live partitions grows (10, 100, 1,000, 5,000; DESIGN.md section 9), measured
// in-process over one HiredisLink on a RealRuntime loop, the way the engine issues it:
// - DiscoverySteady: one discovery cycle of an instance that holds its fair share: read the
//   index C:__partitions__ (SMEMBERS, sorted), list live members (SMEMBERS + live_members
//   script), validate every key. No acquire attempt (the engine makes none at its share).
// - DiscoveryAcquireAll: the same plus one acquire attempt per partition, one after another as
//   Engine::discover_once makes them, every one refused (all held by another owner): the cycle
//   of an instance below its share when nothing is free (e.g. just after it joined).
// - IdlePollRound: one fenced read of new entries per held partition, all in flight at once (one
//   worker task per partition, pipelined on the connection), every one finding nothing.
// - IdlePollSequential: the same reads one after another (a round trip each).
// - HeartbeatRound: one renew per held partition, one after another, as Engine::heartbeat_loop.
// Per partition: the per_partition counter. srv_us: redis-server CPU per iteration (INFO cpu).
//
//   scripts/with-redis build/bench_redis_poll_cost [--benchmark_filter=...] [...]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/keys.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_redis_poll_cost";
constexpr const char* kGroup = "bench";
constexpr std::uint64_t kHolderTtlMs = 3600 * 1000;  // the holder's leases outlive the run
constexpr std::uint64_t kLeaseTtlMs = 3000;          // what a renew sets (as the engine would)

// N live partitions, each with its group created and its lease held by "holder".
struct Partitions {
  std::string category;
  std::vector<Lease> leases;
};

// Completes when `remaining` reaches 0; the last one to count down resumes the waiter.
struct Latch {
  std::size_t remaining = 0;
  std::coroutine_handle<> waiter;
};

struct LatchAwaiter {
  explicit LatchAwaiter(Latch* l) : latch(l) {}
  bool await_ready() const noexcept { return latch->remaining == 0; }
  void await_suspend(std::coroutine_handle<> h) noexcept { latch->waiter = h; }
  void await_resume() const noexcept {}
  Latch* latch;
};

class Context {
 public:
  explicit Context(const RedisConfig& config)
      : link_(runtime_, config),
        broker_(link_),
        admin_(config),
        prefix_("pollbench" + std::to_string(::getpid()) + "n") {}
  ~Context() { (void)unlink_matching(admin_, prefix_ + "*"); }

  RealRuntime& runtime() { return runtime_; }
  RedisBroker& broker() { return broker_; }
  BlockingRedis& admin() { return admin_; }

  // The N partitions, created on first use.
  const Partitions& partitions(std::size_t count) {
    auto it = cache_.find(count);
    if (it != cache_.end()) return *it->second;
    auto made = std::make_unique<Partitions>();
    made->category = prefix_ + std::to_string(count);
    std::vector<Command> setup;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < count; ++i) {
      char key[32];
      std::snprintf(key, sizeof(key), "p%05zu", i);
      keys.emplace_back(key);
      setup.push_back(Command{"SADD", partition_index_name(made->category), key});
      setup.push_back(Command{"XGROUP", "CREATE", partition_stream_name(made->category, key),
                              kGroup, "0", "MKSTREAM"});
    }
    (void)run_pipelined(runtime_, link_, setup, 64);
    for (const char* owner : {"holder", "other"}) {
      (void)runtime_.block_on(broker_.announce_member(made->category, kGroup, owner, kHolderTtlMs));
    }
    for (const auto& key : keys) {
      Result<std::optional<Lease>> got = runtime_.block_on(
          broker_.acquire(PartitionRef{made->category, key}, "", "holder", kHolderTtlMs));
      if (got.ok() && got.value().has_value()) made->leases.push_back(*got.value());
    }
    if (made->leases.size() != count) {
      std::fprintf(stderr, "%s: setup held %zu of %zu leases\n", kProgram, made->leases.size(),
                   count);
    }
    return *cache_.emplace(count, std::move(made)).first->second;
  }

 private:
  RealRuntime runtime_;
  HiredisLink link_;
  RedisBroker broker_;
  BlockingRedis admin_;
  std::string prefix_;
  std::map<std::size_t, std::unique_ptr<Partitions>> cache_;
};

// --- the cycles -------------------------------------------------------------------------

Task<std::size_t> discovery_steady(RedisBroker& broker, const std::string& category) {
  Result<std::vector<std::string>> index = co_await broker.partitions(category);
  std::size_t valid = 0;
  if (index.ok()) {
    for (const auto& key : index.value()) valid += validate_partition_key(key).ok() ? 1 : 0;
  }
  Result<std::vector<std::string>> members = co_await broker.live_members(category, kGroup);
  co_return valid + (members.ok() ? members.value().size() : 0);
}

Task<std::size_t> discovery_acquire_all(RedisBroker& broker, const std::string& category) {
  const std::size_t seen = co_await discovery_steady(broker, category);
  Result<std::vector<std::string>> index = co_await broker.partitions(category);
  std::size_t refused = 0;
  if (index.ok()) {
    for (const auto& key : index.value()) {
      const PartitionRef partition{category, key};
      Result<std::optional<Lease>> got =
          co_await broker.acquire(partition, "", "newcomer", kLeaseTtlMs);
      refused += got.ok() && !got.value().has_value() ? 1 : 0;
    }
  }
  co_return seen + refused;
}

Task<void> one_read(RedisBroker& broker, RealRuntime& runtime, const Lease& lease, Latch* latch,
                    std::size_t* empty) {
  Result<std::optional<StreamEntry>> read =
      co_await broker.fenced_read(lease, kGroup, ReadFrom::new_entries);
  if (read.ok() && !read.value().has_value()) ++*empty;
  if (--latch->remaining == 0 && latch->waiter) {
    const std::coroutine_handle<> waiter = latch->waiter;
    runtime.defer([waiter] { waiter.resume(); });
  }
}

Task<std::size_t> idle_poll_round(RedisBroker& broker, RealRuntime& runtime,
                                  const std::vector<Lease>& leases) {
  Latch latch;
  latch.remaining = leases.size();
  std::size_t empty = 0;
  for (const Lease& lease : leases) {
    runtime.spawn("worker", one_read(broker, runtime, lease, &latch, &empty));
  }
  co_await LatchAwaiter(&latch);
  co_return empty;
}

Task<std::size_t> idle_poll_sequential(RedisBroker& broker, const std::vector<Lease>& leases) {
  std::size_t empty = 0;
  for (const Lease& lease : leases) {
    Result<std::optional<StreamEntry>> read =
        co_await broker.fenced_read(lease, kGroup, ReadFrom::new_entries);
    if (read.ok() && !read.value().has_value()) ++empty;
  }
  co_return empty;
}

Task<std::size_t> heartbeat_round(RedisBroker& broker, const std::vector<Lease>& leases) {
  std::size_t renewed = 0;
  for (const Lease& lease : leases) {
    Status ok = co_await broker.renew(lease, kHolderTtlMs);
    renewed += ok.ok() ? 1 : 0;
  }
  co_return renewed;
}

enum class Cycle {
  discovery_steady,
  discovery_acquire_all,
  idle_round,
  idle_sequential,
  heartbeat
};

void run_cycle(benchmark::State& state, Context* context, Cycle cycle) {
  const std::size_t count = static_cast<std::size_t>(state.range(0));
  const Partitions& p = context->partitions(count);
  RedisBroker& broker = context->broker();
  RealRuntime& runtime = context->runtime();
  std::size_t expected = 0;
  switch (cycle) {
    case Cycle::discovery_steady:
      expected = count + 2;
      break;
    case Cycle::discovery_acquire_all:
      expected = 2 * count + 2;
      break;
    default:
      expected = count;
      break;
  }
  std::size_t wrong = 0;
  const std::uint64_t cpu_before = server_cpu_us(context->admin());
  for (auto _ : state) {
    std::size_t got = 0;
    switch (cycle) {
      case Cycle::discovery_steady:
        got = runtime.block_on(discovery_steady(broker, p.category));
        break;
      case Cycle::discovery_acquire_all:
        got = runtime.block_on(discovery_acquire_all(broker, p.category));
        break;
      case Cycle::idle_round:
        got = runtime.block_on(idle_poll_round(broker, runtime, p.leases));
        break;
      case Cycle::idle_sequential:
        got = runtime.block_on(idle_poll_sequential(broker, p.leases));
        break;
      case Cycle::heartbeat:
        got = runtime.block_on(heartbeat_round(broker, p.leases));
        break;
    }
    if (got != expected) ++wrong;
  }
  const std::uint64_t cpu_after = server_cpu_us(context->admin());
  state.counters["partitions"] = static_cast<double>(count);
  state.counters["per_partition"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["srv_us"] =
      static_cast<double>(cpu_after - cpu_before) / static_cast<double>(state.iterations());
  if (wrong > 0) state.SetLabel("UNEXPECTED replies in " + std::to_string(wrong) + " cycles");
}

void register_all(Context* context) {
  const struct {
    const char* name;
    Cycle cycle;
  } cycles[] = {
      {"BM_DiscoverySteady", Cycle::discovery_steady},
      {"BM_DiscoveryAcquireAll", Cycle::discovery_acquire_all},
      {"BM_IdlePollRound", Cycle::idle_round},
      {"BM_IdlePollSequential", Cycle::idle_sequential},
      {"BM_HeartbeatRound", Cycle::heartbeat},
  };
  for (const auto& c : cycles) {
    const Cycle cycle = c.cycle;
    benchmark::RegisterBenchmark(
        c.name, [context, cycle](benchmark::State& state) { run_cycle(state, context, cycle); })
        ->Arg(10)
        ->Arg(100)
        ->Arg(1000)
        ->Arg(5000)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) {
  using namespace seqby::redis::bench;
  std::optional<seqby::redis::RedisConfig> config = redis_config_from_env(kProgram);
  if (!config) return kExitNoServer;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("load_average", load_average());
  Context context(*config);
  register_all(&context);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
