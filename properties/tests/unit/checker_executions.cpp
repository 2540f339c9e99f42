// The checker's execution properties on small hand-built histories: exclusion (with stale
// overlaps counted apart), what a stale execution may still do, pm_exclusion and parallel.
#include <gtest/gtest.h>

#include "checker_builder.h"
#include "seqby/properties/checker.h"

namespace seqby::properties {
namespace {

using testing::check;
using testing::HistoryBuilder;
using testing::Lease;
using testing::of;
using W = std::vector<std::uint64_t>;

const Lease kW1{"w1", "orders", "A", "billing", 1};
const Lease kW2{"w2", "orders", "A", "billing", 2};

// w1 enters 1-0 under generation 1 and stalls; w2 takes generation 2, re-runs 1-0, commits it and
// enters 2-0 while w1 is still inside 1-0. Returns {w1's enter, w2's acquire, w2's enter of 2-0}.
W stall_and_takeover(HistoryBuilder& h) {
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.read(kW1, "1-0");
  const auto w1_enter = h.enter(kW1, "1-0");
  const auto w2_acquire = h.acquire(kW2);
  h.process(kW2, "1-0", 1);  // the re-run of the same event overlaps w1: allowed
  h.read(kW2, "2-0");
  const auto w2_enter = h.enter(kW2, "2-0");
  h.exit(kW2, "2-0");
  h.commit(kW2, "2-0", 2);
  h.ack(kW2, "2-0");
  h.exit(kW1, "1-0");
  return {w1_enter, w2_acquire, w2_enter};
}

TEST(CheckerExclusion, OverlapWithAStaleExecutionIsCountedApartNotAViolation) {
  HistoryBuilder h;
  const W overlap = stall_and_takeover(h);
  h.event_op(HistoryOp::commit_fenced, kW1, "1-0", 1);
  h.event_op(HistoryOp::ack_fenced, kW1, "1-0");
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_TRUE(report.status(Property::exclusion).checked);
  EXPECT_EQ(report.counters.stale_overlaps, 1u);
  EXPECT_EQ(report.counters.commits_fenced, 1u);
  ASSERT_EQ(report.stale_overlaps.size(), 1u);
  EXPECT_EQ(report.stale_overlaps[0].property, Property::exclusion);
  EXPECT_EQ(report.stale_overlaps[0].key, "A");
  EXPECT_EQ(report.stale_overlaps[0].witnesses, overlap);
}

// Two processes under one owner id (a replacement started with the same --owner-id while the
// old one stalls) inside the same event at two generations: the replacement's exit ends ITS
// enter, not the stalled process's later one, so its next event does not seem to overlap it.
TEST(CheckerExclusion, AnExitEndsTheEnterOfItsOwnGenerationUnderOneOwnerId) {
  const Lease old_process{"pod", "orders", "A", "billing", 1};
  const Lease replacement{"pod", "orders", "A", "billing", 2};
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(old_process);
  h.read(old_process, "1-0");  // then it stalls before entering
  h.acquire(replacement);
  h.read(replacement, "1-0");
  h.enter(replacement, "1-0");
  h.commit(replacement, "1-0", 1);
  h.enter(old_process, "1-0");  // resumed: stale, its lease moved before it entered
  h.exit(replacement, "1-0");
  h.ack(replacement, "1-0");
  h.read(replacement, "2-0");
  h.enter(replacement, "2-0");
  h.event_op(HistoryOp::commit_fenced, old_process, "1-0", 1);
  h.event_op(HistoryOp::exit, old_process, "1-0", -1, "failed: commit fenced");
  h.commit(replacement, "2-0", 2);
  h.exit(replacement, "2-0");
  h.ack(replacement, "2-0");
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.stale_overlaps, 1u) << render_report_text(report);
}

TEST(CheckerExclusion, StaleExecutionThatThenCommitsIsAViolation) {
  HistoryBuilder h;
  W witnesses = stall_and_takeover(h);
  witnesses.push_back(h.commit(kW1, "1-0", 1));  // the sink wrongly accepts the stale commit
  const CheckReport report = check(h);
  const std::vector<Finding> exclusion = of(report, Property::exclusion);
  ASSERT_EQ(exclusion.size(), 1u) << render_report_text(report);
  EXPECT_EQ(exclusion[0].category, "orders");
  EXPECT_EQ(exclusion[0].key, "A");
  EXPECT_EQ(exclusion[0].group, "billing");
  EXPECT_EQ(exclusion[0].witnesses, witnesses);
  EXPECT_EQ(exclusion[0].explanation,
            "the stale execution of event 1-0 (seq 1) by w1 under generation 1 on orders:A (group "
            "billing) overlapped another event's execution and then got an accepted commit: a "
            "stale execution must never commit.");
  EXPECT_FALSE(of(report, Property::fence).empty());  // the fence saw the same commit
}

TEST(CheckerExclusion, TwoEventsOfOneKeyUnderAValidLeaseAtOnceIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  const auto first = h.enter(kW1, "1-0");
  const auto second = h.enter(kW1, "2-0");
  const std::vector<Finding> exclusion = of(check(h, {Property::no_loss}), Property::exclusion);
  ASSERT_EQ(exclusion.size(), 1u);
  EXPECT_EQ(exclusion[0].key, "A");
  EXPECT_EQ(exclusion[0].witnesses, (W{first, second}));
  EXPECT_EQ(exclusion[0].explanation,
            "event 1-0 (seq 1) by w1 under generation 1 and event 2-0 (seq 2) by w1 under "
            "generation 1 were in the handler at once on orders:A (group billing), both under a "
            "valid lease: two different events of one key must never overlap.");
}

TEST(CheckerExclusion, ExecutionsWithoutAnyLeaseAreNeverExcusedAsStale) {
  HistoryBuilder h;  // a shared consumer group: no leases at all
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  const auto first = h.enter(Lease{"w1", "orders", "A", "billing", 0}, "1-0");
  const auto second = h.enter(Lease{"w2", "orders", "A", "billing", 0}, "2-0");
  const std::vector<Finding> exclusion = of(check(h, {Property::no_loss}), Property::exclusion);
  ASSERT_EQ(exclusion.size(), 1u);
  EXPECT_EQ(exclusion[0].witnesses, (W{first, second}));
}

TEST(CheckerExclusion, StaleOwnerEnteringANextEventIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.read(kW1, "1-0");
  const auto in_flight = h.enter(kW1, "1-0");
  h.exit(kW1, "1-0");
  const auto taken = h.acquire(kW2);
  const auto next = h.enter(kW1, "2-0");
  const std::vector<Finding> exclusion = of(check(h, {Property::no_loss}), Property::exclusion);
  ASSERT_EQ(exclusion.size(), 1u);
  EXPECT_EQ(exclusion[0].witnesses, (W{in_flight, taken, next}));
  EXPECT_EQ(exclusion[0].explanation,
            "w1 entered event 2-0 (seq 2) by w1 under generation 1 on orders:A (group billing), a "
            "generation that record #" +
                std::to_string(taken) +
                " had ended: a stale owner may finish only the event it had in flight or had read "
                "under its lease (1-0) and must never enter a next one.");
}

TEST(CheckerExclusion, LateEnterOfTheEventReadBeforeTheLeaseWentStaleIsAllowed) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  h.read(kW1, "2-0");
  h.acquire(kW2);       // the lease check before the enter ran just before this acquire
  h.enter(kW1, "2-0");  // ... and its record lands after it
  h.exit(kW1, "2-0");
  h.event_op(HistoryOp::commit_fenced, kW1, "2-0", 2);
  h.process(kW2, "2-0", 2);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
}

