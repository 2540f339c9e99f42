// The checker's end-of-history judgements (no_loss, the visible halt of poison_halt), the report
// renderings, and a history the size of a simulator run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

TEST(CheckerNoLoss, EveryEventCommittedAfterTheLivenessPhaseHolds) {
  HistoryBuilder h;
  h.marker("run seed=7 scenario=crash_failover");
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  const auto liveness = h.marker("liveness_phase_start");
  h.process(kW1, "2-0", 2);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_TRUE(report.status(Property::no_loss).checked);
  EXPECT_TRUE(report.counters.liveness_marker);
  EXPECT_EQ(report.counters.liveness_marker_index, liveness);
  EXPECT_EQ(report.counters.faults, 0u);  // markers are not faults
}

TEST(CheckerNoLoss, AnEventNeverCommittedIsAViolation) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  const auto lost = h.publish("orders", "A", "3-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  h.process(kW1, "2-0", 2);
  const auto last_commit = h.records().size() - 2;  // process() ends with commit, ack
  const auto liveness = h.marker("liveness_phase_start");
  const CheckReport report = check(h);
  const std::vector<Finding> found = of(report, Property::no_loss);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "A");
  EXPECT_EQ(found[0].group, "billing");
  EXPECT_EQ(found[0].witnesses, (W{lost, last_commit, liveness}));
  EXPECT_EQ(found[0].explanation,
            "seq 3 (event 3-0) on orders:A (group billing) was never committed by the end of the "
            "history (liveness phase from #" +
                std::to_string(liveness) + "); 1 of 3 events that should commit are missing.");
  EXPECT_TRUE(check(h, {Property::no_loss}).ok());
}

TEST(CheckerNoLoss, EventsOnACategoryNoGroupEverWorkedOnAreLost) {
  HistoryBuilder h;
  const auto first = h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  const std::vector<Finding> found = of(check(h), Property::no_loss);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].group, "");
  EXPECT_EQ(found[0].witnesses, (W{first}));
  EXPECT_EQ(found[0].explanation,
            "2 events were published on orders:A but no handler group ever worked on category "
            "orders.");
}

TEST(CheckerNoLoss, FinalStateMustEqualApplyingEventsInPublishOrder) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  const auto p2 = h.publish("orders", "A", "2-0");
  h.publish("orders", "A", "3-0");
  h.acquire(kW1);
  h.commit(kW1, "1-0", 1);
  const auto c3 = h.commit(kW1, "3-0", 3);
  h.commit(kW1, "2-0", 2);
  const CheckReport report = check(h);
  const std::vector<Finding> found = of(report, Property::no_loss);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].witnesses, (W{p2, c3}));
  EXPECT_EQ(found[0].explanation,
            "the final state of orders:A (group billing) differs from applying its events in "
            "publish order: commit number 2 applied seq 3 (event 3-0) where seq 2 (event 2-0) was "
            "due.");
  EXPECT_EQ(of(report, Property::order).size(), 1u);
}

TEST(CheckerNoLoss, EventsBehindAPoisonHeadAreExemptUntilAnOperatorSkipsIt) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0", /*poison=*/true);
  const auto p3 = h.publish("orders", "A", "3-0");
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  h.event_op(HistoryOp::halt, kW1, "2-0");
  EXPECT_TRUE(check(h).ok());

  h.event_op(HistoryOp::skip, Lease{"operator", "orders", "A", "billing", 0}, "2-0");
  const std::vector<Finding> found = of(check(h), Property::no_loss);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].witnesses.front(), p3);

  h.process(kW1, "3-0", 3);
  const CheckReport report = check(h);
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.skips, 1u);
}

TEST(CheckerPoisonHalt, ReachingAPoisonHeadWithoutRecordingAHaltIsAViolationWhenRequired) {
  HistoryBuilder h;
  h.marker("run require=halt");
  h.publish("orders", "A", "1-0");
  const auto poison = h.publish("orders", "A", "2-0", /*poison=*/true);
  h.acquire(kW1);
  h.process(kW1, "1-0", 1);
  const auto commit = h.records().size() - 2;
  const std::vector<Finding> found = of(check(h), Property::poison_halt);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].witnesses, (W{poison, commit}));
  EXPECT_EQ(found[0].explanation,
            "orders:A (group billing) reached its poison head seq 2 (event 2-0) but never "
            "recorded a halt on it: a halt must be visible.");

  HistoryBuilder not_required;  // the run may have ended while the engine was still retrying
  not_required.publish("orders", "A", "1-0");
  not_required.publish("orders", "A", "2-0", /*poison=*/true);
  not_required.acquire(kW1);
  not_required.process(kW1, "1-0", 1);
  EXPECT_TRUE(check(not_required).ok());
  CheckOptions options;
  options.require_halt_record = true;
  EXPECT_FALSE(check_history(not_required.records(), options).ok());
}

