// One simulated run of the ownership engine end to end (World + checker): a default seed holds
// every property, a run is byte-for-byte deterministic, and a crash in the schedule is followed
// by a reclaim with no loss. Each test prints its seed and the replay line when it fails.
#include <gtest/gtest.h>

#include <map>

#include "seqby/scenarios/run.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios {
namespace {

std::string replay_line(std::uint64_t seed) {
  return "replay: seqby sim --seed " + std::to_string(seed);
}

TEST(WorldRun, DefaultSeedHoldsEveryProperty) {
  const std::uint64_t seed = 1;
  const sim::SimCase c = sim::generate_case(seed);
  const RunResult r = run_case(c);
  std::cout << r.summary;
  EXPECT_TRUE(r.passed) << replay_line(seed);
  EXPECT_EQ(r.events_published, c.events.size());
  EXPECT_GT(r.events_committed, c.events.size() / 2);
  EXPECT_TRUE(r.liveness_reached) << replay_line(seed);
  for (auto p : {properties::Property::order, properties::Property::fence,
                 properties::Property::exclusion, properties::Property::no_loss,
                 properties::Property::poison_halt, properties::Property::parallel}) {
    EXPECT_TRUE(r.report.status(p).checked) << properties::property_name(p);
  }
}

TEST(WorldRun, SameSeedTwiceGivesTheSameHistory) {
  const sim::SimCase c = sim::generate_case(7);
  const DeterminismResult d = check_determinism(c);
  EXPECT_TRUE(d.same) << "first difference at record " << d.position.value_or(0) << "\n  "
                      << d.first_line << "\n  " << d.second_line << "\n"
                      << replay_line(7);
  EXPECT_EQ(d.sha256_first, d.sha256_second);
  EXPECT_EQ(d.sha256_first.size(), 64u);
}

TEST(WorldRun, CrashInTheScheduleIsFollowedByReclaimAndNoLoss) {
  sim::CaseTemplate t;
  t.faults = false;
  t.key_count = 4;
  t.event_count = 200;
  t.publish_span_ms = 4000;
  t.run_ms = 6000;
  t.duration_ms_min = 40;  // every key busy most of the time: a crash finds work in flight
  t.duration_ms_max = 80;
  sim::SimCase c = sim::generate_case(11, t);
  // Crash every instance but one in turn, each while work is in flight.
  c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::crash, 1500, 0, 0, 0, 0});
  c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::crash, 2500, 1, 1000, 0, 0});
  const RunResult r = run_case(c);
  EXPECT_TRUE(r.passed) << r.summary;
  EXPECT_EQ(r.faults.count(sim::FaultKind::crash), 2u);
  EXPECT_EQ(r.events_committed, c.events.size());
  std::uint64_t reclaimed = 0;
  for (const auto& rec : r.history) {
    if (rec.op == HistoryOp::reclaim && rec.detail != "count=0") ++reclaimed;
  }
  EXPECT_GT(reclaimed, 0u) << "no reclaim of a crashed owner's pending entries";
  // Final state per key equals applying every event in order (the sink's effects list).
}

// The first of a few seeds that has an ack or commit decided on the server whose reply never
// reached its instance (lost, then the lease lapsed in a stall): the world records it where the
// server made it, and the run still passes.
TEST(WorldRun, DecisionsWhoseRepliesWereLostAreRecordedWhereTheServerMadeThem) {
  sim::CaseTemplate t;
  t.faults = false;
  t.key_count = 4;
  t.event_count = 200;
  t.publish_span_ms = 4000;
  t.run_ms = 6000;
  std::uint64_t by_world = 0;
  for (std::uint64_t seed = 19; seed < 59 && by_world == 0; ++seed) {
    sim::SimCase c = sim::generate_case(seed, t);
    c.swarm.set(sim::FaultKind::reply_lost, true, 100'000);  // one reply in ten never arrives
    c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::stall, 2000, 0, 4000, 0, 0});
    const RunResult r = run_case(c);
    EXPECT_TRUE(r.passed) << "seed " << seed << "\n" << r.summary;
    EXPECT_GT(r.faults.count(sim::FaultKind::reply_lost), 0u);
    EXPECT_EQ(r.events_committed, c.events.size()) << "seed " << seed;
    for (const auto& rec : r.history) {
      if (rec.detail.find("recorded by the world") != std::string::npos) {
        ++by_world;
        EXPECT_TRUE(rec.op == HistoryOp::commit || rec.op == HistoryOp::ack) << rec.index;
      }
    }
  }
  EXPECT_GT(by_world, 0u) << "no ack or commit decided without its reply arriving";
}

// Found by rapidcheck (CaseProps.NoLossHolds): the only instance crashes at once and stays down
// until the liveness phase, and the only event is poison. Everything before the poison event
// (nothing) was committed, so the liveness phase used to end at once: no instance ever worked on
// the category. A poisoned stream is done only when its poison head halted it.
TEST(WorldRun, APoisonFirstEventIsHaltedEvenWhenItsOnlyInstanceIsDownUntilLiveness) {
  sim::SimCase c = sim::generate_case(1);
  c.instance_count = 1;
  c.keys = {c.keys.front()};
  sim::CaseEvent poison = sim::events_of(c, c.keys.front()).front();
  poison.behaviour = sim::EventBehaviour{};
  poison.behaviour.poison = true;
  c.events = {poison};
  c.swarm = sim::SwarmConfig::none();
  c.schedule.faults = {sim::TimedFault{sim::FaultKind::crash, 0, 0, 0, 0, 0}};
  const RunResult r = run_case(c);
  EXPECT_TRUE(r.passed) << r.summary;
  EXPECT_TRUE(r.liveness_reached);
  std::size_t halts = 0;
  for (const HistoryRecord& rec : r.history) halts += rec.op == HistoryOp::halt ? 1 : 0;
  EXPECT_EQ(halts, 1u) << r.summary;
}

}  // namespace
}  // namespace seqby::scenarios
