// Two real `seqby worker` processes on a real Redis Cluster
// (scenarios/include/seqby/scenarios/redis_cluster.h: 3 masters, 3 replicas) with `--cluster
// --key-layout cluster`: `seqby publish --cluster` writes 8 partitions' events (with
// --wait-replicas 1, so every acknowledged publish is on a replica), the workers share the
// partitions, and mid-run a nemesis strikes: the master serving the first partition's slot is
// SIGKILLed and its replica promoted, or the second partition's slot is migrated to another master
// key by key. Every event still commits exactly in publish order (each partition's effects are its
// entries' ids by seq, no gap), no worker ever sees another inside a partition it is in (the record
// handler's in-progress marker; an overlap is logged as inprogress_overlap), both workers stop
// cleanly, and the checker finds no violation in the decision journal (workers and publisher run
// with --journal-maxlen: each unit's journal is in its unit's slot), read back from every master by
// `seqby check --redis NODE --cluster`. The migration runs once more with the workers under the
// least-privilege ACL of a cluster worker, and no node denies them anything. Every wait is
// bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/cluster_slot.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby/testing/record_handler.h"
#include "seqby_binary.h"
#include "worker_access.h"

namespace seqby::apps {
namespace {

using redis::Reply;
using scenarios::CommandRun;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::scenarios::RedisCluster;

constexpr const char* kCategory = "orders";
constexpr int kPartitions = 8;
constexpr int kEvents = 12;
constexpr const char* kHistoryStream = "seqby:history";  // unused: the workers journal
constexpr int kHandlerDelayMs = 40;  // each event takes this long in the record handler: the
                                     // kill lands while every partition still has work

PartitionRef partition_of(int i) {
  return PartitionRef{kCategory, "k" + std::to_string(i), KeyLayout::cluster};
}

struct Reader {
  explicit Reader(const RedisCluster& cluster) : link(runtime, cluster.seed()) {}
  Result<Reply> run(redis::Command command) {
    return runtime.block_on(link.execute(std::move(command)));
  }
  std::int64_t last_seq(const PartitionRef& p, const std::string& group) {
    Result<Reply> seq = run({"HGET", sink_key_name(p, group), "last_seq"});
    if (!seq.ok() || seq.value().kind != Reply::Kind::bulk) return 0;
    return std::atoll(seq.value().str.c_str());
  }
  redis::RealRuntime runtime;
  redis::HiredisClusterLink link;
};

// Publishes kPartitions x kEvents, runs two workers, calls `nemesis` once the first partition's
// worth of events is committed, and checks the outcome once every event is committed: the
// effects directly, and the history with the checker (but for the properties `not_judged`).
// `worker_auth` ("user:password@", or "" for the default user) is how the workers log in.
void run_through(RedisCluster& cluster, const std::string& name,
                 const std::function<void(Reader&)>& nemesis,
                 const std::vector<properties::Property>& not_judged = {},
                 const std::string& worker_auth = "") {
  const std::string seed = "redis://127.0.0.1:" + std::to_string(cluster.ports().front());
  const std::string worker_seed =
      "redis://" + worker_auth + "127.0.0.1:" + std::to_string(cluster.ports().front());
  for (int i = 0; i < kPartitions; ++i) {
    const CommandRun published = scenarios::run_command(
        kSeqby, {"publish", "--redis", seed, "--cluster", "--key-layout", "cluster", "--category",
                 kCategory, "--key", partition_of(i).key, "--count", std::to_string(kEvents),
                 "--field", "delay_ms=" + std::to_string(kHandlerDelayMs), "--wait-replicas", "1",
                 "--journal-maxlen", std::to_string(redis::kTestJournalMaxlen)});
    ASSERT_EQ(published.exit_code, 0) << published.err;
  }
  WorkerSettings settings;
  settings.group = "g";
  settings.sequential_by = "id";
  settings.journal_maxlen = redis::kTestJournalMaxlen;  // each unit's journal in its own slot
  settings.lease_ttl_ms = 3000;
  settings.heartbeat_interval_ms = 500;
  settings.discovery_interval_ms = 250;
  settings.cluster = true;  // --cluster --key-layout cluster
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  for (const char* owner : {"w1", "w2"}) {
    workers.push_back(std::make_unique<WorkerProcess>(kSeqby, worker_seed, kCategory,
                                                      kHistoryStream, owner, settings,
                                                      cluster.dir() + "/" + owner + ".log"));
    ASSERT_TRUE(workers.back()->started());
  }
  auto logs = [&] {
    std::string out;
    for (const auto& w : workers) out += "--- " + w->owner() + "\n" + w->log();
    return out;
  };
  Reader reader(cluster);
  auto committed = [&] {
    std::int64_t total = 0;
    for (int i = 0; i < kPartitions; ++i) total += reader.last_seq(partition_of(i), "g");
    return total;
  };

  ASSERT_TRUE(cluster.wait_until([&] { return committed() >= kEvents; }, 60000, "first commits"))
      << cluster.error() << "\n"
      << logs();
  const std::int64_t before = committed();
  nemesis(reader);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_TRUE(cluster.wait_until([&] { return committed() == kPartitions * kEvents; }, 90000,
                                 "every event committed after the " + name))
      << cluster.error() << "\ncommitted " << committed() << "\n"
      << logs();
  std::cout << name << " after " << before << " of " << kPartitions * kEvents
            << " commits; all committed\n";

  for (int i = 0; i < kPartitions; ++i) {
    const PartitionRef p = partition_of(i);
    Result<Reply> entries = reader.run({"XRANGE", p.stream(), "-", "+"});
    ASSERT_TRUE(entries.ok() && entries.value().kind == Reply::Kind::array);
    ASSERT_EQ(entries.value().elements.size(), static_cast<std::size_t>(kEvents)) << p.stream();
    for (int seq = 1; seq <= kEvents; ++seq) {
      Result<Reply> effect = reader.run({"HGET", effects_hash_name(p, "g"), std::to_string(seq)});
      ASSERT_TRUE(effect.ok());
      // The record handler commits seq n with the id of the entry it handled: the n-th entry.
      EXPECT_EQ(effect.value(), Reply::bulk(entries.value().elements[seq - 1].elements[0].str))
          << p.stream() << " seq " << seq;
    }
    EXPECT_EQ(reader.run({"EXISTS", halt_key_name(p, "g")}).value(), Reply::of_int(0));
  }
  EXPECT_EQ(logs().find(std::string(seqby::testing::kInProgressOverlap)), std::string::npos)
      << logs();
  for (const auto& w : workers) EXPECT_EQ(w->terminate(), 0) << logs();

  // The checker judges the run from the decision journal, as an operator would: `seqby check
  // --redis NODE --cluster` reads every master's unit journals (each written by the scripts in
  // its unit's slot) and merges them; --save keeps the merged history for the judgement here.
  const std::vector<std::string> masters = reader.link.masters();
  ASSERT_FALSE(masters.empty());
  const std::string saved = cluster.dir() + "/journal-" + std::to_string(kPartitions) + ".jsonl";
  const CommandRun checked =
      scenarios::run_command(kSeqby, {"check", "--redis", "redis://" + masters.front(), "--cluster",
                                      "--category", kCategory, "--save", saved});
  ASSERT_TRUE(checked.exit_code == 0 || checked.exit_code == 1)
      << "seqby check exit " << checked.exit_code << " signal " << checked.signal << "\n"
      << checked.err << checked.out;
  Result<std::vector<HistoryRecord>> history = properties::read_history_file(saved);
  ASSERT_TRUE(history.ok()) << history.error().message;
  properties::CheckOptions options;
  options.skip = not_judged;
  const properties::CheckReport report = properties::check_history(history.value(), options);
  EXPECT_TRUE(report.ok()) << properties::render_report_text(report, &history.value());
  if (not_judged.empty()) {
    EXPECT_EQ(checked.exit_code, 0) << checked.out;
  }
  // At least every event (order, where judged, says each at most once), and every publish.
  EXPECT_GE(report.counters.events_committed, static_cast<std::uint64_t>(kPartitions * kEvents));
  const auto publishes =
      std::count_if(history.value().begin(), history.value().end(),
                    [](const HistoryRecord& r) { return r.op == HistoryOp::publish; });
  EXPECT_EQ(publishes, kPartitions * kEvents);
  std::cout << "checker (journal of " << masters.size() << " masters): " << history.value().size()
            << " records, " << report.counters.events_committed << " commits, "
            << report.counters.executions << " executions, " << report.counters.stale_overlaps
            << " stale overlaps: " << (report.ok() ? "ok" : "VIOLATED") << "\n";
}

TEST(CliClusterWorkers, TwoWorkersServeEveryPartitionInOrderThroughAMasterFailover) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const int victim = 0;
  // What a failover keeps (docs/ARCHITECTURE.md): the promoted replica has a prefix of the
  // master's writes, and each unit's journal is in the same slot, so it loses the same suffix: an
  // acquire, a commit or an ack lost with their journal records leave no trace, and order, fence
  // and no_loss (publishes waited for) are judged on the journal. Exclusion is not: the record of
  // an execution's exit can be in the lost suffix while its worker went on to its next event, and
  // the journal then shows the first execution still open beside the next. The in-progress
  // marker above judges exclusion on the server instead, through the failover.
  run_through(cluster, "SIGKILL of the master of k" + std::to_string(victim) + "'s slot",
              [&](Reader&) {
                cluster.kill(
                    cluster.master_of_slot(redis::key_slot(partition_of(victim).stream())).value());
              },
              {properties::Property::exclusion});
}

// The slot of k1 moves to another master while the workers run, the way `redis-cli --cluster
// reshard` moves it: IMPORTING/MIGRATING, its keys MIGRATEd one at a time (a step meanwhile
// meets ASK or TRYAGAIN), then SETSLOT NODE on every master (MOVED).
// Moves k1's slot to another master, key by key, while k1 still has work.
void migrate_k1(RedisCluster& cluster, Reader& reader) {
  const std::uint16_t slot = redis::key_slot(partition_of(1).stream());
  const std::uint16_t from = cluster.master_of_slot(slot).value();
  std::uint16_t to = 0;
  for (std::uint16_t master : cluster.masters()) {
    if (master != from) to = master;
  }
  ASSERT_NE(to, 0);
  // The move lands while k1 still has work (each event takes kHandlerDelayMs).
  ASSERT_LT(reader.last_seq(partition_of(1), "g"), kEvents);
  ASSERT_TRUE(cluster.begin_slot_move(slot, from, to)) << cluster.error();
  ASSERT_TRUE(cluster.finish_slot_move(slot, from, to, /*batch=*/1)) << cluster.error();
  EXPECT_EQ(cluster.master_of_slot(slot), to);
}

TEST(CliClusterWorkers, TwoWorkersServeEveryPartitionInOrderThroughASlotMigration) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  run_through(cluster, "migration of k1's slot",
              [&](Reader& reader) { migrate_k1(cluster, reader); });
}

// The migration again, the workers under the least privilege README.md gives a cluster worker,
// on every node (tests/support/worker_access.h): whatever the move makes them meet (MOVED,
// TRYAGAIN; an ASK only when none of a command's keys is left on the old master, which these runs
// did not meet), no node denies them anything (each node's ACL LOG stays empty).
TEST(CliClusterWorkers, UnderTheLeastPrivilegeAclASlotMigrationIsServedWithNothingDenied) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  ASSERT_EQ(seqby::testing::acl_on_every_node(
                cluster.ports(),
                seqby::testing::acl_setuser("seqby-worker", "w-pass",
                                            seqby::testing::cluster_worker_acl_all_commands(),
                                            seqby::testing::cluster_worker_acl_keys(kCategory))),
            "");
  run_through(
      cluster, "migration of k1's slot (least privilege)",
      [&](Reader& reader) { migrate_k1(cluster, reader); }, {}, "seqby-worker:w-pass@");
  const std::vector<std::string> denied = seqby::testing::acl_denials(cluster.ports());
  EXPECT_TRUE(denied.empty()) << ::testing::PrintToString(denied);
}

}  // namespace
}  // namespace seqby::apps
