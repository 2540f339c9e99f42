// bench_cluster_failover_leases: what a master failover costs the leases a worker holds on the
// masters it did not touch (docs/ARCHITECTURE.md "Leases by the batch", "A master that stops
// answering costs only its own leases"). Each round starts a Redis Cluster of its own (3 masters,
// 3 replicas, scenarios/redis_cluster.h), publishes one event to each of N partitions, starts one
// real `seqby worker` holding them all (decision journal on), waits until every event is
// committed, then kills the master of the first partition's slot once its replica holds every
// write (RedisCluster::kill_replicated: no write is lost, so only the renewals are measured),
// waits for the replica's promotion and two TTLs more, and reads the journal of every master
// (`seqby check --save`). A lease the worker lost and took again shows as a second `acquire`
// of its partition: the table counts them apart for the partitions on the killed master and on
// the live ones. Prints a table; asserts nothing. Needs no server of its own (the clusters are
// its own, on free loopback ports).
//
// With `--fault stop` the master is stalled (SIGSTOP, once its replica holds every write) instead
// of killed: it keeps its connections open and answers nothing, so the worker's commands to it
// wait out their timeouts (a network partition of one master looks the same to the worker); it is
// continued (SIGCONT) after the measure and rejoins as a replica.
//
//   build/bench_cluster_failover_leases [--rounds 3] [--partitions 24] [--lease-ttl-ms 3000]
//       [--heartbeat-interval-ms 1000] [--fault kill|stop] [--seqby PATH]
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/broker/cluster_slot.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/properties/history_io.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby/scenarios/redis_driver.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_cluster_failover_leases";
constexpr const char* kUsage =
    "usage: build/bench_cluster_failover_leases [--rounds 3] [--partitions 24]\n"
    "           [--lease-ttl-ms 3000] [--heartbeat-interval-ms 1000] [--fault kill|stop]\n"
    "           [--seqby PATH]\n";
constexpr const char* kGroup = "g";
constexpr std::uint64_t kCommittedWaitMs = 60000;
constexpr std::uint64_t kFailoverWaitMs = 30000;
constexpr std::uint64_t kKillLimitMs = 10000;

struct Options {
  std::uint64_t rounds = 3;
  std::uint64_t partitions = 24;
  std::uint64_t lease_ttl_ms = 3000;
  std::uint64_t heartbeat_interval_ms = 1000;
  bool stop = false;  // --fault stop: SIGSTOP the master rather than SIGKILL it
  std::string seqby;  // "": the seqby next to this program
};

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", kProgram, flag.c_str());
      return false;
    }
    const char* text = argv[++i];
    if (flag == "--seqby") {
      o->seqby = text;
      continue;
    }
    if (flag == "--fault") {
      const std::string fault = text;
      if (fault != "kill" && fault != "stop") {
        std::fprintf(stderr, "%s: --fault '%s': not kill or stop\n", kProgram, text);
        return false;
      }
      o->stop = fault == "stop";
      continue;
    }
    std::uint64_t value = 0;
    std::uint64_t* into = flag == "--rounds"                  ? &o->rounds
                          : flag == "--partitions"            ? &o->partitions
                          : flag == "--lease-ttl-ms"          ? &o->lease_ttl_ms
                          : flag == "--heartbeat-interval-ms" ? &o->heartbeat_interval_ms
                                                              : nullptr;
    if (into == nullptr) {
      std::fprintf(stderr, "%s: unknown option: %s\n", kProgram, flag.c_str());
      return false;
    }
    if (!parse_u64(text, &value) || value == 0) {
      std::fprintf(stderr, "%s: %s '%s': not a positive number\n", kProgram, flag.c_str(), text);
      return false;
    }
    *into = value;
  }
  if (o->heartbeat_interval_ms >= o->lease_ttl_ms) {
    std::fprintf(stderr, "%s: --heartbeat-interval-ms must be below --lease-ttl-ms\n", kProgram);
    return false;
  }
  return true;
}

PartitionRef partition_of(const std::string& category, std::uint64_t i) {
  return PartitionRef{category, "k" + std::to_string(i), KeyLayout::cluster};
}

struct Round {
  std::size_t on_killed = 0;       // partitions whose slot the killed master served
  std::size_t retaken_killed = 0;  // of them, leases lost and taken again
  std::size_t retaken_live = 0;    // the same on the live masters
  std::uint64_t failover_ms = 0;   // from the kill to another master serving the slot
  std::string error;               // the round did not run to the end: why
};

