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
#include <string>
#include <vector>

#include "seqby/core/keyspace.h"
#include "sim_engine_parts.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261206;
constexpr std::uint64_t kHeldMs = 2000;  // a command timeout
constexpr std::uint64_t kSlowMs = 1500;  // a slow master's delay

// While `held`: every command that names the members set waits kHeldMs and answers a timeout,
// and every one that names k0's lease reaches the server kSlowMs late; the others go through.
class HoldKeyLink final : public redis::RedisLink {
 public:
  HoldKeyLink(redis::RedisLink& inner, Runtime& runtime) : inner_(inner), runtime_(runtime) {}
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
  const std::string held_key_ = members_set_name("order", "billing", KeyLayout::flat);
  const std::string slow_key_ = lease_key_name("order", "k0");
};

class OkHandler final : public Handler {
 public:
  Task<HandlerResult> handle(const Event&, HandlerContext&) override {
    co_return HandlerResult::success();
  }
};

using World = testing::OneWorkerWorld<OkHandler, HoldKeyLink>;

std::size_t count(const World& w, HistoryOp op, std::uint64_t from_ms) {
  return static_cast<std::size_t>(
      std::count_if(w.history.records().begin(), w.history.records().end(),
                    [&](const HistoryRecord& r) { return r.op == op && r.time_ms >= from_ms; }));
}

TEST(HeartbeatRoundHeld, AnAnnounceThatGetsNoAnswerBesideASlowRenewalCostsNoLease) {
  World w(kSeed);
  ASSERT_EQ(World::options().lease_ttl_ms, 3000u);
  ASSERT_EQ(World::options().heartbeat_interval_ms, 1000u);
  w.engine.start();
  w.publisher_runtime.spawn("publisher", w.publish_all(1));
  w.scheduler.run_until([&] { return count(w, HistoryOp::ack, 0) > 0; }, 30'000);
  ASSERT_EQ(count(w, HistoryOp::ack, 0), 1u) << "k0's event was never handled";

  w.wrap.held = true;
  const std::uint64_t held_from = w.scheduler.now_ms();
  w.scheduler.run_until(held_from + 20'000);

  EXPECT_GE(w.wrap.held_commands, 5u) << "the announce was not held";
  EXPECT_GE(w.wrap.slow_commands, 5u) << "the renewal was not slowed";
  EXPECT_EQ(count(w, HistoryOp::lose, held_from), 0u) << "a lost k0's lease";
  EXPECT_EQ(count(w, HistoryOp::acquire, held_from), 0u) << "a took k0 again";
  EXPECT_GE(count(w, HistoryOp::renew, held_from), 8u);
  // Each round lasted as long as the held announce: the round's figure says so.
  const std::vector<std::uint64_t> rounds = w.engine.heartbeat_rounds_ms();
  ASSERT_FALSE(rounds.empty());
  EXPECT_GE(rounds.back(), kHeldMs);
}

}  // namespace
}  // namespace seqby::sim
