// The checker's safety properties on small hand-built histories: order, fence and poison_halt.
// Each property has a history that satisfies it and one that violates it, asserting the
// property, the partition and the witness records.
#include <gtest/gtest.h>

#include "checker_builder.h"
#include "seqby/properties/checker.h"

namespace seqby::properties {
namespace {

using testing::check;
using testing::HistoryBuilder;
using testing::Lease;
using testing::of;

const Lease kW1{"w1", "orders", "A", "billing", 1};
const Lease kW2{"w2", "orders", "A", "billing", 2};

using W = std::vector<std::uint64_t>;

TEST(CheckerOrder, CommitsAndAcksInPublishOrderHold) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.publish("orders", "A", "3-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  h.process(kW1, "2-0", 2);
  h.process(kW1, "3-0", 3);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_TRUE(report.status(Property::order).checked);
  EXPECT_EQ(report.counters.events_published, 3u);
  EXPECT_EQ(report.counters.events_committed, 3u);
  EXPECT_EQ(report.counters.executions, 3u);
}

TEST(CheckerOrder, CommitOfALaterSeqBeforeAnEarlierOneIsAGap) {
  HistoryBuilder h;
  const auto p1 = h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  const auto c2 = h.commit(kW1, "2-0", 2);
  h.commit(kW1, "1-0", 1);
  const CheckReport report = check(h, {Property::no_loss});
  const std::vector<Finding> order = of(report, Property::order);
  ASSERT_EQ(order.size(), 1u) << render_report_text(report);
  EXPECT_EQ(order[0].category, "orders");
  EXPECT_EQ(order[0].key, "A");
  EXPECT_EQ(order[0].group, "billing");
  EXPECT_EQ(order[0].witnesses, (W{p1, c2}));
  EXPECT_EQ(order[0].explanation,
            "seq 2 (event 2-0) was committed by w1 before seq 1 (event 1-0) had been: accepted "
            "commits must follow publish order with no gap.");
  EXPECT_FALSE(report.ok());
}

TEST(CheckerOrder, SameSeqCommittedTwiceIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  const auto first = h.commit(kW1, "1-0", 1);
  const auto second = h.commit(kW1, "1-0", 1);
  const std::vector<Finding> order = of(check(h), Property::order);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_EQ(order[0].witnesses, (W{first, second}));
  EXPECT_NE(order[0].explanation.find("committed twice"), std::string::npos);
}

TEST(CheckerOrder, AckOfALaterEventFirstIsAViolationUnlessAnOperatorSkippedTheEarlier) {
  HistoryBuilder h;
  const auto p1 = h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  const auto a2 = h.ack(kW1, "2-0");
  std::vector<Finding> order = of(check(h, {Property::no_loss}), Property::order);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_EQ(order[0].witnesses, (W{p1, a2}));
  EXPECT_NE(order[0].explanation.find("acks must follow publish order"), std::string::npos);

  HistoryBuilder skipped;
  skipped.publish("orders", "A", "1-0");
  skipped.publish("orders", "A", "2-0");
  skipped.acquire(kW1);
  skipped.event_op(HistoryOp::skip, Lease{"operator", "orders", "A", "billing", 0}, "1-0");
  skipped.ack(kW1, "2-0");
  skipped.ack(kW1, "2-0");  // a repeated ack (a retried XACK) is harmless
  EXPECT_TRUE(of(check(skipped, {Property::no_loss}), Property::order).empty());
}

TEST(CheckerFence, StepsUnderTheCurrentGenerationHoldAcrossAHandover) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  h.lease_op(HistoryOp::release, kW1);
  h.acquire(kW2);
  h.process(kW2, "2-0", 2);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_TRUE(report.status(Property::fence).checked);
}

TEST(CheckerFence, CommitUnderAGenerationAfterALaterAcquireIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  const auto a1 = h.acquire(kW1);
  h.read(kW1, "1-0");
  const auto a2 = h.acquire(kW2);  // w1's lease expired silently; w2 took generation 2
  const auto c1 = h.commit(kW1, "1-0", 1);
  const std::vector<Finding> fence = of(check(h), Property::fence);
  ASSERT_EQ(fence.size(), 1u);
  EXPECT_EQ(fence[0].key, "A");
  EXPECT_EQ(fence[0].witnesses, (W{a1, a2, c1}));
  EXPECT_EQ(fence[0].explanation,
            "commit by w1 of event 1-0 on orders:A (group billing) was accepted under generation "
            "1 after record #" +
                std::to_string(a2) +
                " ended that generation (a later acquire or its release): a stale owner's steps "
                "must be refused.");
}

TEST(CheckerFence, AckAfterReleaseAndStepsWithoutOrUnderAnotherNodesGenerationAreViolations) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  const auto a1 = h.acquire(kW1);
  const auto rel = h.lease_op(HistoryOp::release, kW1);
  const auto ack = h.ack(kW1, "1-0");
  const auto no_lease = h.read(Lease{"w3", "orders", "A", "billing", 0}, "1-0");
  const auto foreign = h.read(Lease{"w3", "orders", "A", "billing", 1}, "1-0");
  const auto unknown = h.read(Lease{"w3", "orders", "A", "billing", 7}, "1-0");
  const std::vector<Finding> fence = of(check(h, {Property::no_loss}), Property::fence);
  // Sorted by witnesses: {a1, rel, ack}, {a1, foreign}, {no_lease}, {unknown}.
  ASSERT_EQ(fence.size(), 4u);
  EXPECT_EQ(fence[0].witnesses, (W{a1, rel, ack}));
  EXPECT_EQ(fence[1].witnesses, (W{a1, foreign}));
  EXPECT_EQ(fence[2].witnesses, (W{no_lease}));
  EXPECT_EQ(fence[3].witnesses, (W{unknown}));
  EXPECT_NE(fence[0].explanation.find("after record #" + std::to_string(rel)), std::string::npos);
  EXPECT_NE(fence[1].explanation.find("which w1 had acquired, not w3"), std::string::npos);
  EXPECT_NE(fence[2].explanation.find("under no lease generation"), std::string::npos);
  EXPECT_NE(fence[3].explanation.find("no acquire of that generation precedes it"),
            std::string::npos);
}

