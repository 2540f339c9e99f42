// A handler that returns its effect for the engine to commit (HandlerResult::commit_with_step,
// issue 14 "one fenced script per event"): the commit rides on the step that acknowledges the
// event and reads the next (fenced_commit_next). Over the default campaign's faults, with every
// seed's handler committing so, every property holds, a lost reply of that step is recorded as
// our own commit once (Reached::commit_reply_lost), and a seed is deterministic. Without faults,
// the same case sends fewer Redis commands per event than the handler that commits itself (one
// script per event instead of two), and commits the same effects.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>

#include "seqby/properties/reached.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {
namespace {

sim::SimCase step_case(std::uint64_t seed, bool with_step, bool faults = true) {
  sim::CaseTemplate t;
  t.faults = faults;
  t.beside_one_in = 0;
  t.commit_with_step_one_in = 0;
  t.steps_batched_one_in = 0;  // a script per step (sim_step_batch: the steps batched)
  sim::SimCase c = sim::generate_case(seed, t);
  c.commit_with_step = with_step;
  return c;
}

TEST(CommitWithStep, EveryPropertyHoldsUnderTheCampaignsFaults) {
  CampaignOptions o;
  o.seed_first = 0;
  o.seed_last = 29;
  o.make_case = [](std::uint64_t seed) { return step_case(seed, true); };
  o.run.compute_history_sha256 = false;
  const CampaignResult r = run_campaign(o);
  std::cout << render_campaign_text(r);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_GT(r.events_committed, r.events_published * 9 / 10);
  EXPECT_GT(r.reached.count(properties::Reached::commit_reply_lost), 0u)
      << "no step that carried a commit lost its reply";
  EXPECT_GT(r.reached.count(properties::Reached::stale_owner_refused), 0u);
}

TEST(CommitWithStep, ASeedIsDeterministic) {
  const DeterminismResult d = check_determinism(step_case(3, true));
  EXPECT_TRUE(d.same) << "first difference at record " << d.position.value_or(0) << "\n  "
                      << d.first_line << "\n  " << d.second_line;
}

TEST(CommitWithStep, OneScriptPerEventSendsFewerCommandsAndCommitsTheSame) {
  RunOptions o;
  o.compute_history_sha256 = false;
  const RunResult alone = run_case(step_case(5, false, /*faults=*/false), o);
  const RunResult step = run_case(step_case(5, true, /*faults=*/false), o);
  ASSERT_TRUE(alone.passed) << alone.summary;
  ASSERT_TRUE(step.passed) << step.summary;
  EXPECT_EQ(step.events_published, alone.events_published);
  EXPECT_EQ(step.events_committed, alone.events_committed);
  EXPECT_EQ(step.events_committed, step.events_published);
  // One script per event instead of two (fenced_commit, then fenced_next); the rest (heartbeat,
  // discovery, publishes) is the same.
  EXPECT_LT(step.redis_commands + alone.events_committed / 2, alone.redis_commands)
      << "with the step: " << step.redis_commands << " commands, committing alone "
      << alone.redis_commands << ", " << alone.events_committed << " events";
}

}  // namespace
}  // namespace seqby::scenarios
