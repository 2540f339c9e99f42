// The same owner id at two generations (issue 18), on hand-made histories: the reached count
// same_owner_two_generations and its near misses (another owner's newer generation, a refusal
// with no newer generation of its own owner, an older refusal in another unit), and the checker
// judging a replacement with the same owner id: the old generation's refused steps are fine, an
// accepted step or a next event entered under it is a violation.
#include <gtest/gtest.h>

#include <string>

#include "checker_builder.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/reached.h"

namespace seqby::properties {
namespace {

using testing::HistoryBuilder;
using testing::Lease;

const Lease a1{"a", "order", "k1", "billing", 1};
const Lease a2{"a", "order", "k1", "billing", 2};  // the same owner id, a newer generation
const Lease b2{"b", "order", "k1", "billing", 2};
const Lease a1_k2{"a", "order", "k2", "billing", 1};

std::uint64_t same_owner(const HistoryBuilder& h) {
  return count_reached(h.records()).count(Reached::same_owner_two_generations);
}

TEST(ReachedSameOwner, ARefusalUnderAnOlderGenerationOfItsOwnOwnerIdCounts) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.acquire(a1);
  h.read(a1, "1-0");
  h.enter(a1, "1-0");
  h.event_op(HistoryOp::read_fenced, a1, "");  // refused, nobody newer: not the situation
  EXPECT_EQ(same_owner(h), 0u);
  h.acquire(a2);
  h.exit(a1, "1-0");
  h.event_op(HistoryOp::commit_fenced, a1, "1-0", 1);
  h.event_op(HistoryOp::ack_fenced, a1, "1-0");
  h.lease_op(HistoryOp::lose, a1);
  EXPECT_EQ(same_owner(h), 3u);
  EXPECT_EQ(count_reached(h.records()).count(Reached::stale_owner_refused), 2u);
}

TEST(ReachedSameOwner, AnotherOwnersNewerGenerationOrAnotherUnitIsANearMiss) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.acquire(a1);
  h.acquire(a1_k2);
  h.acquire(b2);  // k1 taken by another owner: stale, but not the same owner
  h.event_op(HistoryOp::commit_fenced, a1, "1-0", 1);
  h.lease_op(HistoryOp::lose, a1);
  EXPECT_EQ(same_owner(h), 0u);
  EXPECT_EQ(count_reached(h.records()).count(Reached::stale_owner_refused), 1u);
  const Lease a2_k2{"a", "order", "k2", "billing", 2};
  h.acquire(a2_k2);  // a newer generation of a's, on k2: says nothing about k1
  h.event_op(HistoryOp::ack_fenced, a1, "1-0");
  EXPECT_EQ(same_owner(h), 0u);
}

TEST(ReachedSameOwner, TheCheckerAcceptsTheOldGenerationsRefusedStepsBesideItsReplacement) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.publish("order", "k1", "2-0");
  h.acquire(a1);
  h.read(a1, "1-0");
  h.enter(a1, "1-0");  // a:1 stalls inside 1-0; its replacement takes k1 as a:2
  h.acquire(a2);
  h.event_op(HistoryOp::reclaim, a2, "", -1, "count=1");
  h.process(a2, "1-0", 1);
  h.exit(a1, "1-0");  // the old process resumes: its steps are refused
  h.event_op(HistoryOp::commit_fenced, a1, "1-0", 1);
  h.event_op(HistoryOp::ack_fenced, a1, "1-0");
  h.event_op(HistoryOp::read_fenced, a1, "");
  h.process(a2, "2-0", 2);
  const CheckReport report = testing::check(h, {Property::parallel});
  EXPECT_TRUE(report.violations.empty()) << render_report_text(report);
  EXPECT_GE(same_owner(h), 3u);
}

TEST(ReachedSameOwner, TheCheckerRejectsAnAcceptedCommitOfTheOldGeneration) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.acquire(a1);
  h.read(a1, "1-0");
  h.enter(a1, "1-0");
  h.acquire(a2);
  h.exit(a1, "1-0");
  h.commit(a1, "1-0", 1);  // accepted under a:1 while a:2 holds the lease: a fence violation
  h.ack(a1, "1-0");
  const CheckReport report = testing::check(h, {Property::parallel});
  ASSERT_FALSE(report.violations.empty());
  bool fence = false;
  for (const auto& v : report.violations) fence = fence || v.property == Property::fence;
  EXPECT_TRUE(fence) << render_report_text(report);
}

TEST(ReachedSameOwner, TheCheckerRejectsTheOldGenerationEnteringANextEvent) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.publish("order", "k1", "2-0");
  h.acquire(a1);
  h.read(a1, "1-0");
  h.enter(a1, "1-0");
  h.acquire(a2);
  h.exit(a1, "1-0");
  h.event_op(HistoryOp::commit_fenced, a1, "1-0", 1);
  h.enter(a1, "2-0");  // the stale generation reaches a next event
  h.exit(a1, "2-0");
  h.process(a2, "1-0", 1);
  h.process(a2, "2-0", 2);
  const CheckReport report = testing::check(h, {Property::parallel});
  ASSERT_FALSE(report.violations.empty());
  bool exclusion = false;
  for (const auto& v : report.violations)
    exclusion = exclusion || v.property == Property::exclusion;
  EXPECT_TRUE(exclusion) << render_report_text(report);
}

}  // namespace
}  // namespace seqby::properties
