// The fault stall_replace in a World (issue 18): an instance stalls inside its handlers and a
// replacement starts at once under the SAME owner id, acquires its partitions at newer
// generations and serves them; the stalled process resumes beside it, its steps under the old
// generations are refused, and it is killed a lease TTL later. Asserted: every property holds,
// the fault is counted, the situation is reached (Reached::same_owner_two_generations), no step
// of a superseded generation is accepted after its supersession, and the run is deterministic.
// Then the swarm: a default campaign's seeds draw stall_replace on their own.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>

#include "seqby/properties/reached.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios {
namespace {

sim::SimCase replaced_case(std::uint64_t seed) {
  sim::CaseTemplate t;
  t.faults = false;
  t.key_count = 4;
  t.event_count = 200;
  t.publish_span_ms = 4000;
  t.run_ms = 8000;
  t.duration_ms_min = 40;  // every key busy most of the time: the stall finds work in flight
  t.duration_ms_max = 80;
  sim::SimCase c = sim::generate_case(seed, t);
  // Instance 0 stalls past its lease, instance 1 for a moment, each replaced at once.
  c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::stall_replace, 1500, 0, 4000, 0, 0});
  c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::stall_replace, 2500, 1, 300, 0, 0});
  return c;
}

TEST(SameOwnerWorld, AReplacementWithTheSameOwnerIdFencesTheStalledProcess) {
  const sim::SimCase c = replaced_case(11);
  const RunResult r = run_case(c);
  EXPECT_TRUE(r.passed) << r.summary;
  EXPECT_EQ(r.faults.count(sim::FaultKind::stall_replace), 2u);
  EXPECT_EQ(r.events_committed, c.events.size());
  const properties::ReachedCounts reached = properties::count_reached(r.history);
  EXPECT_GT(reached.count(properties::Reached::same_owner_two_generations), 0u);

  // No accepted step under a generation after a newer one of its unit was acquired.
  std::map<std::tuple<std::string, std::string, std::string>, std::uint64_t> newest;
  std::uint64_t stale_refused = 0;
  for (const HistoryRecord& rec : r.history) {
    const auto unit = std::make_tuple(rec.category, rec.key, rec.group);
    if (rec.op == HistoryOp::acquire) {
      newest[unit] = std::max(newest[unit], rec.generation);
      continue;
    }
    if (rec.generation == 0 || newest[unit] <= rec.generation) continue;
    const bool accepted = rec.op == HistoryOp::read || rec.op == HistoryOp::ack ||
                          rec.op == HistoryOp::commit || rec.op == HistoryOp::renew;
    const bool decided_by_server = rec.detail.find("recorded by the world") != std::string::npos;
    EXPECT_FALSE(accepted && !decided_by_server)
        << "#" << rec.index << " " << history_op_name(rec.op) << " by " << rec.node << ":"
        << rec.generation << " on " << rec.key << " after generation " << newest[unit];
    if (rec.op == HistoryOp::read_fenced || rec.op == HistoryOp::ack_fenced ||
        rec.op == HistoryOp::commit_fenced) {
      ++stale_refused;
    }
  }
  EXPECT_GT(stale_refused, 0u);
}

TEST(SameOwnerWorld, TheRunIsDeterministic) {
  const DeterminismResult d = check_determinism(replaced_case(12));
  EXPECT_TRUE(d.same) << "first difference at record " << d.position.value_or(0) << "\n  "
                      << d.first_line << "\n  " << d.second_line;
}

TEST(SameOwnerWorld, TheSwarmDrawsStallReplaceAndReachesTheSituation) {
  std::uint64_t fired = 0;
  std::uint64_t reached = 0;
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    const sim::SimCase c = sim::generate_case(seed);
    const RunResult r = run_case(c);
    EXPECT_TRUE(r.passed) << r.summary << "replay: seqby sim --seed " << seed;
    fired += r.faults.count(sim::FaultKind::stall_replace);
    reached +=
        properties::count_reached(r.history).count(properties::Reached::same_owner_two_generations);
  }
  EXPECT_GT(fired, 0u);
  EXPECT_GT(reached, 0u);
}

}  // namespace
}  // namespace seqby::scenarios
