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

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261205;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";
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

EngineOptions options() {
  EngineOptions o;
  o.owner_id = "a";
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = 3000;
  o.heartbeat_interval_ms = 1000;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
  o.read_batch_max = 8;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  return o;
}

struct World {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  properties::VectorHistorySink history;
  SimRuntime runtime{scheduler, "a"};
  SimRedisLink link{runtime, server, Rng(kSeed).derive("link/a")};
  redis::RedisBroker broker{link};
  FailFirstOnce handler;
  Engine engine{runtime, broker, history, handler, options()};
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};
  std::vector<std::string> ids;

  ~World() {
    if (::testing::Test::HasFailure()) print_history();
    runtime.crash();
    publisher_runtime.crash();
  }

  Task<void> publish_all() {
    const PartitionRef partition{kCategory, "k0"};  // named: no temporary inside co_await
    for (int seq = 1; seq <= kEvents; ++seq) {
      Result<std::string> id =
          co_await publisher.publish(partition, "created", "{\"seq\":" + std::to_string(seq) + "}");
      SEQBY_CHECK(id.ok());
      ids.push_back(id.value());
    }
  }

  std::vector<std::string> of(HistoryOp op) const {
    std::vector<std::string> out;
    for (const auto& r : history.records()) {
      if (r.op == op && r.node == "a") out.push_back(r.event_id);
    }
    return out;
  }

  void print_history() const {
    for (const auto& r : history.records()) {
      std::fprintf(
          stderr, "%5llu t=%llu %s %s %s/%s g=%llu id=%s %s\n",
          static_cast<unsigned long long>(r.index), static_cast<unsigned long long>(r.time_ms),
          r.node.c_str(), history_op_name(r.op), r.category.c_str(), r.key.c_str(),
          static_cast<unsigned long long>(r.generation), r.event_id.c_str(), r.detail.c_str());
    }
  }
};

TEST(BatchRetryOrder, AFailedEventIsRetriedBeforeAnyEventReadWithItInItsBatch) {
  World w;
  // Every event is in the stream before the worker's first read: one read delivers them all.
  w.publisher_runtime.spawn("publisher", w.publish_all());
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
