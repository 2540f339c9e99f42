// reap_refused_for_other_group (reached.h, count_reap_waits) on hand-made histories: a reap that
// came only after another group acked the last entry it had in flight while the reaping group was
// idle past its reap time counts; its near misses (the other group acked before the reap was due,
// read it only after, or a reap of another key) do not.
#include <gtest/gtest.h>

#include <string>

#include "checker_builder.h"
#include "seqby/properties/reached.h"

namespace seqby::properties {
namespace {

using testing::HistoryBuilder;
using testing::Lease;

const Lease billing{"h", "order", "k1", "billing", 1};
const Lease fulfil{"pm", "order", "k1", "fulfil", 2};

// The builder spaces records 10 ms apart: `idle_ms` 25 makes the reap due 2.5 records after
// billing's ack.
std::uint64_t waits(const HistoryBuilder& h) {
  return count_reached(h.records()).count(Reached::reap_refused_for_other_group);
}

TEST(ReachedReapWaits, AReapAfterTheOtherGroupsLateAckCounts) {
  HistoryBuilder h;
  h.publish("order", "k1", "1-0");
  h.acquire(billing);
  h.acquire(fulfil);
  h.read(fulfil, "1-0");  // fulfil has it in flight...
  h.process(billing, "1-0", 1);
  h.marker("tick");
  h.marker("tick");
  h.marker("tick");  // ...past billing's reap time...
  h.exit(fulfil, "1-0");
  h.ack(fulfil, "1-0");  // ...and acks it late
  h.event_op(HistoryOp::reap, billing, "", -1, "idle_ms=25");
  EXPECT_EQ(waits(h), 1u);
  EXPECT_EQ(count_reap_waits(h.records()), 1u);
}

TEST(ReachedReapWaits, NearMissesDoNotCount) {
  {
    HistoryBuilder h;  // fulfil acked before billing's reap was due
    h.publish("order", "k1", "1-0");
    h.read(fulfil, "1-0");
    h.process(billing, "1-0", 1);
    h.ack(fulfil, "1-0");
    h.event_op(HistoryOp::reap, billing, "", -1, "idle_ms=25");
    EXPECT_EQ(waits(h), 0u);
  }
  {
    HistoryBuilder h;  // fulfil was delivered the entry only after the reap was due
    h.publish("order", "k1", "1-0");
    h.process(billing, "1-0", 1);
    h.marker("tick");
    h.marker("tick");
    h.marker("tick");
    h.read(fulfil, "1-0");
    h.ack(fulfil, "1-0");
    h.event_op(HistoryOp::reap, billing, "", -1, "idle_ms=25");
    EXPECT_EQ(waits(h), 0u);
  }
  {
    HistoryBuilder h;  // the late ack is of an older entry than the stream's last
    h.publish("order", "k1", "1-0");
    h.read(fulfil, "1-0");
    h.publish("order", "k1", "2-0");
    h.process(billing, "1-0", 1);
    h.process(billing, "2-0", 2);
    h.marker("tick");
    h.marker("tick");
    h.marker("tick");
    h.ack(fulfil, "1-0");
    h.read(fulfil, "2-0");
    h.ack(fulfil, "2-0");
    h.event_op(HistoryOp::reap, billing, "", -1, "idle_ms=25");
    EXPECT_EQ(waits(h), 0u);
  }
}

}  // namespace
}  // namespace seqby::properties