TEST(CheckerFence, AGenerationThatDoesNotIncreaseIsAViolation) {
  HistoryBuilder h;
  h.acquire(kW1);
  const auto a2 = h.acquire(kW2);
  const auto again = h.acquire(Lease{"w3", "orders", "A", "billing", 2});
  const std::vector<Finding> fence = of(check(h), Property::fence);
  ASSERT_EQ(fence.size(), 1u);
  EXPECT_EQ(fence[0].witnesses, (W{a2, again}));
  EXPECT_EQ(fence[0].explanation,
            "w3 acquired generation 2 of orders:A (group billing), which does not exceed "
            "generation 2 acquired by w2 before: generations must strictly increase and never "
            "repeat.");
}

TEST(CheckerPoisonHalt, HaltedPartitionWithOtherKeysFlowingHolds) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0", /*poison=*/true);
  h.publish("orders", "A", "3-0");
  h.publish("orders", "B", "1-0");
  h.acquire(kW1);
  const Lease b{"w1", "orders", "B", "billing", 1};
  h.acquire(b);
  h.process(kW1, "1-0", 1);
  h.read(kW1, "2-0");
  h.enter(kW1, "2-0");
  h.event_op(HistoryOp::exit, kW1, "2-0", -1, "failed: poison");
  h.event_op(HistoryOp::halt, kW1, "2-0", 2);
  h.process(b, "1-0", 1);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.events_poison, 1u);
  EXPECT_EQ(report.counters.halts, 1u);
}

TEST(CheckerPoisonHalt, CommitPastAnUnresolvedPoisonHeadIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  const auto poison = h.publish("orders", "A", "2-0", /*poison=*/true);
  h.publish("orders", "A", "3-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  const auto c3 = h.commit(kW1, "3-0", 3);
  const std::vector<Finding> found = of(check(h), Property::poison_halt);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "A");
  EXPECT_EQ(found[0].witnesses, (W{poison, c3}));
  EXPECT_EQ(found[0].explanation,
            "seq 3 (event 3-0) was committed although seq 2 (event 2-0) before it is an "
            "unresolved poison event: a halted partition must not advance past its head.");
}

TEST(CheckerPoisonHalt, DlqByTheEngineIsAViolationByAnOperatorItResolvesTheHead) {
  HistoryBuilder engine;
  engine.publish("orders", "A", "1-0", /*poison=*/true);
  engine.publish("orders", "A", "2-0");
  engine.acquire(kW1);
  const auto dlq = engine.event_op(HistoryOp::dlq, kW1, "1-0", -1, "engine retries exhausted");
  engine.process(kW1, "2-0", 2);
  const CheckReport bad = check(engine);
  const std::vector<Finding> found = of(bad, Property::poison_halt);
  ASSERT_GE(found.size(), 2u);
  EXPECT_EQ(found[0].witnesses, (W{0, dlq + 4}));  // process(): read, enter, exit, commit
  EXPECT_EQ(found[1].witnesses, (W{dlq}));
  EXPECT_NE(found[1].explanation.find("rather than by an operator"), std::string::npos);

  HistoryBuilder operator_dlq;
  operator_dlq.publish("orders", "A", "1-0", /*poison=*/true);
  operator_dlq.publish("orders", "A", "2-0");
  operator_dlq.acquire(kW1);
  operator_dlq.read(kW1, "1-0");
  operator_dlq.enter(kW1, "1-0");
  operator_dlq.event_op(HistoryOp::exit, kW1, "1-0", -1, "failed: poison");
  operator_dlq.event_op(HistoryOp::halt, kW1, "1-0");
  operator_dlq.event_op(HistoryOp::dlq, Lease{"operator", "orders", "A", "", 0}, "1-0", -1,
                        "operator");
  operator_dlq.process(kW1, "2-0", 2);
  const CheckReport good = check(operator_dlq);
  EXPECT_TRUE(good.ok()) << render_report_text(good);
  EXPECT_EQ(good.counters.dlqs, 1u);
}

}  // namespace
}  // namespace seqby::properties
