// The ADR's acceptance scenarios on a real Redis Cluster (tests/support/redis_cluster.h: 3
// masters, 3 replicas), exactly as `seqby scenario run NAME --redis NODE --cluster` runs them:
// `seqby worker` processes with `--cluster --key-layout cluster`, SIGKILL and SIGSTOP/SIGCONT
// faults, the publisher and every read of the driver sent to the master of their key's slot, and
// the history checker judging the decision journal read from every master. One cluster serves
// every scenario (each driver owns a fresh category), so the suite pays for one cluster start.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>
#include <string>

#include "redis_cluster.h"
#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {
namespace {

using seqby::testing::RedisCluster;

constexpr const char* kSeqby = SEQBY_BINARY_DIR "/seqby";

// The scenarios whose real-Redis form runs an engine through the driver (the others judge
// registration, or call `seqby admin`).
constexpr const char* kEngineScenarios[] = {
    "per_key_order",  "no_concurrent_entry", "cross_key_parallelism", "poison_halt",
    "crash_failover", "stall_failover",      "pm_per_instance",
};

TEST(ClusterScenarios, TheAdrsEngineScenariosPassOnARealCluster) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  const std::string seed = "redis://127.0.0.1:" + std::to_string(cluster.ports().front());
  for (const char* name : kEngineScenarios) {
    const Scenario* s = find_scenario(name);
    ASSERT_NE(s, nullptr) << name;
    ASSERT_TRUE(s->run_redis) << name << " has no real-Redis form";
    std::ostringstream out;
    ScenarioContext ctx{out, seed, 1, kSeqby, /*redis_cluster=*/true};
    const ScenarioResult r = s->run_redis(ctx);
    std::cout << out.str();
    EXPECT_TRUE(r.passed()) << out.str() << "replay: seqby scenario run " << name << " --redis "
                            << seed << " --cluster";
    EXPECT_EQ(out.str().find("FAIL"), std::string::npos) << out.str();
  }
}

}  // namespace
}  // namespace seqby::scenarios
