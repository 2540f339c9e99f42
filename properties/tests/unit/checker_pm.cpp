// The checker on process managers (ADR decision 2): a PM's unit is a correlation value X whose
// one lease spans the streams C:X of every category it subscribes. pm_exclusion across those
// categories, fence on a stale owner's step on any of them, no_loss on a stream the PM never
// touched (the run header names its categories), parallel counted per correlation value, and
// the run header's `pm=NAME:CAT+CAT` form.
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

constexpr const char* kHeader = "run pm=fulfil:order+payment seed=7";

// A PM lease as the engine records it: acquire category "__pm__:G", key = correlation value.
Lease pm_lease(const std::string& node, const std::string& value, std::uint64_t generation) {
  return Lease{node, "__pm__:fulfil", value, "fulfil", generation};
}

// read, enter, exit ok, commit, ack of `event` (seq `seq`) on category:X under `l`.
std::uint64_t apply(HistoryBuilder& h, const Lease& l, const std::string& category,
                    const std::string& event, std::int64_t seq) {
  h.event_op(HistoryOp::read, l, event, -1, "", category);
  const std::uint64_t entered = h.event_op(HistoryOp::enter, l, event, -1, "", category);
  h.event_op(HistoryOp::exit, l, event, -1, "ok", category);
  h.event_op(HistoryOp::commit, l, event, seq, "", category);
  h.event_op(HistoryOp::ack, l, event, -1, "", category);
  return entered;
}

TEST(CheckerPm, RunHeaderNamesAProcessManagersCategoriesAndStillAcceptsABareName) {
  RunHeader header;
  header.process_managers = {"fulfil", "ship"};
  header.pm_categories["fulfil"] = {"order", "payment"};
  const HistoryRecord record = run_header_record(header);
  EXPECT_EQ(record.detail, "run pm=fulfil:order+payment,ship");
  const RunHeader parsed = parse_run_header(record);
  EXPECT_EQ(parsed.process_managers, (std::vector<std::string>{"fulfil", "ship"}));
  EXPECT_EQ(parsed.pm_categories, header.pm_categories);

  HistoryRecord bare;
  bare.op = HistoryOp::fault;
  bare.detail = "run pm=fulfil seed=3";
  EXPECT_EQ(parse_run_header(bare).process_managers, (std::vector<std::string>{"fulfil"}));
  EXPECT_TRUE(parse_run_header(bare).pm_categories.empty());
}

// A PM keeping one lease per category (each with its own generation counter) lets two owners of
// X handle order:X and payment:X at once, both under what each believes is a valid lease.
TEST(CheckerPm, TwoCategoriesOfOneValueOverlappingUnderValidLeasesViolatePmExclusion) {
  // w1 and w2 each hold generation 1 of their own category's lease, which for the PM is one
  // unit: both overlapping executions are under a lease that nothing has ended.
  HistoryBuilder h;
  h.marker(kHeader);
  h.publish("order", "X", "1-0");
  h.publish("payment", "X", "1-0");
  const Lease w1 = pm_lease("w1", "X", 1);
  const Lease w2 = pm_lease("w2", "X", 1);
  const auto first = h.acquire(w1);
  const auto second = h.acquire(w2);
  const auto order = h.event_op(HistoryOp::enter, w1, "1-0", -1, "", "order");
  const auto payment = h.event_op(HistoryOp::enter, w2, "1-0", -1, "", "payment");
  h.event_op(HistoryOp::exit, w1, "1-0", -1, "ok", "order");
  h.event_op(HistoryOp::exit, w2, "1-0", -1, "ok", "payment");
  const CheckReport report = check(h, {Property::no_loss});
  const std::vector<Finding> found = of(report, Property::pm_exclusion);
  ASSERT_EQ(found.size(), 1u) << render_report_text(report);
  EXPECT_EQ(found[0].category, "");
  EXPECT_EQ(found[0].key, "X");
  EXPECT_EQ(found[0].group, "fulfil");
  EXPECT_EQ(found[0].witnesses, (W{order, payment}));
  EXPECT_EQ(found[0].explanation,
            "event 1-0 (seq 1) by w1 under generation 1 and event 1-0 (seq 1) by w2 under "
            "generation 1 were in the handler at once on correlation X of process manager "
            "fulfil, both under a valid lease: two different events of one correlation value "
            "must never overlap.");
  EXPECT_TRUE(of(report, Property::exclusion).empty());
  const std::vector<Finding> fence = of(report, Property::fence);
  ASSERT_EQ(fence.size(), 1u) << render_report_text(report);
  EXPECT_EQ(fence[0].witnesses, (W{first, second}));  // generation 1 taken twice
}

