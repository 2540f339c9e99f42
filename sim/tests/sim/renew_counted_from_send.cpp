// A worker cut off from Redis counts its lease from when it SENT its last confirmed renew, not
// from when the reply came, end to end on the simulator (Engine instances over one SimRedis
// through the very Lua scripts real Redis runs): the server's lease ran from the renew's arrival,
// so a slow reply must not stretch the lease the worker believes it has. With replies slower
// (1 s) than the heartbeat's cadence (200 ms) and its two failing calls once cut off (2 x 200 ms),
// a worker that counted from the reply would act on its unit for 3 s + 1 s after sending its last
// renew: past the bound asserted here. (EngineLeaseKeeping's cut-off test allows a whole 1 s
// heartbeat of slack, which a 500 ms slow reply fits inside.) It kills mutate/catalog.txt
// heartbeat-confirmed-at-reply.
#include <gtest/gtest.h>

#include <cstdio>
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

constexpr std::uint64_t kSeed = 20261206;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";
constexpr std::uint64_t kTtlMs = 3000;
constexpr std::uint64_t kHeartbeatMs = 200;
constexpr std::uint64_t kCutTimeoutMs = 200;  // how long a call takes to fail while cut off

using testing::CommittingHandler;
using testing::CuttableLink;

EngineOptions options_for(const std::string& owner) {
  EngineOptions o;
  o.owner_id = owner;
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = kTtlMs;
  o.heartbeat_interval_ms = kHeartbeatMs;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  return o;
}

struct Instance {
  Instance(Scheduler& scheduler, SimServer& server, HistorySink& history, EngineOptions options,
           SimLinkOptions link_options)
      : runtime(scheduler, options.owner_id),
        link(runtime, server, Rng(kSeed).derive("link/" + options.owner_id), link_options),
        cuttable(link, runtime, kCutTimeoutMs),
        broker(cuttable),
        handler(runtime),
        engine(runtime, broker, history, handler, std::move(options)) {}
  SimRuntime runtime;
  SimRedisLink link;
  CuttableLink cuttable;
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

  Instance& add(EngineOptions options, SimLinkOptions link_options = {}) {
    instances.push_back(
        std::make_unique<Instance>(scheduler, server, history, std::move(options), link_options));
    instances.back()->engine.start();
    return *instances.back();
  }

  void publish(const std::vector<std::string>& keys) {
    publisher_runtime.spawn("publisher", publish_all(keys));
    scheduler.run_until(scheduler.now_ms() + 100);
  }
  Task<void> publish_all(std::vector<std::string> keys) {
    for (const std::string& key : keys) {
      const PartitionRef partition{kCategory, key};  // named: no temporary inside co_await
      Result<std::string> id = co_await publisher.publish(partition, "created", "{\"seq\":1}");
      SEQBY_CHECK(id.ok());
    }
  }

  const HistoryRecord* last(HistoryOp op, const std::string& node, const std::string& key) const {
    const HistoryRecord* found = nullptr;
    for (const auto& r : history.records()) {
      if (r.op == op && r.node == node && r.key == key) found = &r;
    }
    return found;
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

TEST(RenewCountedFromSend, CutOffAWorkerWithSlowRepliesGivesItsUnitUpWithinATtlOfSendingItsRenew) {
  World w;
  SimLinkOptions slow;  // every reply takes 1 s to come back: longer than the heartbeat's cadence
  slow.reply_latency_min_ms = 1000;
  slow.reply_latency_max_ms = 1000;
  slow.timeout_ms = 5000;
  Instance& a = w.add(options_for("a"), slow);
  w.publish({"k0"});
  w.scheduler.run_until([&] { return w.last(HistoryOp::ack, "a", "k0") != nullptr; }, 30'000);
  ASSERT_NE(w.last(HistoryOp::ack, "a", "k0"), nullptr);
  w.scheduler.run_until(w.scheduler.now_ms() + 5000);
  ASSERT_NE(w.last(HistoryOp::renew, "a", "k0"), nullptr) << "a never renewed k0";

  a.cuttable.cut = true;
  w.scheduler.run_until([&] { return w.last(HistoryOp::lose, "a", "k0") != nullptr; },
                        w.scheduler.now_ms() + 20'000);
  const HistoryRecord* lost = w.last(HistoryOp::lose, "a", "k0");
  ASSERT_NE(lost, nullptr) << "a never gave k0 up while cut off";
  EXPECT_EQ(lost->detail, "no renew confirmed within lease_ttl_ms");
  const HistoryRecord* renewed = w.last(HistoryOp::renew, "a", "k0");
  ASSERT_NE(renewed, nullptr);
  // The renew is recorded when its reply came, a whole reply latency after it was sent.
  const std::uint64_t sent_ms = renewed->time_ms - slow.reply_latency_max_ms;
  EXPECT_LE(lost->time_ms, sent_ms + kTtlMs + kHeartbeatMs + 2 * kCutTimeoutMs)
      << "a acted on k0 for " << lost->time_ms - sent_ms
      << " ms after sending its last confirmed renew";
}

}  // namespace
}  // namespace seqby::sim
