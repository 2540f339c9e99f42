// What a lossy failover undoes (markers.h: replica_lag, then lossy_failover of the same shard):
// the checker judges the history the surviving state tells. Each test builds one history twice,
// once with the two markers around the undone writes and once without, so that it shows what the
// markers change and that the same steps are violations when nothing undid them.
#include <gtest/gtest.h>

#include "checker_builder.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/markers.h"

namespace seqby::properties {
namespace {

using testing::check;
using testing::HistoryBuilder;
using testing::Lease;
using testing::of;

using W = std::vector<std::uint64_t>;

const Lease kW1{"w1", "orders", "A", "billing", 1};
const Lease kW2{"w2", "orders", "A", "billing", 2};
const Lease kW3Again2{"w3", "orders", "A", "billing", 2};
const Lease kB1{"w1", "orders", "B", "billing", 1};

void lag(HistoryBuilder& h, bool lossy, const std::vector<std::string>& keys = {"A"}) {
  if (lossy) h.add(replica_lag_record(1, keys));
}
std::uint64_t fail_over(HistoryBuilder& h, bool lossy) {
  return lossy ? h.add(lossy_failover_record(1, "sim-node-4:7004")) : 0;
}

// Seqs 1 and 2 of orders:A published, w1 holding generation 1 and done with seq 1, then (when
// `lossy`) the replica's lag begins.
HistoryBuilder first_handled_then_lag(bool lossy) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  lag(h, lossy);
  return h;
}

// w1 commits seq 2; its lease lapses and w2 takes generation 2; then the failover undoes the
// commit, w2's acquire and the fence counter with them, and w3 is given generation 2 again and
// commits seq 2 again.
HistoryBuilder regranted(bool lossy) {
  HistoryBuilder h = first_handled_then_lag(lossy);
  h.process(kW1, "2-0", 2);
  h.acquire(kW2);
  fail_over(h, lossy);
  h.acquire(kW3Again2);
  h.process(kW3Again2, "2-0", 2);
  return h;
}

TEST(CheckerLossyFailover, AnUndoneCommitIsMadeAgainUnderARegrantedGeneration) {
  const CheckReport report = check(regranted(true));
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.lossy_failovers, 1u);
  EXPECT_EQ(report.counters.records_undone, 3u);  // w1's commit and ack of seq 2, w2's acquire
  EXPECT_EQ(report.counters.publishes_lost, 0u);
  EXPECT_NE(render_report_text(report).find("lossy failovers 1 (records undone 3"),
            std::string::npos);

  const CheckReport unmarked = check(regranted(false));
  EXPECT_EQ(of(unmarked, Property::fence).size(), 1u) << render_report_text(unmarked);
  EXPECT_EQ(of(unmarked, Property::order).size(), 1u) << render_report_text(unmarked);
  EXPECT_NE(of(unmarked, Property::order)[0].explanation.find("committed twice"),
            std::string::npos);
}

// Seq 2 and 3 are published during the lag and lost; seq 4 is published after. The lane owes
// seq 1 only, and a commit of seq 4 is a gap.
HistoryBuilder lost_publishes(bool lossy, bool commit_after_loss) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  lag(h, lossy);
  h.publish("orders", "A", "2-0");
  h.publish("orders", "A", "3-0");
  fail_over(h, lossy);
  h.publish("orders", "A", "4-0");
  if (commit_after_loss) h.commit(kW1, "4-0", 4);
  return h;
}

TEST(CheckerLossyFailover, ALostPublishEndsWhatItsLaneOwes) {
  const CheckReport report = check(lost_publishes(true, false));
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.publishes_lost, 2u);

  const CheckReport unmarked = check(lost_publishes(false, false));
  ASSERT_EQ(of(unmarked, Property::no_loss).size(), 1u) << render_report_text(unmarked);
  EXPECT_NE(of(unmarked, Property::no_loss)[0].explanation.find("seq 2 (event 2-0)"),
            std::string::npos);

  // Nothing behind a lost publish may commit: a numbered sink never gets the seq before it.
  const CheckReport beyond = check(lost_publishes(true, true));
  EXPECT_EQ(of(beyond, Property::order).size(), 1u) << render_report_text(beyond);
  EXPECT_EQ(of(beyond, Property::no_loss).size(), 1u) << render_report_text(beyond);
}

// w1 reads seq 2 during the lag, the failover loses its publish (and the delivery), and w1, still
// holding its lease (acquired before the lag), commits it all the same: the lane goes on, seq 3
// (published after) commits next, and the lost entry needs no ack.
TEST(CheckerLossyFailover, ALostPublishAlreadyReadMayStillCommitAndTheLaneGoesOn) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  lag(h, true);
  h.publish("orders", "A", "2-0");
  h.read(kW1, "2-0");
  h.enter(kW1, "2-0");
  fail_over(h, true);
  h.publish("orders", "A", "3-0");
  h.exit(kW1, "2-0");
  h.commit(kW1, "2-0", 2);
  h.process(kW1, "3-0", 3);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.publishes_lost, 1u);
  // Committed after the failover, once: a second commit of it is still a repeat.
  h.commit(kW1, "2-0", 2);
  EXPECT_EQ(of(check(h), Property::order).size(), 1u);
}

