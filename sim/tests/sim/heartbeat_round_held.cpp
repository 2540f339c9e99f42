// A heartbeat round held by a command that gets no answer keeps the instance's leases, end to
// end on the simulator: the announce of the instance (the members set's key) waits 2 s for a
// timeout, as it does when that key's cluster master is stopped (SIGSTOP, a partition), and the
// renewal of the lease reaches the server 1.5 s late (a slow master). The heartbeat announces
// and renews at once and starts its rounds every heartbeat_interval_ms (at once after a longer
// one), so the lease is renewed every 2 s against its 3 s TTL. Awaiting the announce before the
// renewal (3.5 s a round), or sleeping a whole interval after a round (3 s or more between
// renewals), lets the server's lease lapse between two renewals. (The real-cluster measure of
// the same: bench_cluster_failover_leases --fault stop.)
#include <gtest/gtest.h>

#include <algorithm>
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
constexpr std::uint64_t kHeartbeatMs = 1000;
constexpr std::uint64_t kHeldMs = 2000;  // a command timeout
constexpr std::uint64_t kSlowMs = 1500;  // a slow master's delay

using testing::CommittingHandler;

// While `held`: every command that names `held_key` waits kHeldMs and answers a timeout, and
// every one that names `slow_key` reaches the server kSlowMs late; the others go through.
class HoldKeyLink final : public redis::RedisLink {
 public:
  HoldKeyLink(redis::RedisLink& inner, Runtime& runtime, std::string held_key, std::string slow_key)
      : inner_(inner),
        runtime_(runtime),
        held_key_(std::move(held_key)),
        slow_key_(std::move(slow_key)) {}
  bool held = false;
  std::uint64_t held_commands = 0;
  std::uint64_t slow_commands = 0;

  Task<Result<redis::Reply>> execute(redis::Command command) override {
    const bool names_held = std::find(command.begin(), command.end(), held_key_) != command.end();
    const bool names_slow = std::find(command.begin(), command.end(), slow_key_) != command.end();
    if (held && names_held) {
      ++held_commands;
      co_await runtime_.sleep_ms(kHeldMs);
      co_return make_error(Errc::timeout, "no reply within the command timeout");
    }
    if (held && names_slow) {
      ++slow_commands;
      co_await runtime_.sleep_ms(kSlowMs);
    }
    Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
    co_return reply;
  }

 private:
  redis::RedisLink& inner_;
  Runtime& runtime_;
  std::string held_key_;
  std::string slow_key_;
};

EngineOptions options() {
  EngineOptions o;
  o.owner_id = "a";
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = kTtlMs;
  o.heartbeat_interval_ms = kHeartbeatMs;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
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
  HoldKeyLink holding{link, runtime, members_set_name(kCategory, kGroup, KeyLayout::flat),
                      lease_key_name(kCategory, "k0")};
  redis::RedisBroker broker{holding};
  CommittingHandler handler{runtime};
  Engine engine{runtime, broker, history, handler, options()};
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};

  ~World() {
    if (::testing::Test::HasFailure()) {
      for (const auto& r : history.records()) {
        std::fprintf(stderr, "t=%llu %s %s/%s g=%llu %s\n",
                     static_cast<unsigned long long>(r.time_ms), history_op_name(r.op),
                     r.category.c_str(), r.key.c_str(),
                     static_cast<unsigned long long>(r.generation), r.detail.c_str());
      }
    }
    runtime.crash();
    publisher_runtime.crash();
  }

  Task<void> publish(std::string key) {
    const PartitionRef partition{kCategory, key};  // named: no temporary inside co_await
    Result<std::string> id = co_await publisher.publish(partition, "created", "{\"seq\":1}");
    SEQBY_CHECK(id.ok());
  }
  std::size_t count(HistoryOp op, std::uint64_t from_ms) const {
    return static_cast<std::size_t>(
        std::count_if(history.records().begin(), history.records().end(),
                      [&](const HistoryRecord& r) { return r.op == op && r.time_ms >= from_ms; }));
  }
};

TEST(HeartbeatRoundHeld, AnAnnounceThatGetsNoAnswerBesideASlowRenewalCostsNoLease) {
  World w;
  w.engine.start();
  w.publisher_runtime.spawn("publisher", w.publish("k0"));
  w.scheduler.run_until([&] { return w.count(HistoryOp::ack, 0) > 0; }, 30'000);
  ASSERT_EQ(w.count(HistoryOp::ack, 0), 1u) << "k0's event was never handled";

  w.holding.held = true;
  const std::uint64_t held_from = w.scheduler.now_ms();
  w.scheduler.run_until(held_from + 20'000);

  EXPECT_GE(w.holding.held_commands, 5u) << "the announce was not held";
  EXPECT_GE(w.holding.slow_commands, 5u) << "the renewal was not slowed";
  EXPECT_EQ(w.count(HistoryOp::lose, held_from), 0u) << "a lost k0's lease";
  EXPECT_EQ(w.count(HistoryOp::acquire, held_from), 0u) << "a took k0 again";
  EXPECT_GE(w.count(HistoryOp::renew, held_from), 8u);
  // Each round lasted as long as the held announce: the round's figure says so.
  const std::vector<std::uint64_t> rounds = w.engine.heartbeat_rounds_ms();
  ASSERT_FALSE(rounds.empty());
  EXPECT_GE(rounds.back(), kHeldMs);
}

}  // namespace
}  // namespace seqby::sim