TEST(CheckerExclusion, ACrashEndsTheCrashedNodesExecutions) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.read(kW1, "1-0");
  h.enter(kW1, "1-0");
  h.marker("crash pid=1", "w1");
  h.acquire(kW2);
  h.process(kW2, "1-0", 1);
  h.process(kW2, "2-0", 2);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.stale_overlaps, 0u);
  EXPECT_EQ(report.counters.faults, 1u);
}

TEST(CheckerPmExclusion, EventsOfOneCorrelationValueAcrossCategoriesAtOnceIsAViolation) {
  HistoryBuilder h;
  h.marker("run pm=fulfil seed=7");
  h.publish("order", "X", "1-0");
  h.publish("payment", "X", "1-0");
  const Lease pm{"w1", "", "X", "fulfil", 1};
  h.acquire(pm);
  const auto order = h.event_op(HistoryOp::enter, pm, "1-0", -1, "", "order");
  const auto payment = h.event_op(HistoryOp::enter, pm, "1-0", -1, "", "payment");
  const CheckReport report = check(h, {Property::no_loss});
  EXPECT_TRUE(report.status(Property::pm_exclusion).checked);
  EXPECT_TRUE(of(report, Property::exclusion).empty());
  const std::vector<Finding> found = of(report, Property::pm_exclusion);
  ASSERT_EQ(found.size(), 1u) << render_report_text(report);
  EXPECT_EQ(found[0].category, "");
  EXPECT_EQ(found[0].key, "X");
  EXPECT_EQ(found[0].group, "fulfil");
  EXPECT_EQ(found[0].witnesses, (W{order, payment}));
  EXPECT_NE(found[0].explanation.find("correlation X of process manager fulfil"),
            std::string::npos);
  EXPECT_NE(found[0].explanation.find("of one correlation value must never overlap"),
            std::string::npos);
}

