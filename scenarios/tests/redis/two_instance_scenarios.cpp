// The ADR's acceptance scenarios on a real redis-server (DESIGN.md section 7): each of the eleven
// passes through the catalog exactly as `seqby scenario run NAME --redis
// URL` runs it (two or more `seqby worker` processes, SIGKILL and SIGSTOP/SIGCONT faults, the
// history checker), and the command maps the verdict to its exit status.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "cli_run.h"
#include "redis_server.h"
#include "seqby/scenarios/catalog.h"
#include "seqby_binary.h"

namespace seqby::scenarios {
namespace {

using seqby::testing::RedisServer;

class RealRedisScenario : public ::testing::TestWithParam<const char*> {
 protected:
  RedisServer server_;
};

TEST_P(RealRedisScenario, PassesOnARealServer) {
  ASSERT_TRUE(server_.ok()) << server_.error();
  const Scenario* s = find_scenario(GetParam());
  ASSERT_NE(s, nullptr) << GetParam();
  ASSERT_TRUE(s->run_redis) << GetParam() << " has no real-Redis form";
  std::ostringstream out;
  ScenarioContext ctx{out, server_.url(), 1, kSeqby};
  const ScenarioResult r = s->run_redis(ctx);
  std::cout << out.str();
  EXPECT_TRUE(r.passed()) << out.str() << "replay: seqby scenario run " << GetParam() << " --redis "
                          << server_.url();
  EXPECT_EQ(out.str().find("FAIL"), std::string::npos) << out.str();
}

INSTANTIATE_TEST_SUITE_P(Adr, RealRedisScenario,
                         ::testing::Values("per_key_order", "no_concurrent_entry",
                                           "cross_key_parallelism", "poison_halt", "crash_failover",
                                           "stall_failover", "registration_validation",
                                           "capability_gating", "one_key_per_category",
                                           "pm_per_instance", "unsafe_keys", "operator_skip_head",
                                           "operator_dlq_head", "cold_partition_reaping",
                                           "partition_count_warning"));

TEST(RealRedisScenarioCommand, EveryScenarioHasARealRedisForm) {
  for (const Scenario& s : all_scenarios()) EXPECT_TRUE(static_cast<bool>(s.run_redis)) << s.name;
}

TEST(RealRedisScenarioCommand, RunWithRedisPrintsChecksAndExitsZero) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const auto run =
      apps::testing::run_seqby({"scenario", "run", "per_key_order", "--redis", server.url()});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("ok  per-key order: client-A applied 1..20 in published order"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("scenario per_key_order (redis): passed\n"), std::string::npos) << run.out;
}

TEST(RealRedisScenarioCommand, UnreachableServerFailsTheScenarioWithExitOne) {
  // Port 1 on loopback: nothing listens there.
  const auto run = apps::testing::run_seqby(
      {"scenario", "run", "capability_gating", "--redis", "redis://127.0.0.1:1"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("FAIL RedisBroker on redis://127.0.0.1:1"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("scenario capability_gating (redis): failed\n"), std::string::npos)
      << run.out;
}

}  // namespace
}  // namespace seqby::scenarios