TEST(CheckerReport, TextAndJsonCarryStatusFindingsAndCounters) {
  HistoryBuilder h;
  const auto p1 = h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  const auto c2 = h.commit(kW1, "2-0", 2);
  const CheckReport report = check(h, {Property::no_loss, Property::parallel});

  const std::string text = render_report_text(report, &h.records());
  EXPECT_NE(text.find("seqby check: FAILED: 1 violation(s) (order 1); 0 stale overlap(s); 4 "
                      "records\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  order         VIOLATED (1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  no_loss       not checked: skipped\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  fence         holds\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    witnesses: #" + std::to_string(p1) + " #" + std::to_string(c2) + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      " + record_to_jsonl(h.records()[c2]) + "\n"), std::string::npos);

  const nlohmann::json j = nlohmann::json::parse(render_report_json(report));
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["properties"]["order"]["violated"], true);
  EXPECT_EQ(j["properties"]["order"]["violations"], 1);
  EXPECT_EQ(j["properties"]["no_loss"]["checked"], false);
  ASSERT_EQ(j["violations"].size(), 1u);
  EXPECT_EQ(j["violations"][0]["property"], "order");
  EXPECT_EQ(j["violations"][0]["key"], "A");
  EXPECT_EQ(j["violations"][0]["witnesses"], (W{p1, c2}));
  EXPECT_EQ(j["counters"]["events_published"], 2);
  EXPECT_EQ(j["counters"]["events_committed"], 1);
}

TEST(CheckerReport, FindingsPerPropertyAreCappedButAllCounted) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  for (int i = 0; i < 30; ++i) h.commit(kW1, "1-0", 1);
  CheckOptions options;
  options.findings_per_property_max = 5;
  const CheckReport report = check_history(h.records(), options);
  EXPECT_EQ(report.status(Property::order).violation_count, 29u);
  EXPECT_EQ(of(report, Property::order).size(), 5u);
  EXPECT_NE(render_report_text(report).find("(24 more not listed)"), std::string::npos);
}

// A run of the size the simulator produces: 1000 events over 20 keys, two nodes, a handover of
// every key halfway (a stale overlap each), about 20k records.
TEST(CheckerScale, AThousandEventHistoryChecksCleanly) {
  HistoryBuilder h;
  h.marker("run seed=1 scenario=cross_key_parallelism");
  constexpr int kKeys = 20;
  constexpr int kPerKey = 50;
  for (int n = 1; n <= kPerKey; ++n) {
    for (int k = 0; k < kKeys; ++k)
      h.publish("orders", "k" + std::to_string(k), std::to_string(n) + "-0");
  }
  for (int k = 0; k < kKeys; ++k) {
    h.acquire(Lease{k % 2 ? "w1" : "w2", "orders", "k" + std::to_string(k), "billing", 1});
  }
  for (int round = 0; round < 2; ++round) {
    for (int n = round * kPerKey / 2 + 1; n <= (round + 1) * kPerKey / 2; ++n) {
      const std::string event = std::to_string(n) + "-0";
      for (int k = 0; k < kKeys; ++k) {
        const Lease l{round == 0 ? (k % 2 ? "w1" : "w2") : (k % 2 ? "w2" : "w1"), "orders",
                      "k" + std::to_string(k), "billing", static_cast<std::uint64_t>(round + 1)};
        h.read(l, event);
        h.enter(l, event);
        h.lease_op(HistoryOp::renew, l);
      }
      for (int k = 0; k < kKeys; ++k) {
        const Lease l{round == 0 ? (k % 2 ? "w1" : "w2") : (k % 2 ? "w2" : "w1"), "orders",
                      "k" + std::to_string(k), "billing", static_cast<std::uint64_t>(round + 1)};
        h.exit(l, event);
        h.commit(l, event, n);
        h.ack(l, event);
        for (int renewal = 0; renewal < 13; ++renewal) h.lease_op(HistoryOp::renew, l);
      }
    }
    if (round == 0) {
      for (int k = 0; k < kKeys; ++k) {
        h.acquire(Lease{k % 2 ? "w2" : "w1", "orders", "k" + std::to_string(k), "billing", 2});
      }
    }
  }
  h.marker("liveness_phase_start");
  ASSERT_GT(h.records().size(), 19000u);
  const CheckReport report = check_history(h.records(), CheckOptions{});
  EXPECT_TRUE(report.ok()) << render_report_text(report);
  EXPECT_EQ(report.counters.events_published, 1000u);
  EXPECT_EQ(report.counters.events_committed, 1000u);
  EXPECT_TRUE(report.status(Property::parallel).checked);
}

}  // namespace
}  // namespace seqby::properties
