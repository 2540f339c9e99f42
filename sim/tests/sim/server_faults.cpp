// The server faults in whole runs (World + checker): a campaign with each kind forced on holds
// every property; a CLIENT PAUSE past the lease makes every lease lapse and be acquired again
// while nothing is lost; a restart with persistence loses nothing; a restart without it repeats
// generations, which the engine refuses by stopping at its check.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios {
namespace {

using sim::FaultKind;

// A small case with the seed's swarm, and `kind` on at `rate_ppm` per second (or instance-second).
sim::SimCase forced_case(std::uint64_t seed, FaultKind kind, std::uint32_t rate_ppm) {
  sim::CaseTemplate t;
  t.key_count = 8;
  t.event_count = 200;
  t.publish_span_ms = 5000;
  t.run_ms = 8000;
  sim::SimCase c = sim::generate_case(seed, t);
  c.swarm.set(kind, true, rate_ppm);
  c.schedule = sim::draw_fault_schedule(sim::Rng(seed).derive("case/faults"), c.swarm,
                                        c.instance_count, 0, c.run_ms);
  return c;
}

// A fault-free small case with one scheduled fault.
sim::SimCase one_fault_case(std::uint64_t seed, sim::TimedFault fault) {
  sim::CaseTemplate t;
  t.faults = false;
  t.key_count = 4;
  t.event_count = 200;
  t.publish_span_ms = 6000;
  t.run_ms = 8000;
  sim::SimCase c = sim::generate_case(seed, t);
  c.schedule.faults.push_back(fault);
  return c;
}

class ForcedServerFault : public ::testing::TestWithParam<FaultKind> {};

TEST_P(ForcedServerFault, CampaignHoldsEveryProperty) {
  const FaultKind kind = GetParam();
  CampaignOptions o;
  o.seed_first = 1;
  o.seed_last = 20;
  o.jobs = 2;
  o.make_case = [kind](std::uint64_t seed) { return forced_case(seed, kind, 200'000); };
  const CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.failed, 0u) << render_campaign_text(r);
  EXPECT_GT(r.faults.count(kind), 10u) << render_campaign_text(r);
  EXPECT_EQ(r.properties_checked.at("no_loss"), 20u);
}

INSTANTIATE_TEST_SUITE_P(ServerFaults, ForcedServerFault,
                         ::testing::Values(FaultKind::server_restart, FaultKind::script_flush,
                                           FaultKind::client_pause, FaultKind::client_kill),
                         [](const auto& info) { return sim::fault_kind_name(info.param); });

TEST(ServerFaults, EveryServerKindAtOnceIsDeterministic) {
  sim::SimCase c = forced_case(3, FaultKind::server_restart, 200'000);
  for (FaultKind kind :
       {FaultKind::script_flush, FaultKind::client_pause, FaultKind::client_kill}) {
    c.swarm.set(kind, true, 200'000);
  }
  c.schedule = sim::draw_fault_schedule(sim::Rng(3).derive("case/faults"), c.swarm,
                                        c.instance_count, 0, c.run_ms);
  const DeterminismResult d = check_determinism(c);
  EXPECT_TRUE(d.same) << "first difference at record " << d.position.value_or(0) << "\n  "
                      << d.first_line << "\n  " << d.second_line;
}

TEST(ServerFaults, ACaseFileKeepsTheServerFaultsAndReplaysToTheSameHistory) {
  sim::SimCase c = forced_case(4, FaultKind::client_pause, 200'000);
  for (FaultKind kind : {FaultKind::script_flush, FaultKind::client_kill}) {
    c.swarm.set(kind, true, 200'000);
  }
  c.schedule = sim::draw_fault_schedule(sim::Rng(4).derive("case/faults"), c.swarm,
                                        c.instance_count, 0, c.run_ms);
  // And one restart, away from the pause (a pause while the server is down would not count).
  c.schedule.faults.insert(c.schedule.faults.begin() + 1,
                           sim::TimedFault{FaultKind::server_restart, 1000, 0, 400, 0, 0});
  Result<sim::SimCase> back = case_from_json(case_to_json(c), "x.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().schedule, c.schedule);
  EXPECT_EQ(back.value().swarm.describe(), c.swarm.describe());
  const RunResult first = run_case(c);
  EXPECT_TRUE(first.passed) << first.summary;
  for (FaultKind kind : {FaultKind::client_pause, FaultKind::server_restart,
                         FaultKind::script_flush, FaultKind::client_kill}) {
    EXPECT_GT(first.faults.count(kind), 0u) << sim::fault_kind_name(kind) << "\n"
                                            << c.schedule.describe();
  }
  ASSERT_EQ(first.history_sha256.size(), 64u);
  EXPECT_EQ(run_case(back.value()).history_sha256, first.history_sha256);
}

TEST(ServerFaults, ClientPausePastTheLeaseLapsesEveryLeaseAndLosesNothing) {
  const sim::SimCase c =
      one_fault_case(5, sim::TimedFault{FaultKind::client_pause, 3000, 0, 5000, 0, 0});
  ASSERT_GT(5000u, c.engine.lease_ttl_ms);
  const RunResult r = run_case(c);
  EXPECT_TRUE(r.passed) << r.summary;
  EXPECT_EQ(r.faults.count(FaultKind::client_pause), 1u);
  EXPECT_EQ(r.events_committed, c.events.size());
  // Nothing the server decided falls inside the pause; after it, the lapsed leases are taken
  // again under new generations (the old owners' queued renewals find them gone).
  std::uint64_t inside = 0, acquired_after = 0;
  for (const auto& rec : r.history) {
    const bool decided = rec.op == HistoryOp::acquire || rec.op == HistoryOp::commit ||
                         rec.op == HistoryOp::ack || rec.op == HistoryOp::renew;
    if (decided && rec.time_ms > 3001 && rec.time_ms < 8000) ++inside;
    if (rec.op == HistoryOp::acquire && rec.time_ms >= 8000 && rec.generation >= 2) {
      ++acquired_after;
    }
  }
  EXPECT_EQ(inside, 0u);
  EXPECT_GT(acquired_after, 0u) << r.summary;
}

TEST(ServerFaults, RestartWithPersistenceLosesNothing) {
  const sim::SimCase c =
      one_fault_case(6, sim::TimedFault{FaultKind::server_restart, 3000, 0, 1500, 0, 0});
  const RunResult r = run_case(c);
  EXPECT_TRUE(r.passed) << r.summary;
  EXPECT_EQ(r.faults.count(FaultKind::server_restart), 1u);
  EXPECT_EQ(r.events_committed, c.events.size());
}

TEST(ServerFaults, RestartWithoutPersistenceNeverActsOnARepeatedGeneration) {
  // The fence counters are wiped with everything else, so a partition's generations start at 1
  // again (as after a failover to a replica that lagged). An instance granted a generation it
  // already held gives the lease back unused and says so; it acts only under generations above
  // every one it held for that partition. (The wiped streams lose events, so the run itself
  // fails no_loss: this is why server_restart_empty is never in a swarm.)
  const sim::SimCase c =
      one_fault_case(6, sim::TimedFault{FaultKind::server_restart_empty, 3000, 0, 1500, 0, 0});
  const RunResult r = run_case(c);
  std::map<std::pair<std::string, std::string>, std::uint64_t> highest;  // (node, key)
  std::uint64_t refused = 0;
  std::uint64_t acquired_after_restart = 0;
  for (const auto& rec : r.history) {
    if (rec.op == HistoryOp::warn && rec.detail.find("granted again") != std::string::npos) {
      ++refused;
    }
    if (rec.op != HistoryOp::acquire) continue;
    std::uint64_t& held = highest[{rec.node, rec.key}];
    EXPECT_GT(rec.generation, held)
        << rec.node << " acted on generation " << rec.generation << " of " << rec.key << " again";
    held = std::max(held, rec.generation);
    if (rec.time_ms > 4500) ++acquired_after_restart;
  }
  EXPECT_GT(refused, 0u) << "the wiped counters granted no generation twice:\n" << r.summary;
  EXPECT_GT(acquired_after_restart, 0u) << "no partition was taken again:\n" << r.summary;
}

}  // namespace
}  // namespace seqby::scenarios
