// Campaigns and the `seqby sim` / `replay` / `check` bodies: a 50-seed mini-campaign on two
// threads holds every property and reports the DESIGN section 8 JSON fields; bad seed ranges and
// bad case files exit 2 naming the value; a saved case replays to the same history.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "seqby/properties/history_io.h"
#include "seqby/properties/reached.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::scenarios {
namespace {

// A smaller default case so 50 seeds stay quick: 3 instances, 8 keys, 200 events, swarm faults.
sim::SimCase mini_case(std::uint64_t seed) {
  sim::CaseTemplate t;
  t.key_count = 8;
  t.event_count = 200;
  t.publish_span_ms = 5000;
  t.run_ms = 8000;
  return sim::generate_case(seed, t);
}

TEST(ScenarioCampaign, FiftySeedsOnTwoJobsHoldEveryProperty) {
  CampaignOptions o;
  o.seed_first = 1;
  o.seed_last = 50;
  o.jobs = 2;
  o.make_case = mini_case;
  std::uint64_t progress_calls = 0;
  o.progress = [&](const SeedOutcome& s) {
    ++progress_calls;
    EXPECT_EQ(s.total, 50u);
  };
  const CampaignResult r = run_campaign(o);
  std::cout << render_campaign_text(r);
  EXPECT_EQ(r.runs, 50u);
  EXPECT_EQ(r.failed, 0u) << render_campaign_text(r);
  EXPECT_EQ(progress_calls, 50u);
  EXPECT_EQ(r.events_published, 50u * 200u);
  EXPECT_EQ(r.properties_checked.at("no_loss"), 50u);
  EXPECT_GT(r.faults.total(), 0u);

  const auto j = nlohmann::json::parse(render_campaign_json(r));
  for (const char* field : {"runs", "failed", "failed_seeds", "events_published",
                            "events_committed", "sim_ms", "wall_ms", "faults", "violations"}) {
    EXPECT_TRUE(j.contains(field)) << field;
  }
  EXPECT_FALSE(j.contains("history_sha256"));  // only for one seed
  EXPECT_EQ(j["faults"].size(), sim::kFaultKindCount);
}

// A campaign counts what each run reached inside the checker's pass (RunOptions::count_reached,
// one history index per run): the same counts as count_reached over the same histories.
TEST(ScenarioCampaign, ReachedCountedInTheCheckersPassEqualsCountReachedAlone) {
  properties::ReachedCounts in_check;
  properties::ReachedCounts alone;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    RunOptions options;
    options.compute_history_sha256 = false;
    options.count_reached = true;
    const RunResult r = run_case(mini_case(seed), options);
    const properties::ReachedCounts counted = properties::count_reached(r.history);
    EXPECT_EQ(r.reached.counts, counted.counts) << "seed " << seed;
    in_check.merge(r.reached);
    alone.merge(counted);
  }
  EXPECT_GT(in_check.count(properties::Reached::instances_in_parallel), 0u);
  RunOptions without;
  without.compute_history_sha256 = false;
  const RunResult r = run_case(mini_case(1), without);
  EXPECT_EQ(r.reached.count(properties::Reached::instances_in_parallel), 0u);  // not asked for
  EXPECT_GT(alone.count(properties::Reached::instances_in_parallel), 0u);
}

TEST(ScenarioCampaign, OneSeedReportsItsHistoryHashAndRunsDeterministically) {
  CampaignOptions o;
  o.seed_first = o.seed_last = 5;
  o.make_case = mini_case;
  o.check_determinism = true;
  const CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.failed, 0u) << render_campaign_text(r);
  EXPECT_EQ(r.history_sha256, run_case(mini_case(5)).history_sha256);
  const auto j = nlohmann::json::parse(render_campaign_json(r));
  EXPECT_EQ(j["history_sha256"], r.history_sha256);
}

TEST(ScenarioCampaign, SavedCaseRoundTripsAndReplaysToTheSameHistory) {
  const sim::SimCase c = mini_case(9);
  Result<sim::SimCase> back = case_from_json(case_to_json(c), "x.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(case_to_json(back.value()), case_to_json(c));
  EXPECT_EQ(back.value().events, c.events);
  EXPECT_EQ(back.value().schedule, c.schedule);
  const std::string dir = ::testing::TempDir() + "/seqby-replay";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(save_case(c, dir + "/seed-9.json").ok());
  std::ostringstream out, err;
  ReplayArgs replay;
  replay.case_path = dir + "/seed-9.json";
  replay.history_out_path = dir + "/seed-9.jsonl";
  EXPECT_EQ(replay_main(replay, out, err), kExitHeld) << out.str() << err.str();
  EXPECT_NE(out.str().find(run_case(c).history_sha256), std::string::npos);
  std::ostringstream check_out;
  EXPECT_EQ(check_main(dir + "/seed-9.jsonl", false, check_out, err), kExitHeld) << check_out.str();
}

TEST(ScenarioCampaign, BadSeedRangesExitTwoNamingTheValue) {
  for (const char* bad : {"5..2", "a..b", "1..", "..4", "1...3", "-1..3"}) {
    SimArgs args;
    args.seeds = bad;
    std::ostringstream out, err;
    EXPECT_EQ(sim_main(args, out, err), kExitBadInput) << bad;
    EXPECT_NE(err.str().find(std::string("'") + bad + "'"), std::string::npos) << err.str();
  }
  EXPECT_EQ(parse_seed_range("3..7").value().last, 7u);
  EXPECT_EQ(parse_seed_range("4").value().first, 4u);
}

// `seqby sim --process-manager`: generated process-manager cases, judged for pm_exclusion too;
// with a --scenario it is bad usage (the scenario brings its own case).
TEST(ScenarioCampaign, ProcessManagerCampaignJudgesPmExclusion) {
  std::ostringstream out, err;
  SimArgs args;
  args.seeds = "1..3";
  args.process_manager = true;
  EXPECT_EQ(sim_main(args, out, err), kExitHeld) << out.str() << err.str();
  EXPECT_NE(out.str().find("pm_exclusion(3)"), std::string::npos) << out.str();

  std::ostringstream err2;
  args.scenario = "per_key_order";
  EXPECT_EQ(sim_main(args, out, err2), kExitBadInput);
  EXPECT_EQ(err2.str(),
            "seqby sim: --process-manager shapes generated cases; a --scenario 'per_key_order' "
            "brings its own\n");
}

TEST(ScenarioCampaign, UnknownVariantAndScenarioListTheKnownNames) {
  std::ostringstream out, err;
  SimArgs args;
  args.variant = "shared_groupx";
  EXPECT_EQ(sim_main(args, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("--variant 'shared_groupx': unknown variant (known: correct, "
                           "shared_group, message_lock, no_fence, dlq_continue, no_reclaim, "
                           "batch_unfenced, group_at_dollar)"),
            std::string::npos)
      << err.str();
  SimArgs args2;
  args2.scenario = "no_such_scenario";
  std::ostringstream err2;
  EXPECT_EQ(sim_main(args2, out, err2), kExitBadInput);
  EXPECT_NE(err2.str().find("known: default, per_key_order"), std::string::npos) << err2.str();
}

}  // namespace
}  // namespace seqby::scenarios
