// The operating scenarios of issue 7 on the simulator (each passing is asserted with the engine
// scenarios in scenario_engine.cpp), what the skip scenario says, and the reap race campaign:
// bursts of publishes separated by idle gaps around reap_idle_ms, swarm faults on, every property
// holding on every seed, reaps happening and some publishes landing right at a reap of their key.
#include <gtest/gtest.h>

#include <sstream>

#include "cli_run.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/ops_reap_race.h"

namespace seqby::scenarios {
namespace {

TEST(OpsScenarioText, SkipSaysTheOwnerResumedInOrder) {
  std::ostringstream out;
  ScenarioContext ctx{out, "", 2, ""};
  ASSERT_TRUE(find_scenario("operator_skip_head")->run_sim(ctx).passed()) << out.str();
  EXPECT_NE(out.str().find("ok  client-A goes on in order after the skip: commits 1,2,4,5,6,7,8"),
            std::string::npos)
      << out.str();
}

TEST(ReapRace, PublishesRacingReapsLoseNothingAndNeverReuseAGeneration) {
  const ReapRaceResult r = run_reap_race(1, 200, 2);
  std::cout << render_reap_race(r);
  EXPECT_EQ(r.runs, 200u);
  EXPECT_TRUE(r.failed_seeds.empty()) << render_reap_race(r);
  EXPECT_EQ(r.generation_reuses, 0u);
  EXPECT_GT(r.reaps, 0u) << "the campaign must reap";
  EXPECT_GT(r.raced_publishes, 0u)
      << "some publish must land within " << kReapRaceWindowMs << " ms of a reap of its key";
}

TEST(ReapRace, SameSeedSameCase) {
  EXPECT_EQ(sim::describe_case(reap_race_case(7)), sim::describe_case(reap_race_case(7)));
  EXPECT_NE(sim::describe_case(reap_race_case(7)), sim::describe_case(reap_race_case(8)));
}

TEST(ReapRaceCommand, SeedsRunTheCampaignAndExitZero) {
  const auto run =
      apps::testing::run_seqby({"scenario", "run", "cold_partition_reaping", "--seeds", "1..20"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("reap race: 20 seeds, 0 failed;"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("scenario cold_partition_reaping (sim, seeds 1..20): passed\n"),
            std::string::npos)
      << run.out;
}

TEST(ReapRaceCommand, SeedsForAnotherScenarioExitTwo) {
  const auto run =
      apps::testing::run_seqby({"scenario", "run", "per_key_order", "--seeds", "1..3"});
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("--seeds A..B runs only cold_partition_reaping"), std::string::npos)
      << run.err;
}

}  // namespace
}  // namespace seqby::scenarios
