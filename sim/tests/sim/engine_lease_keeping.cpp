// How an engine instance keeps and shares its leases, end to end on the simulator (Engine
// instances over one SimRedis through the very Lua scripts real Redis runs), each asserted as a
// user sees it (Engine::held(), the history, the members a worker announces):
// - a renew the server refuses loses the unit at once and says so ("renew refused"), even while
//   the handler is inside a long event;
// - a worker cut off from Redis gives its unit up within lease_ttl_ms of SENDING its last
//   confirmed renew (plus one heartbeat and the two failing calls of that heartbeat), not of
//   receiving its reply: a slow reply must not stretch the lease it believes it has;
// - an instance over its fair share releases every extra to a newcomer;
// - a stopped instance leaves the group's members at once;
// - the partition-count warning fires only past partitions_warn_threshold.
// It kills these mutants of mutate/catalog.txt: the heartbeat-* ones but
// heartbeat-confirmed-at-reply (renew_counted_from_send.cpp kills that), share-keeps-one-extra,
// stop-keeps-membership, warn-at-threshold.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <optional>
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

constexpr std::uint64_t kSeed = 20261202;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";
constexpr std::uint64_t kTtlMs = 3000;
constexpr std::uint64_t kHeartbeatMs = 1000;
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

  std::vector<std::string> held() const {
    std::vector<std::string> keys;
    for (const PartitionStatus& status : engine.held()) keys.push_back(status.key);
    return keys;
  }
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

  // What `broker.live_members` answers for the group, asked from the publisher's side.
  std::vector<std::string> live_members() {
    std::optional<std::vector<std::string>> members;
    publisher_runtime.spawn("members", ask_members(&members));
    scheduler.run_until([&] { return members.has_value(); }, scheduler.now_ms() + 5000);
    SEQBY_CHECK(members.has_value());
    return *members;
  }
  Task<void> ask_members(std::optional<std::vector<std::string>>* out) {
    Result<std::vector<std::string>> members = co_await publisher.live_members(kCategory, kGroup);
    SEQBY_CHECK(members.ok());
    out->emplace(members.value());
  }

  const HistoryRecord* last(HistoryOp op, const std::string& node, const std::string& key) const {
    const HistoryRecord* found = nullptr;
    for (const auto& r : history.records()) {
      if (r.op == op && r.node == node && r.key == key) found = &r;
    }
    return found;
  }
  std::vector<std::string> warnings() const {
    std::vector<std::string> out;
    for (const auto& r : history.records()) {
      if (r.op == HistoryOp::warn) out.push_back(r.detail);
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

TEST(EngineLeaseKeeping, ARefusedRenewLosesTheUnitAtOnceEvenInsideALongEvent) {
  World w;
  Instance& a = w.add(options_for("a"));
  a.handler.handle_ms = 20'000;  // the event outlasts everything below
  w.publish({"k0"});
  w.scheduler.run_until([&] { return w.last(HistoryOp::enter, "a", "k0") != nullptr; }, 10'000);
  ASSERT_NE(w.last(HistoryOp::enter, "a", "k0"), nullptr);

  // Another owner holds the lease now (as after a partition of `a` that healed): a's next renew
  // is refused by the server.
  w.redis.execute({"SET", lease_key_name(kCategory, "k0"), "b:99", "PX", "60000"});
  w.scheduler.run_until(w.scheduler.now_ms() + kHeartbeatMs + 100);
  EXPECT_TRUE(a.held().empty()) << "a still reports k0 as held after its renew was refused";
  const HistoryRecord* lost = w.last(HistoryOp::lose, "a", "k0");
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->detail, "renew refused");
}

TEST(EngineLeaseKeeping, CutOffFromRedisAWorkerGivesItsUnitUpWithinATtlOfSendingItsLastRenew) {
  World w;
  SimLinkOptions slow;  // every reply takes 500 ms to come back
  slow.reply_latency_min_ms = 500;
  slow.reply_latency_max_ms = 500;
  slow.timeout_ms = 5000;
  Instance& a = w.add(options_for("a"), slow);
  w.publish({"k0"});
  w.scheduler.run_until([&] { return w.last(HistoryOp::ack, "a", "k0") != nullptr; }, 20'000);
  ASSERT_NE(w.last(HistoryOp::ack, "a", "k0"), nullptr);
  w.scheduler.run_until(w.scheduler.now_ms() + 3 * kHeartbeatMs + 300);

  a.cuttable.cut = true;
  w.scheduler.run_until([&] { return w.last(HistoryOp::lose, "a", "k0") != nullptr; },
                        w.scheduler.now_ms() + 20'000);
  const HistoryRecord* lost = w.last(HistoryOp::lose, "a", "k0");
  ASSERT_NE(lost, nullptr) << "a never gave k0 up while cut off";
  EXPECT_EQ(lost->detail, "no renew confirmed within lease_ttl_ms");
  const HistoryRecord* renewed = w.last(HistoryOp::renew, "a", "k0");
  ASSERT_NE(renewed, nullptr);
  // The last confirmed renew was sent at least a reply's latency before its confirmation; the
  // server's lease ran from then. The worker checks once per heartbeat, after that heartbeat's
  // announce and renew failed.
  const std::uint64_t sent_ms = renewed->time_ms - slow.reply_latency_max_ms;
  EXPECT_LE(lost->time_ms, sent_ms + kTtlMs + kHeartbeatMs + 2 * kCutTimeoutMs)
      << "a acted on k0 for " << lost->time_ms - sent_ms
      << " ms after sending its last confirmed renew";
  EXPECT_TRUE(a.held().empty());
}

TEST(EngineLeaseKeeping, AnInstanceOverItsShareReleasesEveryExtraToANewcomer) {
  World w;
  Instance& a = w.add(options_for("a"));
  w.publish({"k0", "k1", "k2", "k3"});
  w.scheduler.run_until([&] { return a.held().size() == 4; }, 20'000);
  ASSERT_EQ(a.held().size(), 4u);

  Instance& b = w.add(options_for("b"));
  w.scheduler.run_until(w.scheduler.now_ms() + 10'000);
  EXPECT_EQ(a.held().size(), 2u) << "ceil(4 / 2) each";
  EXPECT_EQ(b.held().size(), 2u);
}

TEST(EngineLeaseKeeping, AStoppedInstanceLeavesTheMembersAtOnce) {
  World w;
  w.add(options_for("a"));
  Instance& b = w.add(options_for("b"));
  w.publish({"k0", "k1"});
  w.scheduler.run_until(w.scheduler.now_ms() + 3000);
  EXPECT_EQ(w.live_members(), (std::vector<std::string>{"a", "b"}));

  bool stopped = false;
  auto stop = [](Engine& engine, bool* done) -> Task<void> {
    co_await engine.stop();
    *done = true;
  };
  b.runtime.spawn("stop", stop(b.engine, &stopped));
  w.scheduler.run_until([&] { return stopped; }, w.scheduler.now_ms() + 20'000);
  ASSERT_TRUE(stopped);
  EXPECT_EQ(w.live_members(), (std::vector<std::string>{"a"}))
      << "b is still counted among the members after its stop";
}

TEST(EngineLeaseKeeping, ThePartitionCountWarningFiresOnlyPastTheThreshold) {
  World w;
  EngineOptions options = options_for("a");
  options.partitions_warn_threshold = 3;
  w.add(options);
  w.publish({"k0", "k1", "k2"});
  w.scheduler.run_until(w.scheduler.now_ms() + 3000);
  EXPECT_TRUE(w.warnings().empty()) << "3 partitions are not over a threshold of 3";

  w.publish({"k3"});
  w.scheduler.run_until(w.scheduler.now_ms() + 3000);
  EXPECT_EQ(w.warnings(), (std::vector<std::string>{"live partitions 4 over threshold 3"}));
}

}  // namespace
}  // namespace seqby::sim
