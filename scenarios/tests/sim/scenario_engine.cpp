// The engine scenarios of the ADR's acceptance list (the process manager's among them) and the
// operating scenarios, run through the catalog as `seqby scenario run NAME` runs them: each must
// pass, and each prints one line per assertion.
#include <gtest/gtest.h>

#include <sstream>

#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {
namespace {

class EngineScenario : public ::testing::TestWithParam<const char*> {};

TEST_P(EngineScenario, PassesOnTheSimulator) {
  const Scenario* s = find_scenario(GetParam());
  ASSERT_NE(s, nullptr) << GetParam();
  ASSERT_TRUE(s->run_sim);
  ASSERT_TRUE(s->run_redis) << GetParam() << " has no real-Redis form";
  std::ostringstream out;
  ScenarioContext ctx{out, "", 1, ""};
  const ScenarioResult r = s->run_sim(ctx);
  std::cout << out.str();
  EXPECT_TRUE(r.passed()) << out.str() << "replay: seqby scenario run " << GetParam();
  EXPECT_EQ(out.str().find("FAIL"), std::string::npos);
  EXPECT_NE(out.str().find("ok  history checker"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Adr, EngineScenario,
                         ::testing::Values("per_key_order", "no_concurrent_entry",
                                           "cross_key_parallelism", "poison_halt", "crash_failover",
                                           "stall_failover"));
INSTANTIATE_TEST_SUITE_P(ProcessManagers, EngineScenario, ::testing::Values("pm_per_instance"));
INSTANTIATE_TEST_SUITE_P(Issue7, EngineScenario,
                         ::testing::Values("operator_skip_head", "operator_dlq_head",
                                           "cold_partition_reaping", "partition_count_warning"));

TEST(EngineScenarioCatalog, ListsEveryScenarioInDesignOrder) {
  std::vector<std::string> names;
  for (const auto& s : all_scenarios()) names.push_back(s.name);
  const std::vector<std::string> engine = {"per_key_order",         "no_concurrent_entry",
                                           "cross_key_parallelism", "poison_halt",
                                           "crash_failover",        "stall_failover"};
  ASSERT_GE(names.size(), engine.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6), engine);
  for (const auto& s : all_scenarios()) EXPECT_FALSE(s.summary.empty()) << s.name;
}

TEST(EngineScenarioCatalog, PerKeyOrderSaysWhatItChecked) {
  std::ostringstream out;
  ScenarioContext ctx{out, "", 3, ""};
  ASSERT_TRUE(find_scenario("per_key_order")->run_sim(ctx).passed()) << out.str();
  EXPECT_NE(out.str().find("ok  per-key order: client-A applied 1..20 in published order"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace seqby::scenarios
