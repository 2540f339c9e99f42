// A lease lost while the reply of the read that delivers an entry is on its way, end to end on the
// simulator (an Engine over SimRedis through the very Lua scripts real Redis runs): the read ran
// on the server while the lease was still the worker's, but before its reply came back the lease
// moved and the worker's heartbeat had its renew refused, so the worker knows it lost the unit.
// It must not enter the entry that reply brings: a worker never enters an event after it knows
// its lease is gone. It kills mutate/catalog.txt worker-enters-after-lose.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <string>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/core/keyspace.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261204;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";
constexpr std::uint64_t kHeartbeatMs = 1000;

class OkHandler final : public Handler {
 public:
  Task<HandlerResult> handle(const Event&, HandlerContext&) override {
    co_return HandlerResult::success();
  }
};

// A link that, once armed, holds back the first reply that delivers an entry (fenced_next's
// {acked, '', id, type, ...}): it calls on_hold, then waits hold_ms before handing the reply on.
// Every other call goes through at once.
class HoldingLink final : public redis::RedisLink {
 public:
  HoldingLink(redis::RedisLink& inner, Runtime& runtime) : inner_(inner), runtime_(runtime) {}
  bool armed = false;
  bool held = false;
  std::uint64_t hold_ms = 0;
  std::function<void()> on_hold;

  Task<Result<redis::Reply>> execute(redis::Command command) override {
    Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
    if (armed && reply.ok() && delivers_an_entry(reply.value())) {
      armed = false;
      on_hold();
      co_await runtime_.sleep_ms(hold_ms);
      held = true;
    }
    co_return reply;
  }

 private:
  static bool delivers_an_entry(const redis::Reply& r) {
    return r.kind == redis::Reply::Kind::array && r.elements.size() >= 6 &&
           r.elements[0].kind == redis::Reply::Kind::integer && r.elements[1].str.empty() &&
           r.elements[3].str == "created";
  }
  redis::RedisLink& inner_;
  Runtime& runtime_;
};

EngineOptions options_for(const std::string& owner) {
  EngineOptions o;
  o.owner_id = owner;
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = 3000;
  o.heartbeat_interval_ms = kHeartbeatMs;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
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
  HoldingLink holding{link, runtime};
  redis::RedisBroker broker{holding};
  OkHandler handler;
  Engine engine{runtime, broker, history, handler, options_for("a")};
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};

  ~World() {
    if (::testing::Test::HasFailure()) print_history();
    runtime.crash();
    publisher_runtime.crash();
  }

  void publish(const std::string& key) {
    publisher_runtime.spawn("publisher", publish_one(key));
    scheduler.run_until(scheduler.now_ms() + 100);
  }
  Task<void> publish_one(std::string key) {
    const PartitionRef partition{kCategory, key};  // named: no temporary inside co_await
    Result<std::string> id = co_await publisher.publish(partition, "created", "{\"seq\":1}");
    SEQBY_CHECK(id.ok());
  }

  const HistoryRecord* first(HistoryOp op, const std::string& key) const {
    for (const auto& r : history.records()) {
      if (r.op == op && r.node == "a" && r.key == key) return &r;
    }
    return nullptr;
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

TEST(LoseDuringRead, AWorkerThatLostItsLeaseWhileItsReadWasAnsweredDoesNotEnterTheEntry) {
  World w;
  w.engine.start();
  // k0 exists (an empty stream would not be a partition): its first event is handled.
  w.publish("k0");
  w.scheduler.run_until([&] { return w.first(HistoryOp::exit, "k0") != nullptr; }, 20'000);
  ASSERT_NE(w.first(HistoryOp::exit, "k0"), nullptr) << "a never handled k0's first event";
  const std::uint64_t from_index = w.history.records().size();

  // The next read that delivers an entry is answered late: meanwhile the lease moves to another
  // owner (as after a partition of `a` that healed), so a's next renew is refused.
  w.holding.hold_ms = 3 * kHeartbeatMs;
  w.holding.on_hold = [&] {
    w.redis.execute({"SET", lease_key_name(kCategory, "k0"), "b:99", "PX", "60000"});
  };
  w.holding.armed = true;
  w.publish("k0");
  w.scheduler.run_until([&] { return w.holding.held; }, w.scheduler.now_ms() + 20'000);
  ASSERT_TRUE(w.holding.held) << "no read delivered k0's second event";
  w.scheduler.run_until(w.scheduler.now_ms() + 2 * kHeartbeatMs);

  const HistoryRecord* lost = nullptr;
  const HistoryRecord* read_after_lose = nullptr;
  std::size_t entered_after_lose = 0;
  for (std::size_t i = from_index; i < w.history.records().size(); ++i) {
    const HistoryRecord& r = w.history.records()[i];
    if (r.node != "a" || r.key != "k0") continue;
    if (r.op == HistoryOp::lose && lost == nullptr) lost = &r;
    if (lost != nullptr && r.op == HistoryOp::read) read_after_lose = &r;
    if (lost != nullptr && r.op == HistoryOp::enter) ++entered_after_lose;
  }
  ASSERT_NE(lost, nullptr) << "a's renew was never refused";
  EXPECT_EQ(lost->detail, "renew refused");
  ASSERT_NE(read_after_lose, nullptr) << "the held reply did not come back after the lose";
  EXPECT_EQ(entered_after_lose, 0u) << "a entered an event after it knew its lease was gone";
}

}  // namespace
}  // namespace seqby::sim