TEST(CheckerPm, AnOverlapWithAnOwnerMadeStaleByALaterAcquireIsTheAdmittedResidue) {
  HistoryBuilder h;
  h.marker(kHeader);
  h.publish("order", "X", "1-0");
  h.publish("payment", "X", "1-0");
  const Lease w1 = pm_lease("w1", "X", 1);
  const Lease w2 = pm_lease("w2", "X", 2);
  h.acquire(w1);
  const auto order = h.event_op(HistoryOp::enter, w1, "1-0", -1, "", "order");
  const auto later = h.acquire(w2);  // w1's generation is stale from here
  const auto payment = h.event_op(HistoryOp::enter, w2, "1-0", -1, "", "payment");
  h.event_op(HistoryOp::exit, w1, "1-0", -1, "ok", "order");
  h.event_op(HistoryOp::exit, w2, "1-0", -1, "ok", "payment");
  const CheckReport report = check(h, {Property::no_loss});
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  ASSERT_EQ(report.stale_overlaps.size(), 1u) << render_report_text(report);
  EXPECT_EQ(report.stale_overlaps[0].property, Property::pm_exclusion);
  EXPECT_EQ(report.stale_overlaps[0].witnesses, (W{order, later, payment}));
  EXPECT_EQ(report.counters.pm_stale_overlaps, 1u);
}

TEST(CheckerPm, TwoValuesOverlappingAcrossCategoriesHoldEveryProperty) {
  HistoryBuilder h;
  h.marker(kHeader);
  h.publish("order", "X", "1-0");
  h.publish("payment", "Y", "1-0");
  h.publish("payment", "X", "2-0");
  const Lease x = pm_lease("w1", "X", 1);
  const Lease y = pm_lease("w2", "Y", 1);
  h.acquire(x);
  h.acquire(y);
  h.event_op(HistoryOp::enter, x, "1-0", -1, "", "order");
  h.event_op(HistoryOp::enter, y, "1-0", -1, "", "payment");  // another value: may overlap
  h.event_op(HistoryOp::exit, x, "1-0", -1, "ok", "order");
  h.event_op(HistoryOp::commit, x, "1-0", 1, "", "order");
  h.event_op(HistoryOp::ack, x, "1-0", -1, "", "order");
  h.event_op(HistoryOp::exit, y, "1-0", -1, "ok", "payment");
  h.event_op(HistoryOp::commit, y, "1-0", 1, "", "payment");
  h.event_op(HistoryOp::ack, y, "1-0", -1, "", "payment");
  apply(h, x, "payment", "2-0", 1);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  for (Property p : {Property::pm_exclusion, Property::fence, Property::order, Property::no_loss,
                     Property::poison_halt, Property::parallel}) {
    EXPECT_TRUE(report.status(p).checked) << property_name(p);
  }
}

TEST(CheckerPm, AStaleOwnersReadOnAnotherCategoryAfterALaterAcquireViolatesFence) {
  HistoryBuilder h;
  h.marker(kHeader);
  h.publish("order", "X", "1-0");
  h.publish("payment", "X", "1-0");
  const Lease w1 = pm_lease("w1", "X", 1);
  const Lease w2 = pm_lease("w2", "X", 2);
  const auto first = h.acquire(w1);
  apply(h, w1, "order", "1-0", 1);
  const auto second = h.acquire(w2);
  const auto stale_read = h.event_op(HistoryOp::read, w1, "1-0", -1, "", "payment");
  apply(h, w2, "payment", "1-0", 1);
  const CheckReport report = check(h);
  const std::vector<Finding> fence = of(report, Property::fence);
  ASSERT_EQ(fence.size(), 1u) << render_report_text(report);
  EXPECT_EQ(fence[0].key, "X");
  EXPECT_EQ(fence[0].group, "fulfil");
  EXPECT_EQ(fence[0].witnesses, (W{first, second, stale_read}));
  EXPECT_EQ(fence[0].explanation,
            "read by w1 of event 1-0 on correlation X of process manager fulfil was accepted "
            "under generation 1 after record #" +
                std::to_string(second) +
                " ended that generation (a later acquire or its release): a stale owner's steps "
                "must be refused.");
  for (Property p : {Property::pm_exclusion, Property::order, Property::no_loss}) {
    EXPECT_FALSE(report.status(p).violated()) << property_name(p);
  }
}

