// The decision journal against the simulator's own record of a run: the same Lua scripts run in
// the simulated server with the journal on (WorldOptions::journal_maxlen), under the swarm's
// faults (lost requests and replies, resets, crashes, stalls, server restarts, pauses, kills),
// and for every partition the journal must hold, in the same order, every step the world
// recorded where the server decided it (acquires, renewals, reads, acks, halts, releases, reaps),
// plus exactly the commits the effect sink accepted. The world places records by the server's
// own order of commands (world_stamps.cpp), so the two are independent witnesses of one run.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "seqby/core/keyspace.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/sim/sim_case.h"
#include "seqby/sim/world.h"

namespace seqby::sim {
namespace {

using Step = std::tuple<HistoryOp, std::string, std::uint64_t, std::string>;  // op node gen event

// The steps compared in order: each a server decision, recorded by the engine right after the
// reply. A halt is not: the engine records it before its record_halt script runs, so another
// decision (a heartbeat's renew of every lease) may come between the two; halts are compared as
// a set.
bool compared(HistoryOp op) {
  switch (op) {
    case HistoryOp::acquire:
    case HistoryOp::renew:
    case HistoryOp::read:
    case HistoryOp::ack:
    case HistoryOp::release:
    case HistoryOp::reap:
      return true;
    default:
      return false;
  }
}

std::string describe(const std::vector<Step>& steps, std::size_t at) {
  if (at >= steps.size()) return "(end)";
  const auto& [op, node, generation, event] = steps[at];
  return std::string(history_op_name(op)) + " " + node + " gen " + std::to_string(generation) +
         " " + event;
}

// Both key layouts, and the flat one with the workers' steps batched (step_batch_max:
// fenced_steps, every step journaled by its own part of one script). Under the cluster layout
// one engine call may be several scripts (a per-slot batch of acquire_many or renew_many, each in
// its own slot), so this is also the witness that the world sorts each record to the script that
// decided it, not to its call's last one; with steps batched, that the records of the workers a
// script answered are sorted to it.
struct JournalRun {
  KeyLayout layout;
  std::uint32_t step_batch_max;
};

class JournalMatchesWorld : public ::testing::TestWithParam<JournalRun> {};

TEST_P(JournalMatchesWorld, EveryDecidedStepIsJournaledInTheServersOrderUnderTheSwarm) {
  const KeyLayout layout = GetParam().layout;
  std::uint64_t journaled_records = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SimCase c = generate_case(seed);
    c.engine.step_batch_max = GetParam().step_batch_max;
    if (!c.pm_categories.empty()) continue;
    World world(c, WorldOptions{100000, layout});
    world.run();
    const std::vector<HistoryRecord> history = world.take_history();
    for (const std::string& key : c.keys) {
      const PartitionRef partition{c.category, key, layout};
      // The world's steps of this partition, in decision order (only what reached an engine).
      std::vector<Step> decided;
      std::vector<std::int64_t> world_commits;
      std::multiset<Step> world_halts;
      for (const HistoryRecord& r : history) {
        // The partition's journal is its group's (a beside process manager journals its unit's).
        if (r.category != c.category || r.key != key || r.group != c.group) continue;
        if (r.op == HistoryOp::commit) world_commits.push_back(r.seq);
        if (r.op == HistoryOp::halt) world_halts.emplace(r.op, r.node, r.generation, r.event_id);
        if (compared(r.op)) decided.emplace_back(r.op, r.node, r.generation, r.event_id);
      }
      const redis::Reply range =
          world.redis().execute({"XRANGE", journal_stream_name(partition), "-", "+"});
      Result<std::vector<HistoryRecord>> journal = redis::history_from_xrange(range);
      ASSERT_TRUE(journal.ok()) << journal.error().message;
      journaled_records += journal.value().size();
      std::vector<Step> journaled;
      std::vector<std::int64_t> journal_commits;
      std::multiset<Step> journal_halts;
      std::set<std::pair<std::string, std::uint64_t>> refused;  // (node, generation) fenced
      for (const HistoryRecord& r : journal.value()) {
        if (r.op == HistoryOp::commit) journal_commits.push_back(r.seq);
        if (r.op == HistoryOp::halt) journal_halts.emplace(r.op, r.node, r.generation, r.event_id);
        if (r.op == HistoryOp::lose) refused.emplace(r.node, r.generation);
        if (compared(r.op)) journaled.emplace_back(r.op, r.node, r.generation, r.event_id);
      }
      // Accepted commits: exactly the same, in the same order (the world adds the accepted
      // commits whose replies were lost; the journal has every one the sink accepted).
      std::vector<std::int64_t> world_accepted;
      for (std::int64_t seq : world_commits) {
        if (world_accepted.empty() || seq > world_accepted.back()) world_accepted.push_back(seq);
      }
      EXPECT_EQ(journal_commits, world_accepted) << "seed " << seed << " key " << key;
      // Every halt an engine recorded was journaled (by its record_halt script), unless the
      // fence refused that script: an engine records a halt before its record_halt runs, and
      // a stale owner's (a stalled process whose replacement took the lease) is refused and
      // journaled as a `lose` of its generation instead.
      for (const Step& halt : world_halts) {
        if (journal_halts.count(halt) < world_halts.count(halt) &&
            refused.count({std::get<1>(halt), std::get<2>(halt)}) > 0) {
          continue;
        }
        EXPECT_GE(journal_halts.count(halt), world_halts.count(halt))
            << "seed " << seed << " key " << key << ": " << std::get<1>(halt) << " halt of "
            << std::get<3>(halt) << " not journaled";
      }
      // Every step an engine recorded is in the journal, in order; the journal may hold more
      // (a decision whose reply never reached its engine).
      std::size_t at = 0;
      for (std::size_t i = 0; i < decided.size(); ++i) {
        while (at < journaled.size() && journaled[at] != decided[i]) ++at;
        ASSERT_LT(at, journaled.size())
            << "seed " << seed << " key " << key << ": the world's step " << i << " ("
            << describe(decided, i) << ") is not in the journal after "
            << describe(journaled, at == 0 ? 0 : at - 1);
        ++at;
      }
    }
  }
  EXPECT_GT(journaled_records, 1000u);  // the campaign did work
}

INSTANTIATE_TEST_SUITE_P(BothLayouts, JournalMatchesWorld,
                         ::testing::Values(JournalRun{KeyLayout::flat, 1},
                                           JournalRun{KeyLayout::cluster, 1},
                                           JournalRun{KeyLayout::flat, 32}),
                         [](const ::testing::TestParamInfo<JournalRun>& info) {
                           return std::string(key_layout_name(info.param.layout)) +
                                  (info.param.step_batch_max > 1 ? "_steps_batched" : "");
                         });

}  // namespace
}  // namespace seqby::sim
