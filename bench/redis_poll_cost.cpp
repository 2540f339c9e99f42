// bench_redis_poll_cost: what one instance's periodic work costs against a real redis-server as
// the number of live partitions grows (10, 100, 1,000, 5,000, 10,000, 20,000; DESIGN.md section 9,
// issue 14), measured in-process over one connection on a RealRuntime loop, the way the engine
// issues it:
// - DiscoverySteady: one discovery cycle of an instance that holds its fair share: read the
//   index C:__partitions__ (SMEMBERS, sorted), list live members (SMEMBERS + live_members
//   script), validate every key. No acquire attempt (the engine makes none at its share).
// - DiscoveryAcquireAll: the same plus an acquire attempt for every partition, every one refused
//   (all held by another owner): the cycle of an instance below its share when nothing is free
//   (e.g. just after it joined). The attempts go the way the engine makes them: one after another
//   (Broker::acquire) while the broker has no acquire_many, else one acquire_many (issue 14).
// - IdlePollRound: one fenced read of new entries per held partition, all in flight at once (one
//   worker task per partition, pipelined on the connection), every one finding nothing.
// - IdlePollSequential: the same reads one after another (a round trip each).
// - HeartbeatRound: one renew per held partition: one after another (Broker::renew) while the
//   broker has no renew_many, else one renew_many (issue 14), its commands made anew each cycle.
// - HeartbeatRoundKept: the same leases through renew_kept, the set passed again each cycle as
//   the engine's heartbeat passes its own from one round to the next, so the broker sends the
//   commands it made for the first: the round as the engine runs it.
// Which way a cycle went is its label. Per partition: the per_partition counter. srv_us:
// redis-server CPU per iteration (INFO cpu). At the end, a curve table (cost against partitions,
// markdown) of every cycle; it is not printed with --benchmark_format.
//
//   scripts/with-redis build/bench_redis_poll_cost [--benchmark_filter=...] [...]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstring>
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

// The broker calls of issue 14, when the broker has them (the engine then uses them).
template <typename B>
concept HasRenewMany = requires(B& broker, const std::vector<Lease>& leases, std::uint64_t ttl) {
  broker.renew_many(leases, ttl);
};
template <typename B>
concept HasAcquireMany = requires(B& broker, const std::vector<PartitionRef>& partitions,
                                  std::string_view text, std::uint64_t ttl, std::size_t want) {
  broker.acquire_many(partitions, text, text, ttl, want);
};

constexpr const char* kHeartbeatPath =
    HasRenewMany<RedisBroker> ? "renew_many" : "sequential renew";
constexpr const char* kAcquirePath =
    HasAcquireMany<RedisBroker> ? "acquire_many" : "sequential acquire";

// Takes the lease of keys[i] for "holder" into (*out)[i], for the next i not yet taken.
Task<void> acquire_some(RedisBroker& broker, const std::string& category,
                        const std::vector<std::string>& keys, std::size_t* next,
                        std::vector<std::optional<Lease>>* out, std::size_t* done) {
  while (*next < keys.size()) {
    const std::size_t i = (*next)++;
    const PartitionRef partition{category, keys[i]};  // not a temporary in co_await (g++ 12)
    Result<std::optional<Lease>> got =
        co_await broker.acquire(partition, "", "holder", kHolderTtlMs);
    if (got.ok()) (*out)[i] = got.value();
  }
  ++*done;
}

class Context {
 public:
  explicit Context(const RedisConfig& config)
      : connections_(runtime_, config),
        admin_(config),
        prefix_("pollbench" + std::to_string(::getpid()) + "n") {}
  ~Context() { (void)unlink_matching(admin_, prefix_ + "*"); }

  RealRuntime& runtime() { return runtime_; }
  RedisBroker& broker() { return *connections_.broker; }
  BlockingRedis& admin() { return admin_; }