// Found by `seqby hunt --variant correct --process-manager` (seed 8021): order:X's head fails, the
// owner reads payment:X's next event under its valid lease and stalls before entering it; the
// lease passes to w2, and w1 enters the event it read when it resumes (its commit is refused).
// The event it read is the one it may still enter, not the failed one left pending.
TEST(CheckerPm, AStaleOwnerMayEnterTheEventItReadOnAnotherStreamBeforeItWentStale) {
  HistoryBuilder h;
  h.marker(kHeader);
  h.publish("order", "X", "1-0");
  h.publish("payment", "X", "1-0");
  const Lease w1 = pm_lease("w1", "X", 1);
  const Lease w2 = pm_lease("w2", "X", 2);
  h.acquire(w1);
  h.event_op(HistoryOp::read, w1, "1-0", -1, "", "order");
  h.event_op(HistoryOp::enter, w1, "1-0", -1, "", "order");
  h.event_op(HistoryOp::exit, w1, "1-0", -1, "failed: transient", "order");  // stays pending
  h.event_op(HistoryOp::read, w1, "1-0", -1, "", "payment");
  h.event_op(HistoryOp::renew, w1, "", -1, "", "__pm__:fulfil");  // a renew is no read
  h.acquire(w2);                                                  // w1 stalled: its lease lapsed
  apply(h, w2, "order", "1-0", 1);
  apply(h, w2, "payment", "1-0", 1);
  h.event_op(HistoryOp::enter, w1, "1-0", -1, "", "payment");  // w1 resumes
  h.event_op(HistoryOp::commit_fenced, w1, "1-0", 1, "", "payment");
  h.event_op(HistoryOp::exit, w1, "1-0", -1, "failed: commit fenced", "payment");
  const CheckReport report = check(h, {Property::parallel});
  EXPECT_TRUE(report.ok()) << render_report_text(report);

  // Entering anything else after going stale is still a violation: here the failed order event.
  HistoryBuilder again;
  again.marker(kHeader);
  again.publish("order", "X", "1-0");
  again.publish("payment", "X", "1-0");
  again.acquire(w1);
  again.event_op(HistoryOp::read, w1, "1-0", -1, "", "payment");
  again.event_op(HistoryOp::enter, w1, "1-0", -1, "", "payment");
  again.event_op(HistoryOp::exit, w1, "1-0", -1, "ok", "payment");
  again.event_op(HistoryOp::commit, w1, "1-0", 1, "", "payment");
  again.event_op(HistoryOp::ack, w1, "1-0", -1, "", "payment");
  const auto read = again.event_op(HistoryOp::read, w1, "1-0", -1, "", "order");
  const auto taken = again.acquire(w2);
  const auto wrong = again.event_op(HistoryOp::enter, w1, "1-0", -1, "", "payment");
  const std::vector<Finding> pm = of(check(again, {Property::no_loss}), Property::pm_exclusion);
  ASSERT_EQ(pm.size(), 1u);
  EXPECT_EQ(pm[0].witnesses, (W{read, taken, wrong}));
}

