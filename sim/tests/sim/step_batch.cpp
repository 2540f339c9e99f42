// The steps of many partitions in one script (EngineLimits::step_batch_max, Broker::fenced_steps,
// docs/ARCHITECTURE.md "Steps of many partitions in one script"): an instance's workers that
// step at once share one fenced_steps script, each step still under a lease check of its own.
// Over the default campaign's faults, with every instance batching its steps (handlers that
// commit with the step and handlers that commit themselves), every property holds, a stale
// owner is refused, a lost reply of a step that carried a commit is recorded as our own commit
// once, and a seed is deterministic. Without faults, the same case sends fewer Redis commands
// and commits the same effects. Mixed with the previous release's instances, every property
// holds too.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "seqby/broker/redis_broker.h"
#include "seqby/properties/reached.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {
namespace {

sim::SimCase batched_case(std::uint64_t seed, std::uint32_t step_batch_max, bool with_step,
                          bool faults = true) {
  sim::CaseTemplate t;
  t.faults = faults;
  t.beside_one_in = 0;
  t.commit_with_step_one_in = 0;
  t.steps_batched_one_in = 0;  // step_batch_max as given, 1 included
  t.engine.step_batch_max = step_batch_max;
  sim::SimCase c = sim::generate_case(seed, t);
  c.commit_with_step = with_step;
  return c;
}

constexpr std::uint32_t kBatched = redis::RedisBroker::kStepsPerCallMax;
static_assert(sim::kStepsBatched == kBatched, "a seed drawn to batch batches as the broker can");

TEST(StepBatch, EveryPropertyHoldsUnderTheCampaignsFaults) {
  CampaignOptions o;
  o.seed_first = 0;
  o.seed_last = 39;
  // Half the seeds commit with the step (fenced_commit_next's steps), half commit themselves
  // (fenced_next's).
  o.make_case = [](std::uint64_t seed) { return batched_case(seed, kBatched, seed % 2 == 0); };
  o.run.compute_history_sha256 = false;
  const CampaignResult r = run_campaign(o);
  std::cout << render_campaign_text(r);
  EXPECT_EQ(r.failed, 0u);
  EXPECT_GT(r.events_committed, r.events_published * 9 / 10);
  EXPECT_GT(r.reached.count(properties::Reached::commit_reply_lost), 0u)
      << "no batched step that carried a commit lost its reply";
  EXPECT_GT(r.reached.count(properties::Reached::stale_owner_refused), 0u);
}

// A rolling upgrade to a release that batches (docs/ARCHITECTURE.md "Rolling upgrade"): one or
// two of three instances run the previous release's protocol on the same partitions.
TEST(StepBatch, MixedWithThePreviousReleaseHoldsEveryProperty) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    sim::SimCase c = batched_case(seed, kBatched, seed % 4 < 2);
    c.previous_release_instances = 1 + static_cast<std::uint32_t>(seed % 2);
    ASSERT_LE(c.previous_release_instances, c.instance_count);
    const RunResult r = run_case(c);
    EXPECT_TRUE(r.passed) << "seed " << seed << " (previous_release_instances "
                          << c.previous_release_instances << ")\n"
                          << r.summary;
  }
}

// The default campaign batches in some seeds (CaseTemplate::steps_batched_one_in, sub-stream
// "case/steps"), so every campaign runs fenced_steps; a seed not drawn is the very case it was
// before the draw existed, and a drawn one differs in its step_batch_max only.
TEST(StepBatch, TheDefaultCampaignBatchesTheStepsOfSomeSeedsAndLeavesTheOthersAsTheyWere) {
  sim::CaseTemplate drawn;
  sim::CaseTemplate never = drawn;
  never.steps_batched_one_in = 0;
  std::uint64_t batched = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    sim::SimCase c = sim::generate_case(seed, drawn);
    const sim::SimCase before = sim::generate_case(seed, never);
    ASSERT_EQ(before.engine.step_batch_max, 1u);
    if (c.engine.step_batch_max != 1) {
      ++batched;
      EXPECT_EQ(c.engine.step_batch_max, kBatched) << "seed " << seed;
      EXPECT_NE(sim::describe_case(c).find(" steps=batched"), std::string::npos);
      c.engine.step_batch_max = 1;
    } else {
      EXPECT_EQ(sim::describe_case(c).find("steps="), std::string::npos);
    }
    EXPECT_EQ(case_to_json(c), case_to_json(before)) << "seed " << seed;
  }
  // One in four, drawn: 50 expected of 200.
  EXPECT_GT(batched, 25u);
  EXPECT_LT(batched, 75u);
}

TEST(StepBatch, ASeedIsDeterministic) {
  for (const bool with_step : {true, false}) {
    const DeterminismResult d = check_determinism(batched_case(3, kBatched, with_step));
    EXPECT_TRUE(d.same) << "with_step " << with_step << ": first difference at record "
                        << d.position.value_or(0) << "\n  " << d.first_line << "\n  "
                        << d.second_line;
  }
}

TEST(StepBatch, StepsShareScriptsAndCommitTheSame) {
  RunOptions o;
  o.compute_history_sha256 = false;
  for (const bool with_step : {true, false}) {
    SCOPED_TRACE(with_step ? "commit with the step" : "the handler's own commit");
    const RunResult alone = run_case(batched_case(5, 1, with_step, /*faults=*/false), o);
    const RunResult batched = run_case(batched_case(5, kBatched, with_step, /*faults=*/false), o);
    ASSERT_TRUE(alone.passed) << alone.summary;
    ASSERT_TRUE(batched.passed) << batched.summary;
    EXPECT_EQ(batched.events_published, alone.events_published);
    EXPECT_EQ(batched.events_committed, alone.events_committed);
    EXPECT_EQ(batched.events_committed, batched.events_published);
    EXPECT_LT(batched.redis_commands, alone.redis_commands)
        << "batched: " << batched.redis_commands << " commands, a script per step "
        << alone.redis_commands << ", " << alone.events_committed << " events";
  }
}

}  // namespace
}  // namespace seqby::scenarios