TEST(CheckerPmExclusion, OneAtATimePerCorrelationValueHoldsAndValuesRunInParallel) {
  HistoryBuilder h;
  h.marker("run pm=fulfil");
  h.publish("order", "X", "1-0");
  h.publish("payment", "X", "1-0");
  h.publish("order", "Y", "1-0");
  const Lease x{"w1", "", "X", "fulfil", 1};
  const Lease y{"w2", "", "Y", "fulfil", 1};
  h.acquire(x);
  h.acquire(y);
  h.event_op(HistoryOp::enter, x, "1-0", -1, "", "order");
  h.event_op(HistoryOp::enter, y, "1-0", -1, "", "order");  // another value: may overlap
  h.event_op(HistoryOp::exit, x, "1-0", -1, "ok", "order");
  h.event_op(HistoryOp::commit, x, "1-0", 1, "", "order");
  h.event_op(HistoryOp::exit, y, "1-0", -1, "ok", "order");
  h.event_op(HistoryOp::commit, y, "1-0", 1, "", "order");
  h.event_op(HistoryOp::enter, x, "1-0", -1, "", "payment");
  h.event_op(HistoryOp::exit, x, "1-0", -1, "ok", "payment");
  h.event_op(HistoryOp::commit, x, "1-0", 1, "", "payment");
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_TRUE(report.status(Property::pm_exclusion).checked);
  EXPECT_TRUE(report.status(Property::parallel).checked);
}

TEST(CheckerPmExclusion, NotCheckedWithoutAProcessManagerDeclared) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  const CheckReport report = check(h);
  EXPECT_FALSE(report.status(Property::pm_exclusion).checked);
  EXPECT_EQ(report.status(Property::pm_exclusion).note,
            "no process manager declared in a run header");
}

// w1 owns A, w2 owns B; each processes one event. With `overlap`, B's execution starts while
// A's is open. Returns {acquire A, acquire B, enter A, enter B}.
W two_keys(HistoryBuilder& h, bool overlap) {
  const Lease a{"w1", "orders", "A", "billing", 1};
  const Lease b{"w2", "orders", "B", "billing", 1};
  h.publish("orders", "A", "1-0");
  h.publish("orders", "B", "1-0");
  const auto acquire_a = h.acquire(a);
  const auto acquire_b = h.acquire(b);
  const auto enter_a = h.enter(a, "1-0");
  if (!overlap) h.exit(a, "1-0");
  const auto enter_b = h.enter(b, "1-0");
  if (overlap) h.exit(a, "1-0");
  h.exit(b, "1-0");
  h.commit(a, "1-0", 1);
  h.commit(b, "1-0", 1);
  return {acquire_a, acquire_b, enter_a, enter_b};
}

TEST(CheckerParallel, OverlappingExecutionsOfDifferentKeysHold) {
  HistoryBuilder h;
  two_keys(h, /*overlap=*/true);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_TRUE(report.status(Property::parallel).checked);
}

TEST(CheckerParallel, KeysThatNeverOverlapAreAViolationUnlessSkipped) {
  HistoryBuilder h;
  const W witnesses = two_keys(h, /*overlap=*/false);
  const CheckReport report = check(h);
  const std::vector<Finding> found = of(report, Property::parallel);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "");
  EXPECT_EQ(found[0].witnesses, witnesses);
  EXPECT_EQ(found[0].explanation,
            "w1 and w2 held leases and 2 keys had work (orders:A, orders:B, ...), yet no two "
            "executions of different keys ever overlapped: processing was serialized across "
            "keys.");

  const CheckReport skipped = check(h, {Property::parallel});
  EXPECT_TRUE(skipped.ok());
  EXPECT_FALSE(skipped.status(Property::parallel).checked);
  EXPECT_EQ(skipped.status(Property::parallel).note, "skipped");

  HistoryBuilder with_header;
  with_header.marker("run skip=parallel");
  two_keys(with_header, /*overlap=*/false);
  EXPECT_TRUE(check(with_header).ok());
  CheckOptions ignore_header;
  ignore_header.honor_header_skip = false;
  EXPECT_FALSE(check_history(with_header.records(), ignore_header).ok());
}

TEST(CheckerParallel, NotApplicableWithASingleNode) {
  HistoryBuilder h;
  const Lease a{"w1", "orders", "A", "billing", 1};
  const Lease b{"w1", "orders", "B", "billing", 1};
  h.publish("orders", "A", "1-0");
  h.publish("orders", "B", "1-0");
  h.acquire(a);
  h.acquire(b);
  h.process(a, "1-0", 1);
  h.process(b, "1-0", 1);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok());
  EXPECT_FALSE(report.status(Property::parallel).checked);
  EXPECT_EQ(report.status(Property::parallel).note,
            "not applicable: 1 node(s) acquired leases and 2 key(s) had executions");
}

}  // namespace
}  // namespace seqby::properties