// The PM handles every order:X but never reads payment:X; another group does work the payment
// category, so without the header's categories payment:X would be judged for that group only.
TEST(CheckerPm, APaymentEventThePmNeverEnteredIsLost) {
  auto history = [](const std::string& header) {
    HistoryBuilder h;
    h.marker(header);
    h.publish("order", "X", "1-0");
    const auto payment = h.publish("payment", "X", "1-0");
    const Lease x = pm_lease("w1", "X", 1);
    h.acquire(x);
    apply(h, x, "order", "1-0", 1);
    const Lease audit{"w2", "payment", "X", "audit", 1};
    h.acquire(audit);
    h.process(audit, "1-0", 1);
    return std::make_pair(h, payment);
  };
  const auto [named, payment] = history(kHeader);
  const CheckReport report = check(named, {Property::parallel});
  const std::vector<Finding> lost = of(report, Property::no_loss);
  ASSERT_EQ(lost.size(), 1u) << render_report_text(report);
  EXPECT_EQ(lost[0].category, "payment");
  EXPECT_EQ(lost[0].key, "X");
  EXPECT_EQ(lost[0].group, "fulfil");
  EXPECT_EQ(lost[0].witnesses, (W{payment}));
  EXPECT_EQ(lost[0].explanation,
            "seq 1 (event 1-0) on payment:X (group fulfil) was never committed by the end of "
            "the history; 1 of 1 events that should commit are missing.");
  EXPECT_EQ(report.violations.size(), 1u) << render_report_text(report);

  // A bare `pm=fulfil` cannot tell that the PM subscribes payment.
  const CheckReport bare = check(history("run pm=fulfil seed=7").first, {Property::parallel});
  EXPECT_TRUE(bare.ok()) << render_report_text(bare);
}

TEST(CheckerPm, ACategoryNobodyWorkedIsJudgedForThePmThatSubscribesIt) {
  HistoryBuilder h;
  h.marker(kHeader);
  const auto payment = h.publish("payment", "X", "1-0");
  const CheckReport report = check(h);
  const std::vector<Finding> lost = of(report, Property::no_loss);
  ASSERT_EQ(lost.size(), 1u) << render_report_text(report);
  EXPECT_EQ(lost[0].group, "fulfil");
  EXPECT_EQ(lost[0].witnesses, (W{payment}));
}

TEST(CheckerPm, APoisonHeadOnAStreamThePmNeverReachedMustShowAHaltWhenRequired) {
  HistoryBuilder h;
  h.marker("run pm=fulfil:order+payment require=halt");
  const auto poison = h.publish("payment", "X", "1-0", /*poison=*/true);
  h.publish("order", "X", "1-0");
  const Lease x = pm_lease("w1", "X", 1);
  h.acquire(x);
  apply(h, x, "order", "1-0", 1);
  const CheckReport report = check(h);
  const std::vector<Finding> halt = of(report, Property::poison_halt);
  ASSERT_EQ(halt.size(), 1u) << render_report_text(report);
  EXPECT_EQ(halt[0].category, "payment");
  EXPECT_EQ(halt[0].group, "fulfil");
  EXPECT_EQ(halt[0].witnesses, (W{poison}));
  EXPECT_FALSE(report.status(Property::no_loss).violated()) << render_report_text(report);
}

TEST(CheckerPm, APmWorkingACategoryItsHeaderDoesNotNameIsNoted) {
  HistoryBuilder h;
  h.marker(kHeader);
  h.publish("refund", "X", "1-0");
  const Lease x = pm_lease("w1", "X", 1);
  h.acquire(x);
  apply(h, x, "refund", "1-0", 1);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_EQ(report.notes[0],
            "process manager fulfil works on category refund, which its run header does not name");
}

// One correlation value, failed over from w1 to w2: two nodes and two streams had work, yet
// order:X and payment:X can never overlap, so parallel has only one key to speak of.
TEST(CheckerPm, ParallelCountsCorrelationValuesNotTheirStreams) {
  HistoryBuilder g;
  g.marker(kHeader);
  g.publish("order", "X", "1-0");
  g.publish("payment", "X", "1-0");
  g.acquire(pm_lease("w1", "X", 1));
  apply(g, pm_lease("w1", "X", 1), "order", "1-0", 1);
  g.marker("crash", "w1");
  g.acquire(pm_lease("w2", "X", 2));
  apply(g, pm_lease("w2", "X", 2), "payment", "1-0", 1);
  const CheckReport report = check(g);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_FALSE(report.status(Property::parallel).checked);
  EXPECT_EQ(report.status(Property::parallel).note,
            "not applicable: 2 node(s) acquired leases and 1 key(s) had executions");
}

}  // namespace
}  // namespace seqby::properties