// w1 acquires during the lag and is inside seq 1's handler when the failover takes its lease.
// w2 then acquires generation 1 again and handles seq 1 and seq 2 while w1 is still inside: a
// stale overlap (w1 lost its lease at the failover), not a violation; but a step of w1 accepted
// after the failover is a fence violation witnessed by the failover.
HistoryBuilder holder_undone(bool w1_commits_after) {
  HistoryBuilder h;
  const Lease w1{"w1", "orders", "A", "billing", 1};
  const Lease w2{"w2", "orders", "A", "billing", 1};
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  lag(h, true);
  h.acquire(w1);
  h.read(w1, "1-0");
  h.enter(w1, "1-0");
  fail_over(h, true);
  h.acquire(w2);
  h.process(w2, "1-0", 1);
  h.read(w2, "2-0");
  h.enter(w2, "2-0");
  h.exit(w1, "1-0");
  if (w1_commits_after) h.commit(w1, "1-0", 1);
  h.exit(w2, "2-0");
  h.commit(w2, "2-0", 2);
  h.ack(w2, "2-0");
  return h;
}

TEST(CheckerLossyFailover, AHolderWhoseAcquireWasUndoneIsStaleFromTheFailover) {
  const CheckReport report = check(holder_undone(false));
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.stale_overlaps, 1u) << render_report_text(report);

  const CheckReport stale_commit = check(holder_undone(true));
  const std::vector<Finding> fence = of(stale_commit, Property::fence);
  ASSERT_EQ(fence.size(), 1u) << render_report_text(stale_commit);
  // The latest acquire of generation 1 is w2's: w1's accepted commit is under another's lease.
  EXPECT_NE(fence[0].explanation.find("which w2 had acquired, not w1"), std::string::npos)
      << fence[0].explanation;
}

TEST(CheckerLossyFailover, AStepUnderAnUndoneLeaseBeforeAnyNewAcquireIsStaleAtTheFailover) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.add(replica_lag_record(1, {"A"}));
  const std::uint64_t acquire = h.acquire(kW1);
  const std::uint64_t failover = fail_over(h, true);
  const std::uint64_t read = h.read(kW1, "1-0");
  const CheckReport report = check(h, {Property::no_loss});
  const std::vector<Finding> fence = of(report, Property::fence);
  ASSERT_EQ(fence.size(), 1u) << render_report_text(report);
  EXPECT_EQ(fence[0].witnesses, (W{acquire, failover, read}));
  EXPECT_NE(fence[0].explanation.find("lossy failover"), std::string::npos);
}

// w1 commits seq 2 during the lag and its ack reply is lost; the failover undoes the commit, puts
// the entry back, and w1's retried ack takes it: seq 2 is never handled again. The checker counts
// the loss (the documented cost of a failover without the durability option) and owes the lane
// nothing from seq 2 on.
HistoryBuilder retried_ack(bool lossy) {
  HistoryBuilder h = first_handled_then_lag(lossy);
  h.read(kW1, "2-0");
  h.enter(kW1, "2-0");
  h.exit(kW1, "2-0");
  h.commit(kW1, "2-0", 2);
  fail_over(h, lossy);
  h.ack(kW1, "2-0");
  return h;
}

TEST(CheckerLossyFailover, AnAckThatTakesAnEntryWhoseCommitWasUndoneLosesTheEvent) {
  const CheckReport report = check(retried_ack(true));
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.commits_lost, 1u);
  EXPECT_NE(render_report_text(report).find("commits lost 1"), std::string::npos);
  EXPECT_EQ(check(retried_ack(false)).counters.commits_lost, 0u);  // nothing undone: committed
}

// The owner reaps the drained stream during the lag; the failover brings the stream back while the
// reap's removal from the index (another slot) stands, so its last events are never found again.
TEST(CheckerLossyFailover, AReapUndoneStrandsTheStreamFromItsFirstUncommittedSeq) {
  HistoryBuilder h = first_handled_then_lag(true);
  h.process(kW1, "2-0", 2);
  h.lease_op(HistoryOp::reap, kW1);
  fail_over(h, true);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  // The same without the reap: seq 2's undone commit is owed again.
  HistoryBuilder no_reap = first_handled_then_lag(true);
  no_reap.process(kW1, "2-0", 2);
  fail_over(no_reap, true);
  const std::vector<Finding> lost = of(check(no_reap), Property::no_loss);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_NE(lost[0].explanation.find("seq 2 (event 2-0)"), std::string::npos);
}

