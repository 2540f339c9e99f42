// The history index the checkers share: executions as intervals of history positions (ended by
// the exit of the same node and event, or by a crash of the node), the lease state at an enter,
// lanes and their accepted commits.
#include "seqby/properties/history_index.h"

#include <gtest/gtest.h>

#include "checker_builder.h"

namespace seqby::properties {
namespace {

using testing::HistoryBuilder;
using testing::Lease;

const Lease kW1{"w1", "orders", "A", "billing", 1};
const Lease kW2{"w2", "orders", "A", "billing", 2};
const Lease kW1B{"w1", "orders", "B", "billing", 1};

TEST(HistoryIndex, ExecutionsRunFromEnterToTheExitOfTheSameNodeAndEvent) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "A", "2-0");
  h.acquire(kW1);
  const auto enter = h.enter(kW1, "1-0");
  h.exit(kW1, "2-0");  // another event: ends nothing
  const auto exit = h.exit(kW1, "1-0");
  const auto open_enter = h.enter(kW1, "2-0");
  const HistoryIndex index = HistoryIndex::build(h.records());
  ASSERT_EQ(index.executions().size(), 2u);
  const IndexedExecution& first = index.executions()[0];
  EXPECT_EQ(index.record(first.enter).index, enter);
  ASSERT_NE(first.end, kNoPosition);
  EXPECT_EQ(index.record(first.end).index, exit);
  EXPECT_EQ(first.seq, 1);
  EXPECT_TRUE(first.lease_current);
  const IndexedExecution& second = index.executions()[1];
  EXPECT_EQ(index.record(second.enter).index, open_enter);
  EXPECT_EQ(second.end, kNoPosition);  // still in the handler when the history ends
  EXPECT_EQ(index.units()[second.unit].key, "A");
  ASSERT_EQ(index.notes().size(), 1u);
  EXPECT_NE(index.notes()[0].find("matches no open enter"), std::string::npos);
}

TEST(HistoryIndex, ACrashEndsEveryOpenExecutionOfItsNodeOnly) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.publish("orders", "B", "1-0");
  h.acquire(kW1);
  h.acquire(kW1B);
  h.enter(kW1, "1-0");
  h.enter(kW1B, "1-0");
  h.marker("crash downtime_ms=300", "w2");  // another node
  const auto crash = h.marker("crash downtime_ms=300", "w1");
  const HistoryIndex index = HistoryIndex::build(h.records());
  ASSERT_EQ(index.executions().size(), 2u);
  for (const IndexedExecution& e : index.executions()) {
    ASSERT_NE(e.end, kNoPosition);
    EXPECT_EQ(index.record(e.end).index, crash);
  }
  EXPECT_EQ(index.crashes().size(), 2u);
  EXPECT_EQ(index.spots().size(), 2u);  // two keys had executions
}

TEST(HistoryIndex, AnEnterAfterALaterAcquireIsNotUnderACurrentLease) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.acquire(kW2);
  h.enter(kW1, "1-0");
  h.enter(kW2, "1-0");
  const HistoryIndex index = HistoryIndex::build(h.records());
  ASSERT_EQ(index.executions().size(), 2u);
  EXPECT_FALSE(index.executions()[0].lease_current);
  EXPECT_TRUE(index.executions()[1].lease_current);
  ASSERT_EQ(index.lease_nodes().size(), 2u);
  EXPECT_EQ(index.lease_nodes()[0].first, "w1");
}

TEST(HistoryIndex, LanesKeepAcceptedCommitsAndEveryGroupOfACategoryGetsOne) {
  HistoryBuilder h;
  h.marker("run pm=fulfil:orders");
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.commit(kW1, "1-0", 1);
  h.commit(kW1, "9-0", 5);  // beyond what was published
  const HistoryIndex index = HistoryIndex::build(h.records());
  const int billing = index.find_lane("orders", "A", "billing");
  ASSERT_GE(billing, 0);
  const std::vector<IndexedCommit>& commits = index.lanes()[billing].commits;
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_TRUE(commits[0].published);
  EXPECT_EQ(commits[1].seq, 5);
  EXPECT_FALSE(commits[1].published);
  // The process manager never worked on orders:A, yet its header names the category.
  EXPECT_GE(index.find_lane("orders", "A", "fulfil"), 0);
  EXPECT_EQ(index.process_managers().count("fulfil"), 1u);
  ASSERT_EQ(index.headers().size(), 1u);
}

TEST(HistoryIndex, AddingRecordByRecordAnswersAsOfTheRecordsAdded) {
  HistoryBuilder h;
  h.publish("orders", "A", "1-0");
  h.acquire(kW1);
  h.acquire(kW2);
  HistoryIndex index(h.records());
  index.add();
  const IndexedStep acquire = index.add();  // a copy: the next add() overwrites the step
  ASSERT_GE(acquire.unit, 0);
  EXPECT_FALSE(index.stale_point(index.units()[acquire.unit], 1).has_value());
  index.add();
  EXPECT_TRUE(index.complete());
  EXPECT_EQ(index.stale_point(index.units()[acquire.unit], 1), 2u);
}

}  // namespace
}  // namespace seqby::properties