  // The N partitions, created on first use (pipelined: 64 commands or acquires in flight).
  const Partitions& partitions(std::size_t count) {
    auto it = cache_.find(count);
    if (it != cache_.end()) return *it->second;
    const std::uint64_t setup_start_us = steady_now_us();
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
    (void)run_pipelined(runtime_, connections_.link, setup, 64);
    for (const char* owner : {"holder", "other"}) {
      (void)runtime_.block_on(
          broker().announce_member(made->category, kGroup, owner, kHolderTtlMs));
    }
    std::vector<std::optional<Lease>> got(keys.size());
    std::size_t next = 0;
    std::size_t done = 0;
    constexpr std::size_t kWindow = 64;
    for (std::size_t i = 0; i < kWindow; ++i) {
      runtime_.spawn("acquire", acquire_some(broker(), made->category, keys, &next, &got, &done));
    }
    runtime_.block_on(detail::wait_count(runtime_, &done, kWindow));
    for (auto& lease : got) {
      if (lease.has_value()) made->leases.push_back(*lease);
    }
    if (made->leases.size() != count) {
      std::fprintf(stderr, "%s: setup held %zu of %zu leases\n", kProgram, made->leases.size(),
                   count);
    }
    std::fprintf(stderr, "%s: set up %zu partitions in %.2f s\n", kProgram, count,
                 (steady_now_us() - setup_start_us) / 1e6);
    return *cache_.emplace(count, std::move(made)).first->second;
  }

