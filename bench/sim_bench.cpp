// sim_bench: the simulator's performance figures (DESIGN.md section 9): simulated Redis commands
// per second (raw commands and the engine's own Lua scripts through EVALSHA), default seeds per
// second with simulated time over CPU time, and the peak memory of one seed in a fresh process.
// Rates are per CPU second of the one benchmark thread (Google Benchmark's default), so they read
// as "per core" even on a loaded machine; the Time column is wall time. Figures are reported,
// never asserted: see bench/README.md for the targets and how to read them.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/broker/scripts.h"
#include "seqby/core/clock.h"
#include "seqby/runtime/subprocess.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/world.h"

namespace {

using seqby::redis::Command;
using seqby::redis::Reply;

constexpr int kPartitionCount = 16;     // as many keys as the default seed
constexpr int kStreamLengthMax = 1000;  // XADD MAXLEN ~: streams stay bounded however long we run
constexpr std::uint64_t kLeaseTtlMs = 3000;
// SimRedis hashes find a field by linear search: effects hashes start afresh every 64 seqs, about
// a default seed's events per key, so the figure does not drift with the number of iterations.
constexpr std::int64_t kEffectsPerHash = 64;
constexpr const char* kPeakChildFlag = "--seqby-peak-memory-child=";
constexpr std::uint64_t kPeakChildWaitMaxMs = 600000;  // a bound on a hung child, not a timing

// On a shared machine the spread between repetitions is wide: with --benchmark_repetitions=N,
// "min" gives the best CPU time and "max" the best rate, the figures nearest to a free core.
void add_best_statistics(benchmark::internal::Benchmark* b) {
  b->ComputeStatistics(
      "min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });
  b->ComputeStatistics(
      "max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
}

// Virtual time the benchmark moves by hand (one millisecond per round of commands).
class ManualClock final : public seqby::Clock {
 public:
  std::uint64_t now_ms() override { return now_ms_; }
  void advance(std::uint64_t delta_ms) { now_ms_ += delta_ms; }

 private:
  std::uint64_t now_ms_ = 1'000'000;
};

std::string stream_of(int partition) { return "order:k" + std::to_string(partition); }
std::string lease_of(int partition) { return stream_of(partition) + ":__lease__"; }
std::string fence_of(int partition) { return stream_of(partition) + ":__fence__"; }

// Runs `command` and stops the benchmark on an error reply: a figure measured on errors is void.
bool run_ok(benchmark::State& state, seqby::sim::SimRedis& redis, const Command& command,
            Reply* out = nullptr) {
  Reply reply = redis.execute(command);
  if (reply.is_error()) {
    state.SkipWithError(("unexpected reply to " + command[0] + ": " + to_string(reply)).c_str());
    return false;
  }
  if (out != nullptr) *out = std::move(reply);
  return true;
}

bool create_groups(benchmark::State& state, seqby::sim::SimRedis& redis) {
  for (int p = 0; p < kPartitionCount; ++p) {
    if (!run_ok(state, redis, {"XGROUP", "CREATE", stream_of(p), "billing", "$", "MKSTREAM"})) {
      return false;
    }
  }
  return true;
}

// (1) The engine's command mix, one partition after the other: lease SET PX and GET, fence INCR,
// XADD of an event, XREADGROUP of it, XPENDING of it (extended form), XACK. Seven commands.
void BM_SimRedisCommandMix(benchmark::State& state) {
  ManualClock clock;
  seqby::sim::SimRedis redis(clock);
  if (!create_groups(state, redis)) return;
  const std::string consumer = "i0-g1:1";
  const std::string maxlen = std::to_string(kStreamLengthMax);
  std::uint64_t command_count = 0;
  int partition = 0;
  Reply read;
  for (auto _ : state) {
    const std::string stream = stream_of(partition);
    const std::string lease = lease_of(partition);
    bool ok =
        run_ok(state, redis, {"SET", lease, consumer, "PX", std::to_string(kLeaseTtlMs)}) &&
        run_ok(state, redis, {"GET", lease}) &&
        run_ok(state, redis, {"INCR", fence_of(partition)}) &&
        run_ok(state, redis,
               {"XADD", stream, "MAXLEN", "~", maxlen, "*", "type", "created", "data",
                R"({"order":42,"amount":1999})"}) &&
        run_ok(state, redis,
               {"XREADGROUP", "GROUP", "billing", consumer, "COUNT", "1", "STREAMS", stream, ">"},
               &read);
    if (!ok) return;
    if (read.kind != Reply::Kind::array) {
      state.SkipWithError("XREADGROUP read nothing");
      return;
    }
    const std::string id = read.elements.at(0).elements.at(1).elements.at(0).elements.at(0).str;
    ok = run_ok(state, redis, {"XPENDING", stream, "billing", id, id, "1", consumer}) &&
         run_ok(state, redis, {"XACK", stream, "billing", id});
    if (!ok) return;
    command_count += 7;
    partition = (partition + 1) % kPartitionCount;
    clock.advance(1);
  }
  state.counters["commands"] =
      benchmark::Counter(static_cast<double>(command_count), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimRedisCommandMix)->Apply(add_best_statistics);

std::string load_script(benchmark::State& state, seqby::sim::SimRedis& redis, const char* name) {
  const char* source = seqby::redis::script_source(name);
  if (source == nullptr) {
    state.SkipWithError((std::string("no embedded script ") + name).c_str());
    return "";
  }
  Reply sha;
  if (!run_ok(state, redis, {"SCRIPT", "LOAD", source}, &sha)) return "";
  return sha.str;
}

// (2) One event through the engine's scripts, as RedisBroker sends them (EVALSHA): XADD (what
// the publish script does), fenced_read '>', fenced_commit of the next seq, fenced_ack, renew.
// Counts scripts (4 per round) and all commands (5 per round). 16 partitions, as in a default seed.
void BM_SimRedisEngineScripts(benchmark::State& state) {
  ManualClock clock;
  seqby::sim::SimRedis redis(clock);
  if (!create_groups(state, redis)) return;
  const std::string read_sha = load_script(state, redis, "fenced_read");
  const std::string commit_sha = load_script(state, redis, "fenced_commit");
  const std::string ack_sha = load_script(state, redis, "fenced_ack");
  const std::string renew_sha = load_script(state, redis, "renew");
  if (read_sha.empty() || commit_sha.empty() || ack_sha.empty() || renew_sha.empty()) return;
  const std::string token = "i0-g1:1";
  const std::string ttl = std::to_string(kLeaseTtlMs);
  for (int p = 0; p < kPartitionCount; ++p) {
    if (!run_ok(state, redis, {"SET", lease_of(p), token, "PX", ttl})) return;
  }
  const std::string maxlen = std::to_string(kStreamLengthMax);
  std::vector<std::int64_t> seq(kPartitionCount, 0);
  std::uint64_t round_count = 0;
  int partition = 0;
  Reply read;
  Reply status;
  for (auto _ : state) {
    const std::string stream = stream_of(partition);
    const std::string lease = lease_of(partition);
    const std::string seq_text = std::to_string(++seq[partition]);
    bool ok = run_ok(state, redis,
                     {"XADD", stream, "MAXLEN", "~", maxlen, "*", "type", "created", "data",
                      R"({"order":42,"amount":1999})"}) &&
              run_ok(state, redis, {"EVALSHA", read_sha, "2", lease, stream, token, "billing", ">"},
                     &read);
    if (!ok) return;
    if (read.kind != Reply::Kind::array) {
      state.SkipWithError("fenced_read read nothing");
      return;
    }
    const std::string id = read.elements.at(0).str;
    ok = run_ok(state, redis,
                {"EVALSHA", commit_sha, "3", lease, stream + ":__sink__",
                 stream + ":__effects__:" + std::to_string(seq[partition] / kEffectsPerHash), token,
                 seq_text, "effect " + seq_text},
                &status) &&
         run_ok(state, redis, {"EVALSHA", ack_sha, "2", lease, stream, token, "billing", id}) &&
         run_ok(state, redis, {"EVALSHA", renew_sha, "1", lease, token, ttl});
    if (!ok) return;
    if (status.kind != Reply::Kind::array || status.elements.at(0).str != "accepted") {
      state.SkipWithError(("fenced_commit did not accept: " + to_string(status)).c_str());
      return;
    }
    ++round_count;
    partition = (partition + 1) % kPartitionCount;
    clock.advance(1);
  }
  state.counters["scripts"] =
      benchmark::Counter(static_cast<double>(4 * round_count), benchmark::Counter::kIsRate);
  state.counters["commands"] =
      benchmark::Counter(static_cast<double>(5 * round_count), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimRedisEngineScripts)->Apply(add_best_statistics);

// The cheapest script the engine runs (renew: GET, PEXPIRE): the fixed cost of one EVALSHA.
void BM_SimRedisEvalshaRenew(benchmark::State& state) {
  ManualClock clock;
  seqby::sim::SimRedis redis(clock);
  const std::string renew_sha = load_script(state, redis, "renew");
  if (renew_sha.empty()) return;
  const std::string token = "i0-g1:1";
  const std::string ttl = std::to_string(kLeaseTtlMs);
  if (!run_ok(state, redis, {"SET", lease_of(0), token, "PX", ttl})) return;
  const Command renew{"EVALSHA", renew_sha, "1", lease_of(0), token, ttl};
  std::uint64_t script_count = 0;
  for (auto _ : state) {
    if (!run_ok(state, redis, renew)) return;
    ++script_count;
    clock.advance(1);
  }
  state.counters["scripts"] =
      benchmark::Counter(static_cast<double>(script_count), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimRedisEvalshaRenew)->Apply(add_best_statistics);

// The heaviest script the engine runs, on its steady path: fenced_read '0' of the consumer's one
// pending entry (GET, XREADGROUP, XPENDING, and the reply tables converted both ways).
void BM_SimRedisEvalshaFencedRead(benchmark::State& state) {
  ManualClock clock;
  seqby::sim::SimRedis redis(clock);
  if (!create_groups(state, redis)) return;
  const std::string read_sha = load_script(state, redis, "fenced_read");
  if (read_sha.empty()) return;
  const std::string token = "i0-g1:1";
  const std::string ttl = std::to_string(kLeaseTtlMs);
  const std::string stream = stream_of(0);
  const std::string lease = lease_of(0);
  const Command read_new{"EVALSHA", read_sha, "2", lease, stream, token, "billing", ">"};
  const Command read_pending{"EVALSHA", read_sha, "2", lease, stream, token, "billing", "0"};
  Reply read;
  if (!run_ok(state, redis, {"SET", lease, token, "PX", ttl}) ||
      !run_ok(state, redis,
              {"XADD", stream, "*", "type", "created", "data", R"({"order":42,"amount":1999})"}) ||
      !run_ok(state, redis, read_new)) {
    return;
  }
  std::uint64_t script_count = 0;
  for (auto _ : state) {
    if (!run_ok(state, redis, read_pending, &read)) return;
    if (read.kind != Reply::Kind::array) {
      state.SkipWithError("fenced_read found no pending entry");
      return;
    }
    ++script_count;
  }
  state.counters["scripts"] =
      benchmark::Counter(static_cast<double>(script_count), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimRedisEvalshaFencedRead)->Apply(add_best_statistics);

// Adds the figures of one simulated run to the benchmark's counters.
struct SeedTotals {
  std::uint64_t seeds = 0;
  std::uint64_t sim_ms = 0;
  std::uint64_t events = 0;
  std::uint64_t steps = 0;
  std::uint64_t commands = 0;

  void report(benchmark::State& state) const {
    using benchmark::Counter;
    state.counters["seeds"] = Counter(static_cast<double>(seeds), Counter::kIsRate);
    // Simulated seconds per CPU second: the simulated-over-wall ratio on one free core.
    state.counters["sim_seconds"] = Counter(static_cast<double>(sim_ms) / 1000.0, Counter::kIsRate);
    state.counters["commands"] = Counter(static_cast<double>(commands), Counter::kIsRate);
    state.counters["events"] = Counter(static_cast<double>(events), Counter::kAvgIterations);
    state.counters["steps"] = Counter(static_cast<double>(steps), Counter::kAvgIterations);
    state.counters["sim_ms"] = Counter(static_cast<double>(sim_ms), Counter::kAvgIterations);
  }
};

constexpr int kSeedIterations = 10;  // seeds 1..10, the same ones every time

// (3) One default seed end to end, as `seqby sim` runs it: generate_case, the World run, the
// checker and the history digest (run_case).
void BM_DefaultSeedRunCase(benchmark::State& state) {
  SeedTotals totals;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    const seqby::sim::SimCase c = seqby::sim::generate_case(seed++);
    const seqby::scenarios::RunResult r = seqby::scenarios::run_case(c);
    if (!r.passed) {
      state.SkipWithError(("seed " + std::to_string(r.seed) + " failed its properties").c_str());
      return;
    }
    ++totals.seeds;
    totals.sim_ms += r.sim_ms;
    totals.events += r.events_published;
    totals.steps += r.scheduler_steps;
    totals.commands += r.redis_commands;
  }
  totals.report(state);
}
BENCHMARK(BM_DefaultSeedRunCase)
    ->Apply(add_best_statistics)
    ->Iterations(kSeedIterations)
    ->Unit(benchmark::kMillisecond);

// (3b) The same seeds, World only (no checker, no digest): how the time splits.
void BM_DefaultSeedWorldOnly(benchmark::State& state) {
  SeedTotals totals;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    const seqby::sim::SimCase c = seqby::sim::generate_case(seed++);
    seqby::sim::World world(c);
    world.run();
    const seqby::sim::WorldStats stats = world.stats();
    benchmark::DoNotOptimize(world.take_history());
    ++totals.seeds;
    totals.sim_ms += stats.sim_ms;
    totals.events += stats.events_published;
    totals.steps += stats.scheduler_steps;
    totals.commands += stats.redis_commands;
  }
  totals.report(state);
}
BENCHMARK(BM_DefaultSeedWorldOnly)
    ->Apply(add_best_statistics)
    ->Iterations(kSeedIterations)
    ->Unit(benchmark::kMillisecond);

// Kibibytes of the "VmHWM:" (peak resident set) or "VmRSS:" line of /proc/self/status.
std::uint64_t status_kib(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const std::size_t length = std::strlen(field);
  while (std::getline(status, line)) {
    if (line.compare(0, length, field) == 0) {
      return std::strtoull(line.c_str() + length, nullptr, 10);
    }
  }
  return 0;
}

// The child of BM_DefaultSeedPeakMemory, a fresh exec of this program: runs one seed with
// run_case and prints "<VmHWM before> <VmHWM after>" in KiB.
int peak_memory_child(std::uint64_t seed) {
  const std::uint64_t before_kib = status_kib("VmHWM:");
  const seqby::scenarios::RunResult r = seqby::scenarios::run_case(seqby::sim::generate_case(seed));
  const std::uint64_t after_kib = status_kib("VmHWM:");
  std::printf("%llu %llu %d\n", static_cast<unsigned long long>(before_kib),
              static_cast<unsigned long long>(after_kib), r.passed ? 1 : 0);
  return 0;
}

// (4) Peak memory of one default seed: the process peak (VmHWM) of a fresh process that runs
// exactly one seed through run_case, and the same before the seed (the program's own baseline).
// A separate process, because this one's peak already holds the benchmarks that ran before.
void BM_DefaultSeedPeakMemory(benchmark::State& state) {
  std::uint64_t before_kib = 0;
  std::uint64_t after_kib = 0;
  for (auto _ : state) {
    const std::string flag = std::string(kPeakChildFlag) + "1";
    seqby::redis::SpawnOptions options;  // no die_with_parent: the child is waited for here
    options.out = seqby::redis::Redirect::pipe();
    options.program = "/proc/self/exe";
    options.die_with_parent = false;
    seqby::Result<seqby::redis::Subprocess> child =
        seqby::redis::Subprocess::spawn({"bench_sim_bench", flag}, options);
    if (!child.ok()) {
      state.SkipWithError(child.error().message.c_str());
      return;
    }
    const std::string out = child.value().read_stdout(kPeakChildWaitMaxMs);
    const int exit_status = child.value().wait(kPeakChildWaitMaxMs);
    unsigned long long before = 0;
    unsigned long long after = 0;
    int passed = 0;
    if (exit_status != 0 ||
        std::sscanf(out.c_str(), "%llu %llu %d", &before, &after, &passed) != 3 || passed != 1) {
      state.SkipWithError(("peak memory child failed: " + out).c_str());
      return;
    }
    before_kib = before;
    after_kib = after;
  }
  state.counters["peak_MiB"] = static_cast<double>(after_kib) / 1024.0;
  state.counters["baseline_MiB"] = static_cast<double>(before_kib) / 1024.0;
  state.counters["seed_MiB"] = static_cast<double>(after_kib - before_kib) / 1024.0;
}
BENCHMARK(BM_DefaultSeedPeakMemory)
    ->Apply(add_best_statistics)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], kPeakChildFlag, std::strlen(kPeakChildFlag)) == 0) {
    return peak_memory_child(std::strtoull(argv[1] + std::strlen(kPeakChildFlag), nullptr, 10));
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
