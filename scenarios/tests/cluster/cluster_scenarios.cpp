// Every scenario of the catalog (the ADR's acceptance list) on a real Redis Cluster
// (scenarios/include/seqby/scenarios/redis_cluster.h: 3 masters, 3 replicas), exactly as `seqby
// scenario run NAME
// --redis NODE --cluster` runs them: `seqby worker` processes with `--cluster --key-layout
// cluster`, SIGKILL and SIGSTOP/SIGCONT faults, the publisher and every read of the driver sent to
// the master of their key's slot, and the history checker judging the decision journal read from
// every master. One cluster serves every scenario (each driver owns a fresh category), so the suite
// pays for one cluster start. Then per_key_order runs twice more, each on a cluster of its own,
// with a nemesis striking mid-run from a thread beside it: client-A's slot migrated to another
// master key by key (every property judged: a migration loses nothing), and a SIGKILL of client-A's
// master once its replica holds every write it accepted (writes paused for the moment; a lossy
// failover loses commits by design: docs/ARCHITECTURE.md "What a failover keeps"), its replica
// promoted (exclusion not judged).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "seqby/broker/cluster_slot.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby_binary.h"

namespace seqby::scenarios {
namespace {

using seqby::scenarios::RedisCluster;

TEST(ClusterScenarios, EveryAdrScenarioPassesOnARealCluster) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string seed = "redis://127.0.0.1:" + std::to_string(cluster.ports().front());
  ASSERT_GE(all_scenarios().size(), 15u);  // the catalog, every one of them below
  for (const Scenario& s : all_scenarios()) {
    const std::string& name = s.name;
    ASSERT_TRUE(s.run_redis) << name << " has no real-Redis form";
    std::ostringstream out;
    ScenarioContext ctx{out, seed, 1, kSeqby, /*redis_cluster=*/true};
    const ScenarioResult r = s.run_redis(ctx);
    std::cout << out.str();
    EXPECT_TRUE(r.passed()) << out.str() << "replay: seqby scenario run " << name << " --redis "
                            << seed << " --cluster";
    EXPECT_EQ(out.str().find("FAIL"), std::string::npos) << out.str();
  }
}

// The seq the sink of client-A (any category: its cluster names all carry the tag {client-A})
// last accepted, read on the master of its slot; 0 when there is none yet.
std::int64_t client_a_progress(RedisCluster& cluster, std::uint16_t slot) {
  const std::optional<std::uint16_t> master = cluster.master_of_slot(slot);
  if (!master.has_value()) return 0;
  Result<redis::Reply> found =
      RedisCluster::run(*master, {"SCAN", "0", "MATCH", "*{client-A}:__sink__:*", "COUNT", "1000"});
  if (!found.ok() || found.value().elements.size() != 2) return 0;
  std::int64_t best = 0;
  for (const redis::Reply& key : found.value().elements[1].elements) {
    Result<redis::Reply> seq = RedisCluster::run(*master, {"HGET", key.str, "last_seq"});
    if (seq.ok() && seq.value().kind == redis::Reply::Kind::bulk) {
      best = std::max<std::int64_t>(best, std::atoll(seq.value().str.c_str()));
    }
  }
  return best;
}

// Runs per_key_order on `cluster` while `strike` runs once from a thread of its own, as soon as
// client-A has committed 3 of its 20 events (so the strike lands mid-run); the strike's own
// outcome (false: it did not happen) is asserted after the scenario.
void per_key_order_under(RedisCluster& cluster, const std::string& what,
                         const std::function<bool()>& strike,
                         std::vector<properties::Property> not_judged) {
  const std::uint16_t slot = redis::key_slot("{client-A}");
  bool struck = false;
  std::int64_t struck_at = 0;
  std::thread nemesis([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      struck_at = client_a_progress(cluster, slot);
      if (struck_at >= 3) {
        struck = strike();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const std::string seed = "redis://127.0.0.1:" + std::to_string(cluster.ports().front());
  std::ostringstream out;
  ScenarioContext ctx{out, seed, 1, kSeqby, /*redis_cluster=*/true, std::move(not_judged)};
  const ScenarioResult r = find_scenario("per_key_order")->run_redis(ctx);
  nemesis.join();
  std::cout << what << " after client-A's commit " << struck_at << " of 20\n" << out.str();
  EXPECT_TRUE(struck) << what << ": " << cluster.error();
  EXPECT_LT(struck_at, 20) << what << " came after the run";
  EXPECT_TRUE(r.passed()) << out.str();
  EXPECT_EQ(out.str().find("FAIL"), std::string::npos) << out.str();
  if (!r.passed()) {
    for (std::uint16_t port : cluster.ports()) {
      std::cout << "--- log of node 127.0.0.1:" << port << " (last lines) ---\n"
                << cluster.log_tail(port) << "\n";
    }
  }
}

TEST(ClusterScenarios, PerKeyOrderHoldsThroughASlotMigrationMidRun) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  per_key_order_under(cluster, "migration of client-A's slot",
                      [&] {
                        const std::uint16_t slot = redis::key_slot("{client-A}");
                        const std::optional<std::uint16_t> from = cluster.master_of_slot(slot);
                        if (!from.has_value()) return false;
                        std::uint16_t to = 0;
                        for (std::uint16_t master : cluster.masters()) {
                          if (master != *from) to = master;
                        }
                        return to != 0 && cluster.begin_slot_move(slot, *from, to) &&
                               cluster.finish_slot_move(slot, *from, to, /*batch=*/1) &&
                               cluster.master_of_slot(slot) == to;
                      },
                      {});
}

TEST(ClusterScenarios, PerKeyOrderHoldsThroughAMasterFailoverMidRun) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  per_key_order_under(cluster, "SIGKILL of client-A's master",
                      [&] {
                        const std::optional<std::uint16_t> master =
                            cluster.master_of_slot(redis::key_slot("{client-A}"));
                        return master.has_value() && cluster.kill_replicated(*master, 10000);
                      },
                      {properties::Property::exclusion});
}

}  // namespace
}  // namespace seqby::scenarios
