// A graceful stop in the middle of an event, end to end on the simulator (Engine instances over
// one SimRedis through the very Lua scripts real Redis runs): the stopping instance finishes the
// event, acknowledges it and only then releases its lease, so the instance that takes the
// partition over goes on with the NEXT event and never runs the finished one again. No fault is
// injected: every event is entered exactly once, and nothing is left pending. It kills
// mutate/catalog.txt worker-release-without-ack (a release that leaves the last handled event
// unacknowledged, so that the next owner reclaims it and runs it a second time).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/core/keyspace.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"
#include "sim_engine_parts.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261203;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";
constexpr int kEvents = 4;

using testing::CommittingHandler;

EngineOptions options_for(const std::string& owner) {
  EngineOptions o;
  o.owner_id = owner;
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = 3000;
  o.heartbeat_interval_ms = 1000;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  return o;
}

struct Instance {
  Instance(Scheduler& scheduler, SimServer& server, HistorySink& history, EngineOptions options)
      : runtime(scheduler, options.owner_id),
        link(runtime, server, Rng(kSeed).derive("link/" + options.owner_id)),
        broker(link),
        handler(runtime),
        engine(runtime, broker, history, handler, std::move(options)) {
    handler.handle_ms = 400;  // long enough for a stop to land inside an event
  }
  SimRuntime runtime;
  SimRedisLink link;
  redis::RedisBroker broker;
  CommittingHandler handler;
  Engine engine;
};

struct World {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  properties::VectorHistorySink history;
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};
  std::vector<std::unique_ptr<Instance>> instances;

  ~World() {
    if (::testing::Test::HasFailure()) print_history();
    for (auto& instance : instances) instance->runtime.crash();
    publisher_runtime.crash();
  }

  Instance& add(const std::string& owner) {
    instances.push_back(std::make_unique<Instance>(scheduler, server, history, options_for(owner)));
    instances.back()->engine.start();
    return *instances.back();
  }

  void publish(int events) {
    publisher_runtime.spawn("publisher", publish_all(events));
    scheduler.run_until(scheduler.now_ms() + 100);
  }
  Task<void> publish_all(int events) {
    const PartitionRef partition{kCategory, "k0"};  // named: no temporary inside co_await
    for (int seq = 1; seq <= events; ++seq) {
      Result<std::string> id =
          co_await publisher.publish(partition, "created", "{\"seq\":" + std::to_string(seq) + "}");
      SEQBY_CHECK(id.ok());
    }
  }

  std::size_t count(HistoryOp op, const std::string& node = "") const {
    std::size_t n = 0;
    for (const auto& r : history.records()) n += r.op == op && (node.empty() || r.node == node);
    return n;
  }
  std::int64_t pending() {
    redis::Reply r = redis.execute({"XPENDING", PartitionRef{kCategory, "k0"}.stream(), kGroup});
    return r.elements.empty() ? -1 : r.elements[0].integer;
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

Task<void> stop_engine(Engine& engine, bool* done) {
  co_await engine.stop();
  *done = true;
}

TEST(GracefulHandover, AStopInsideAnEventLetsTheNextOwnerGoOnWithTheNextEventNotRunItAgain) {
  World w;
  Instance& a = w.add("a");
  w.publish(kEvents);
  w.scheduler.run_until([&] { return w.count(HistoryOp::enter, "a") == 2; }, 20'000);
  ASSERT_EQ(w.count(HistoryOp::enter, "a"), 2u) << "a never entered its second event";

  // b joins while a is inside its second event; then a stops (it ends that event first).
  w.add("b");
  bool stopped = false;
  a.runtime.spawn("stop", stop_engine(a.engine, &stopped));
  w.scheduler.run_until([&] { return stopped && w.count(HistoryOp::exit) == kEvents; },
                        w.scheduler.now_ms() + 60'000);
  w.scheduler.run_until(w.scheduler.now_ms() + 2000);  // b acknowledges its last event
  ASSERT_TRUE(stopped);
  ASSERT_GT(w.count(HistoryOp::release, "a"), 0u) << "a did not release its lease at its stop";
  ASSERT_GT(w.count(HistoryOp::enter, "b"), 0u) << "b never took the partition over";

  std::map<std::string, int> entered;  // event id -> how many times a handler entered it
  for (const auto& r : w.history.records()) {
    if (r.op == HistoryOp::enter) ++entered[r.event_id];
  }
  EXPECT_EQ(entered.size(), static_cast<std::size_t>(kEvents));
  for (const auto& [id, times] : entered) {
    EXPECT_EQ(times, 1) << "event " << id << " was run " << times << " times without a fault";
  }
  EXPECT_EQ(w.pending(), 0) << "an event is still pending after every event was handled";
}

}  // namespace
}  // namespace seqby::sim