Round run_round(const Options& o, const std::string& seqby, std::uint64_t round) {
  Round out;
  scenarios::RedisCluster cluster;
  if (!cluster.ok()) return Round{.error = "cluster start: " + cluster.error()};
  const std::string seed = "redis://127.0.0.1:" + std::to_string(cluster.ports().front());
  const std::string category = "leases" + std::to_string(round);
  for (std::uint64_t i = 0; i < o.partitions; ++i) {
    const scenarios::CommandRun published = scenarios::run_command(
        seqby, {"publish", "--redis", seed, "--cluster", "--key-layout", "cluster", "--category",
                category, "--key", partition_of(category, i).key, "--count", "1",
                "--journal-maxlen", std::to_string(kTestJournalMaxlen)});
    if (published.exit_code != 0) return Round{.error = "publish: " + published.err};
  }
  scenarios::WorkerSettings settings;
  settings.group = kGroup;
  settings.sequential_by = "id";
  settings.journal_maxlen = kTestJournalMaxlen;
  settings.lease_ttl_ms = o.lease_ttl_ms;
  settings.heartbeat_interval_ms = o.heartbeat_interval_ms;
  settings.cluster = true;
  scenarios::WorkerProcess worker(seqby, seed, category, "", "w1", settings,
                                  cluster.dir() + "/w1.log");
  if (!worker.started()) return Round{.error = "the worker did not start"};

  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  auto committed = [&] {
    std::uint64_t done = 0;
    for (std::uint64_t i = 0; i < o.partitions; ++i) {
      Result<Reply> seq = runtime.block_on(
          link.execute({"HGET", sink_key_name(partition_of(category, i), kGroup), "last_seq"}));
      if (seq.ok() && seq.value().kind == Reply::Kind::bulk) ++done;
    }
    return done == o.partitions;
  };
  if (!cluster.wait_until(committed, kCommittedWaitMs, "every partition's event committed")) {
    return Round{.error = cluster.error() + "\n" + worker.log()};
  }

  const std::uint16_t slot = key_slot(partition_of(category, 0).stream());
  const std::optional<std::uint16_t> victim = cluster.master_of_slot(slot);
  if (!victim) return Round{.error = "no master serves slot " + std::to_string(slot)};
  std::map<std::string, bool> killed_side;  // partition key -> on the master killed
  for (std::uint64_t i = 0; i < o.partitions; ++i) {
    const PartitionRef p = partition_of(category, i);
    killed_side[p.key] = cluster.master_of_slot(key_slot(p.stream())) == victim;
    out.on_killed += killed_side[p.key] ? 1 : 0;
  }
  const std::uint64_t killed_at = steady_now_ms();
  const bool struck = o.stop ? cluster.stop_replicated(*victim, kKillLimitMs)
                             : cluster.kill_replicated(*victim, kKillLimitMs);
  if (!struck) return Round{.error = cluster.error()};
  const bool promoted = cluster.wait_until(
      [&] {
        const std::optional<std::uint16_t> now = cluster.master_of_slot(slot);
        return now.has_value() && now != victim;
      },
      kFailoverWaitMs, "a replica serving slot " + std::to_string(slot));
  if (!promoted) return Round{.error = cluster.error()};
  out.failover_ms = steady_now_ms() - killed_at;
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * o.lease_ttl_ms));
  if (o.stop && !cluster.signal(*victim, SIGCONT)) return Round{.error = "SIGCONT failed"};
  if (worker.terminate() != 0) return Round{.error = "the worker did not stop:\n" + worker.log()};

  const std::string saved = cluster.dir() + "/journal.jsonl";
  const scenarios::CommandRun checked = scenarios::run_command(
      seqby, {"check", "--redis", seed, "--cluster", "--category", category, "--save", saved});
  Result<std::vector<HistoryRecord>> history = properties::read_history_file(saved);
  if (!history.ok()) return Round{.error = "seqby check: " + checked.err + history.error().message};
  std::map<std::string, std::size_t> acquires;
  for (const HistoryRecord& r : history.value()) {
    if (r.op == HistoryOp::acquire && r.category == category) ++acquires[r.key];
  }
  for (const auto& [key, count] : acquires) {
    if (count < 2) continue;
    (killed_side[key] ? out.retaken_killed : out.retaken_live) += count - 1;
  }
  return out;
}

int run(int argc, char** argv) {
  Options o;
  if (const std::optional<int> stop = read_command_line(argc, argv, kUsage, &o, parse_options)) {
    return *stop;
  }
  const std::string seqby = o.seqby.empty() ? seqby_next_to_this_program() : o.seqby;
  std::printf("%s: %s, %s, %llu partitions, lease ttl %llu ms, heartbeat %llu ms, load %s\n",
              kProgram, seqby.c_str(), o.stop ? "master stopped (SIGSTOP)" : "master killed",
              static_cast<unsigned long long>(o.partitions),
              static_cast<unsigned long long>(o.lease_ttl_ms),
              static_cast<unsigned long long>(o.heartbeat_interval_ms), load_average().c_str());
  std::printf(
      "| round | on the struck master | leases taken again there | on live masters | "
      "leases taken again there | strike to promotion (ms) |\n|---|---|---|---|---|---|\n");
  int failed = 0;
  for (std::uint64_t round = 1; round <= o.rounds; ++round) {
    const Round r = run_round(o, seqby, round);
    if (!r.error.empty()) {
      std::fprintf(stderr, "%s: round %llu: %s\n", kProgram, static_cast<unsigned long long>(round),
                   r.error.c_str());
      failed = 1;
      continue;
    }
    std::printf("| %llu | %zu | %zu | %zu | %zu | %llu |\n", static_cast<unsigned long long>(round),
                r.on_killed, r.retaken_killed, o.partitions - r.on_killed, r.retaken_live,
                static_cast<unsigned long long>(r.failover_ms));
    std::fflush(stdout);
  }
  return failed;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) { return seqby::redis::bench::run(argc, argv); }