// The category's index is on the lagging shard, A's stream on another: A was reaped before the
// lag, seq 2's publish indexed it again inside the lag, and the failover undoes that while the
// entry stays. Discovery may never find A again (cluster seed 600990: its holders released it as
// reaped), so seq 2 is owed no commit. The same history is a loss when the shard did not serve
// the index, or when A was still indexed as the lag began (the rollback keeps it indexed).
HistoryBuilder reindexed_in_the_lag(const std::vector<std::string>& indexes, bool reaped_before) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  if (reaped_before) h.lease_op(HistoryOp::reap, kW1);
  h.add(replica_lag_record(1, {}, indexes));
  h.publish("orders", "A", "2-0");
  fail_over(h, true);
  return h;
}

TEST(CheckerLossyFailover, AKeyTheIndexsFailoverTookOutAgainIsOwedNothingUncommitted) {
  const CheckReport report = check(reindexed_in_the_lag({"orders"}, true));
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.keys_unindexed, 1u);
  EXPECT_NE(render_report_text(report).find("keys unindexed 1"), std::string::npos);
  for (const HistoryBuilder& owed :
       {reindexed_in_the_lag({}, true), reindexed_in_the_lag({"payments"}, true),
        reindexed_in_the_lag({"orders"}, false)}) {
    const CheckReport lost = check(owed);
    const std::vector<Finding> no_loss = of(lost, Property::no_loss);
    ASSERT_EQ(no_loss.size(), 1u) << render_report_text(lost);
    EXPECT_NE(no_loss[0].explanation.find("seq 2 (event 2-0)"), std::string::npos)
        << no_loss[0].explanation;
  }
  // A commit made anyway (a holder that read it before the failover) is still checked in order.
  HistoryBuilder committed = reindexed_in_the_lag({"orders"}, true);
  committed.acquire(kW2);
  committed.process(kW2, "2-0", 2);
  EXPECT_TRUE(check(committed).ok()) << render_report_text(check(committed));
}

// A holder that found A in no index while A's stream held entries put it back (Broker::reindex):
// its warn is counted, and what it then commits is checked as any commit.
TEST(CheckerLossyFailover, AKeyItsHolderPutBackIsCounted) {
  HistoryBuilder h = reindexed_in_the_lag({"orders"}, true);
  h.acquire(kW2);
  h.lease_op(HistoryOp::warn, kW2, std::string(kPutBackWarning));
  h.process(kW2, "2-0", 2);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.keys_put_back, 1u);
  EXPECT_NE(render_report_text(report).find("keys put back 1"), std::string::npos);
  EXPECT_EQ(check(reindexed_in_the_lag({"orders"}, true)).counters.keys_put_back, 0u);
}

TEST(CheckerLossyFailover, OnlyTheKeysOfTheLaggingMasterAreUndone) {
  HistoryBuilder h;
  h.publish("orders", "B", "1-0");
  h.acquire(kB1);
  h.add(replica_lag_record(1, {"A"}));  // B's writes are on another shard
  h.process(kB1, "1-0", 1);
  fail_over(h, true);
  h.process(kB1, "1-0", 1);
  const CheckReport report = check(h);
  EXPECT_EQ(report.counters.records_undone, 0u);
  ASSERT_EQ(of(report, Property::order).size(), 1u) << render_report_text(report);
}

TEST(CheckerLossyFailover, MarkersRoundTripAndAFailoverWithoutALagIsNotedAndIgnored) {
  const HistoryRecord begin = replica_lag_record(3, {"k1", "k7"});
  EXPECT_EQ(begin.detail, "replica_lag shard=3 keys=k1,k7 begin");
  const std::optional<FailoverMarker> parsed = parse_failover_marker(begin);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->shard, 3u);
  EXPECT_EQ(parsed->keys, (std::vector<std::string>{"k1", "k7"}));
  EXPECT_FALSE(parsed->lossy_failover);
  EXPECT_TRUE(parsed->indexes.empty());
  const HistoryRecord beside_index = replica_lag_record(0, {"k2"}, {"orders", "payments"});
  EXPECT_EQ(beside_index.detail, "replica_lag shard=0 keys=k2 indexes=orders,payments begin");
  ASSERT_TRUE(parse_failover_marker(beside_index).has_value());
  EXPECT_EQ(parse_failover_marker(beside_index)->indexes,
            (std::vector<std::string>{"orders", "payments"}));
  const HistoryRecord end = lossy_failover_record(3, "sim-node-3:7003");
  EXPECT_EQ(end.detail, "lossy_failover shard=3 master=sim-node-3:7003");
  ASSERT_TRUE(parse_failover_marker(end).has_value());
  EXPECT_TRUE(parse_failover_marker(end)->lossy_failover);
  HistoryRecord other;
  other.op = HistoryOp::fault;
  other.detail = "failover shard=3 master=sim-node-3:7003";
  EXPECT_FALSE(parse_failover_marker(other).has_value());

  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  h.add(lossy_failover_record(1, "sim-node-4:7004"));
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.lossy_failovers, 0u);
  ASSERT_FALSE(report.notes.empty());
  EXPECT_NE(report.notes.front().find("follows no replica_lag"), std::string::npos);
}

}  // namespace
}  // namespace seqby::properties