 private:
  RealRuntime runtime_;
  InstanceBroker connections_;
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

template <typename B>
Task<std::size_t> discovery_acquire_all(B& broker, const std::string& category) {
  const std::size_t seen = co_await discovery_steady(broker, category);
  Result<std::vector<std::string>> index = co_await broker.partitions(category);
  std::size_t refused = 0;
  if (!index.ok()) co_return seen;
  if constexpr (HasAcquireMany<B>) {
    // after issue 14: discovery tries the partitions it wants in one acquire_many (wanting all
    // of them: none is granted here). If the engine splits the attempts into batches, mirror it.
    std::vector<PartitionRef> partitions;
    partitions.reserve(index.value().size());
    for (const auto& key : index.value()) partitions.push_back(PartitionRef{category, key});
    auto got =
        co_await broker.acquire_many(partitions, "", "newcomer", kLeaseTtlMs, partitions.size());
    if (got.ok()) {
      for (const auto& lease : got.value()) refused += lease.has_value() ? 0 : 1;
    }
  } else {
    // Today's Engine::discover_once: one attempt after another.
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

template <typename B>
Task<std::size_t> heartbeat_round(B& broker, const std::vector<Lease>& leases) {
  std::size_t renewed = 0;
  if constexpr (HasRenewMany<B>) {
    // after issue 14: the heartbeat renews every held lease in one renew_many (the broker
    // batches). If the engine's heartbeat splits the leases into batches itself, mirror it here.
    const std::vector<Status> result = co_await broker.renew_many(leases, kHolderTtlMs);
    for (const Status& one : result) renewed += one.ok() ? 1 : 0;
  } else {
    // Today's Engine heartbeat: one renew after another.
    for (const Lease& lease : leases) {
      Status ok = co_await broker.renew(lease, kHolderTtlMs);
      renewed += ok.ok() ? 1 : 0;
    }
  }
  co_return renewed;
}

// The heartbeat's round as the engine makes it (Heartbeat::renew_all): renew_kept of a set it
// passes again from one round to the next.
Task<std::size_t> heartbeat_round_kept(RedisBroker& broker,
                                       const std::shared_ptr<const std::vector<Lease>>& leases) {
  const std::vector<Status> result = co_await broker.renew_kept(leases, kHolderTtlMs);
  std::size_t renewed = 0;
  for (const Status& one : result) renewed += one.ok() ? 1 : 0;
  co_return renewed;
}

enum class Cycle {
  discovery_steady,
  discovery_acquire_all,
  idle_round,
  idle_sequential,
  heartbeat,
  heartbeat_kept
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
  const auto kept = cycle == Cycle::heartbeat_kept
                        ? std::make_shared<const std::vector<Lease>>(p.leases)
                        : std::shared_ptr<const std::vector<Lease>>();
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
      case Cycle::heartbeat_kept:
        got = runtime.block_on(heartbeat_round_kept(broker, kept));
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
  std::string label = cycle == Cycle::heartbeat               ? kHeartbeatPath
                      : cycle == Cycle::heartbeat_kept        ? "renew_kept"
                      : cycle == Cycle::discovery_acquire_all ? kAcquirePath
                                                              : "";
  if (wrong > 0) {
    label += (label.empty() ? "" : "; ") + std::string("UNEXPECTED replies in ") +
             std::to_string(wrong) + " cycles";
  }
  if (!label.empty()) state.SetLabel(label);
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
      {"BM_HeartbeatRoundKept", Cycle::heartbeat_kept},
  };
  for (const auto& c : cycles) {
    const Cycle cycle = c.cycle;
    benchmark::RegisterBenchmark(
        c.name, [context, cycle](benchmark::State& state) { run_cycle(state, context, cycle); })
        ->Arg(10)
        ->Arg(100)
        ->Arg(1000)
        ->Arg(5000)
        ->Arg(10000)
        ->Arg(20000)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

// The console output, and every run kept for a curve table at the end: per cycle, the real time
// per cycle and per partition and the server's CPU per cycle, against N.
class CurveReporter final : public benchmark::ConsoleReporter {
 public:
  explicit CurveReporter(OutputOptions options) : benchmark::ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      // One figure per (cycle, N): the run itself, or the median when there are repetitions.
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      if (run.run_type == Run::RT_Iteration && run.repetitions > 1) continue;
      const std::string name = run.benchmark_name();
      const std::string cycle = name.substr(0, name.find('/'));
      auto partitions = run.counters.find("partitions");
      auto server = run.counters.find("srv_us");
      if (partitions == run.counters.end() || run.error_occurred) continue;
      if (curves_.find(cycle) == curves_.end()) order_.push_back(cycle);
      Point& point = curves_[cycle][static_cast<std::size_t>(partitions->second.value)];
      point.real_us = run.GetAdjustedRealTime();  // registered in microseconds
      point.server_us = server == run.counters.end() ? 0 : server->second.value;
      if (labels_[cycle].empty()) labels_[cycle] = run.report_label;
    }
    benchmark::ConsoleReporter::ReportRuns(runs);
  }

  // The curve table (markdown), one row per cycle and figure, one column per N.
  void print_curves(const std::string& load) const {
    std::vector<std::size_t> columns;
    for (const auto& [cycle, points] : curves_) {
      for (const auto& [n, point] : points) columns.push_back(n);
    }
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    if (columns.empty()) return;
    std::printf("\n# curve: cost against partitions (real time; load average at the end: %s)\n",
                load.c_str());
    std::printf("| cycle |");
    for (const std::size_t n : columns) std::printf(" N = %zu |", n);
    std::printf("\n|---|");
    for (std::size_t i = 0; i < columns.size(); ++i) std::printf("---|");
    std::printf("\n");
    const auto row = [&](const std::string& title, const std::map<std::size_t, Point>& points,
                         int what) {
      std::printf("| %s |", title.c_str());
      for (const std::size_t n : columns) {
        auto it = points.find(n);
        if (it == points.end()) {
          std::printf(" - |");
          continue;
        }
        const Point& p = it->second;
        if (what == 0) std::printf(" %s |", duration(p.real_us).c_str());
        if (what == 1) std::printf(" %.1f us |", p.real_us / static_cast<double>(n));
        if (what == 2) std::printf(" %s |", duration(p.server_us).c_str());
      }
      std::printf("\n");
    };
    for (const std::string& cycle : order_) {
      const std::map<std::size_t, Point>& points = curves_.at(cycle);
      const std::string& label = labels_.at(cycle);
      const std::string title = cycle.substr(std::strlen("BM_")) +
                                (label.empty() ? "" : " (" + label + ")") + ", per cycle";
      row(title, points, 0);
      row("per partition", points, 1);
      row("server CPU per cycle", points, 2);
    }
    std::fflush(stdout);
  }

 private:
  struct Point {
    double real_us = 0;
    double server_us = 0;
  };

  static std::string duration(double us) {
    char text[32];
    if (us >= 100000) {
      std::snprintf(text, sizeof(text), "%.0f ms", us / 1000);
    } else if (us >= 1000) {
      std::snprintf(text, sizeof(text), "%.1f ms", us / 1000);
    } else {
      std::snprintf(text, sizeof(text), "%.2f ms", us / 1000);
    }
    return text;
  }

  std::map<std::string, std::map<std::size_t, Point>> curves_;
  std::map<std::string, std::string> labels_;
  std::vector<std::string> order_;  // the cycles in the order they ran
};

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) {
  using namespace seqby::redis::bench;
  std::optional<seqby::redis::RedisConfig> config = redis_config_from_env(kProgram);
  if (!config) return kExitNoServer;
  bool format_given = false;
  for (int i = 1; i < argc; ++i) {
    format_given = format_given || std::strncmp(argv[i], "--benchmark_format", 18) == 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::AddCustomContext("load_average", load_average());
  benchmark::AddCustomContext("renew", kHeartbeatPath);
  benchmark::AddCustomContext("acquire", kAcquirePath);
  Context context(*config);
  register_all(&context);
  if (format_given) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    CurveReporter reporter(::isatty(STDOUT_FILENO) ? CurveReporter::OO_Color
                                                   : CurveReporter::OO_None);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    reporter.print_curves(load_average());
  }
  benchmark::Shutdown();
  return 0;
}
