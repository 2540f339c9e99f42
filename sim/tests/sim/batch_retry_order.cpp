// A failed event of a batch read, end to end on the simulator (an Engine over SimRedis through the
// very Lua scripts real Redis runs): one read delivers several new entries at once
// (read_batch_max), the handler fails the first of them once. The failed event is retried, and
// succeeds, BEFORE any event read with it in its batch is entered: the order per key holds across a
// retry, with or without batches. It kills mutate/catalog.txt worker-held-kept-after-failure (a
// worker that keeps the entries held after a failure enters them before the failed one's retry).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"
#include "sim_engine_parts.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261205;
constexpr int kEvents = 4;

// Fails the first delivery of the event with seq 1; every other delivery succeeds.
class FailFirstOnce final : public Handler {
 public:
  Task<HandlerResult> handle(const Event& event, HandlerContext&) override {
    if (event.data == "{\"seq\":1}" && event.delivery_count == 1) {
      co_return HandlerResult::failed("transient");
    }
    co_return HandlerResult::success();
  }
};

using World = testing::OneWorkerWorld<FailFirstOnce>;

TEST(BatchRetryOrder, AFailedEventIsRetriedBeforeAnyEventReadWithItInItsBatch) {
  World w(kSeed);
  // Every event is in the stream before the worker's first read: one read delivers them all.
  w.publisher_runtime.spawn("publisher", w.publish_all(kEvents));
  w.scheduler.run_until([&] { return w.ids.size() == kEvents; }, 5000);
  ASSERT_EQ(w.ids.size(), static_cast<std::size_t>(kEvents));
  w.engine.start();
  w.scheduler.run_until([&] { return w.of(HistoryOp::ack).size() >= kEvents; }, 30'000);

  // The failed first event is entered again (its retry) before the second is entered at all.
  const std::vector<std::string> entered = w.of(HistoryOp::enter);
  std::vector<std::string> expected{w.ids[0]};
  expected.insert(expected.end(), w.ids.begin(), w.ids.end());
  EXPECT_EQ(entered, expected);
  EXPECT_EQ(w.of(HistoryOp::ack), w.ids) << "the events were not acknowledged in publish order";
}

}  // namespace
}  // namespace seqby::sim
