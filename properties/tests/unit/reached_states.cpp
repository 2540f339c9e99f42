// The reached situations (seqby/properties/reached.h), each on a hand-made history where it
// happens and on its near miss where it does not: a count that a near miss also raised would
// claim a campaign tested something it never did.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "checker_builder.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/reached.h"

namespace seqby::properties {
namespace {

using testing::HistoryBuilder;
using testing::Lease;

const Lease a1{"a", "order", "k1", "billing", 1};
const Lease b2{"b", "order", "k1", "billing", 2};
const Lease b_k2{"b", "order", "k2", "billing", 1};

// Counted alone and in the checker's pass over its own index (CheckOptions::reached, what a
// campaign uses): every case below holds for both, and they agree on every situation.
std::uint64_t reached(const HistoryBuilder& h, Reached what) {
  const ReachedCounts alone = count_reached(h.records());
  ReachedCounts in_check;
  CheckOptions options;
  options.reached = &in_check;
  (void)check_history(h.records(), options);
  EXPECT_EQ(alone.counts, in_check.counts);
  return alone.count(what);
}

TEST(ReachedStates, EveryNameIsDistinctAndListedOnce) {
  std::set<std::string> names;
  for (Reached what : all_reached()) EXPECT_TRUE(names.insert(reached_name(what)).second);
  EXPECT_EQ(names.size(), kReachedCount);
  EXPECT_EQ(names.count("?"), 0u);
}

TEST(ReachedStates, AStaleOwnerRefusedOnlyAfterItsUnitWasAcquiredAgain) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.acquire(a1);
  h.event_op(HistoryOp::read_fenced, a1, "");  // refused, but nobody else holds k1: not stale
  EXPECT_EQ(reached(h, Reached::stale_owner_refused), 0u);
  h.acquire(b2);
  h.event_op(HistoryOp::commit_fenced, a1, "1-0", 1);
  h.event_op(HistoryOp::ack_fenced, a1, "1-0");
  EXPECT_EQ(reached(h, Reached::stale_owner_refused), 2u);
}

TEST(ReachedStates, AReclaimCountsOnlyWhenItMovedAnEntry) {
  HistoryBuilder h;
  h.acquire(a1);
  h.event_op(HistoryOp::reclaim, a1, "", -1, "count=0");
  EXPECT_EQ(reached(h, Reached::reclaim_moved), 0u);
  h.event_op(HistoryOp::reclaim, a1, "", -1, "count=3");
  EXPECT_EQ(reached(h, Reached::reclaim_moved), 1u);
}

TEST(ReachedStates, ACommitAcceptedAfterALostReply) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.publish("order", "k1", "2-0");
  h.acquire(a1);
  h.process(a1, "1-0", 1);
  EXPECT_EQ(reached(h, Reached::commit_reply_lost), 0u);
  h.event_op(HistoryOp::commit, a1, "2-0", 2, "accepted after a lost reply");
  EXPECT_EQ(reached(h, Reached::commit_reply_lost), 1u);
}

TEST(ReachedStates, AReRunAfterFailoverIsTheSameEventUnderANewerGeneration) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.acquire(a1);
  h.read(a1, "1-0");
  h.enter(a1, "1-0");
  h.exit(a1, "1-0");
  h.enter(a1, "1-0");  // a retry under the same lease: not a failover
  h.exit(a1, "1-0");
  EXPECT_EQ(reached(h, Reached::rerun_after_failover), 0u);
  h.marker("crash", "a");
  h.acquire(b2);
  h.process(b2, "1-0", 1);
  EXPECT_EQ(reached(h, Reached::rerun_after_failover), 1u);
}

TEST(ReachedStates, HaltsResolvedBySkipAndByDlqAreCountedApart) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0", true);
  h.acquire(a1);
  h.event_op(HistoryOp::dlq, a1, "1-0", -1, "by dlq_continue");  // not halted: no resolution
  EXPECT_EQ(reached(h, Reached::halt_resolved_by_dlq), 0u);
  h.event_op(HistoryOp::halt, a1, "1-0", -1, "failed 3 times");
  h.event_op(HistoryOp::skip, a1, "1-0", -1, "operator");
  h.event_op(HistoryOp::halt, a1, "1-0", -1, "failed 3 times");
  h.event_op(HistoryOp::dlq, a1, "1-0", -1, "operator");
  EXPECT_EQ(reached(h, Reached::halt_resolved_by_skip), 1u);
  EXPECT_EQ(reached(h, Reached::halt_resolved_by_dlq), 1u);
}

TEST(ReachedStates, APublishRacedAReapOnlyWithinTheWindow) {
  HistoryBuilder h;  // 10 ms between records
  h.publish("order", "k1", "1-0");
  h.acquire(a1);
  h.lease_op(HistoryOp::reap, a1);
  h.publish("order", "k1", "2-0");  // 30 ms after the publish before the reap
  EXPECT_EQ(reached(h, Reached::reap_raced_publish), 1u);

  HistoryBuilder late;
  late.publish("order", "k1", "1-0");
  late.lease_op(HistoryOp::reap, a1);
  for (int i = 0; i < 12; ++i) late.marker("latency");
  late.publish("order", "k1", "2-0");  // 140 ms after the publish before the reap
  EXPECT_EQ(reached(late, Reached::reap_raced_publish), 0u);
  const ReapRaces races = count_reap_races(late.records());
  EXPECT_EQ(races.reaps, 1u);
  EXPECT_EQ(races.closest_ms, 140u);
}

TEST(ReachedStates, AProcessManagerSwitchingStreamsOfOneValue) {
  HistoryBuilder h;
  h.marker("run pm=fulfil:order+payment");
  const Lease pm{"a", "order", "x1", "fulfil", 1};
  h.publish("order", "x1", "1-0");
  h.publish("order", "x1", "2-0");
  h.publish("payment", "x1", "3-0");
  h.acquire(pm);
  h.event_op(HistoryOp::enter, pm, "1-0", -1, "", "order");
  h.event_op(HistoryOp::exit, pm, "1-0", -1, "ok", "order");
  h.event_op(HistoryOp::enter, pm, "2-0", -1, "", "order");
  h.event_op(HistoryOp::exit, pm, "2-0", -1, "ok", "order");
  EXPECT_EQ(reached(h, Reached::pm_switched_streams), 0u);
  h.event_op(HistoryOp::enter, pm, "3-0", -1, "", "payment");
  h.event_op(HistoryOp::exit, pm, "3-0", -1, "ok", "payment");
  EXPECT_EQ(reached(h, Reached::pm_switched_streams), 1u);
}

TEST(ReachedStates, TwoInstancesInsideDifferentKeysAtOnce) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.publish("order", "k2", "2-0");
  h.acquire(a1);
  h.acquire(b_k2);
  h.process(a1, "1-0", 1);  // one after the other: never at once
  h.process(b_k2, "2-0", 1);
  EXPECT_EQ(reached(h, Reached::instances_in_parallel), 0u);

  HistoryBuilder both;
  both.publish("order", "k1", "1-0");
  both.publish("order", "k2", "2-0");
  both.acquire(a1);
  both.acquire(b_k2);
  both.enter(a1, "1-0");
  both.enter(b_k2, "2-0");
  both.exit(b_k2, "2-0");
  both.exit(a1, "1-0");
  EXPECT_EQ(reached(both, Reached::instances_in_parallel), 1u);
}

}  // namespace
}  // namespace seqby::properties
