// The reaper and the category's subscriber set (Broker::subscribe), call by call through
// RedisBroker on SimRedis and the very reap.lua real Redis runs: a group subscribed to the
// category that has no consumer group on a partition yet keeps that partition from being reaped,
// however cold it is; once it has joined and consumed everything, the reap goes ahead. A group
// subscribed to another category only does not hold the partition.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

constexpr const char* kBilling = "billing";  // the owner's group, which reaps
constexpr const char* kFulfil = "fulfil";    // a second group of the category
constexpr std::uint64_t kIdleMs = 1000;

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

struct ReapSubscribers : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  const PartitionRef partition{"order", "k0"};

  void subscribe(const std::string& category, const std::string& group) {
    Status s = run_now(broker.subscribe(category, group));
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  Lease acquire() {
    auto got = run_now(broker.acquire(partition, "", "a", 60'000));
    SEQBY_CHECK(got.ok() && got.value().has_value());
    return *got.value();
  }
  void publish(int count) {
    for (int n = 0; n < count; ++n) {
      auto id = run_now(broker.publish(partition, "created", "{\"n\":" + std::to_string(n) + "}"));
      SEQBY_CHECK(id.ok());
    }
  }
  // Joins `group` to the stream, then reads and acks every entry for it; returns how many.
  int consume_all(const Lease& lease, const std::string& group) {
    EXPECT_TRUE(run_now(broker.ensure_group(partition, group)).ok());
    for (int n = 0; n < 100; ++n) {
      auto entry = run_now(broker.fenced_read(lease, group, ReadFrom::new_entries));
      EXPECT_TRUE(entry.ok());
      if (!entry.ok() || !entry.value().has_value()) return n;
      EXPECT_TRUE(run_now(broker.fenced_ack(lease, group, entry.value()->id)).ok());
    }
    return -1;
  }
  bool reap(const Lease& lease) {
    auto reaped = run_now(broker.reap(lease, kIdleMs));
    EXPECT_TRUE(reaped.ok()) << reaped.error().message;
    return reaped.ok() && reaped.value();
  }
  bool stream_exists() { return redis.execute({"EXISTS", partition.stream()}).integer == 1; }
  bool indexed() { return redis.execute({"SISMEMBER", partition.index(), "k0"}).integer == 1; }
};

TEST_F(ReapSubscribers, SubscribingIsIdempotentAndListsTheGroupsOfTheCategory) {
  subscribe("order", kBilling);
  subscribe("order", kFulfil);
  subscribe("order", kFulfil);
  Reply members = redis.execute({"SMEMBERS", "order:__subscribers__"});
  ASSERT_EQ(members.elements.size(), 2u);
  EXPECT_EQ(redis.execute({"SISMEMBER", "order:__subscribers__", kFulfil}).integer, 1);
  EXPECT_EQ(redis.execute({"SISMEMBER", "order:__subscribers__", kBilling}).integer, 1);
}

TEST_F(ReapSubscribers, SubscriberNotJoinedBlocksTheReapUntilItHasConsumedEverything) {
  subscribe("order", kBilling);
  subscribe("order", kFulfil);
  publish(2);
  const Lease lease = acquire();
  EXPECT_EQ(consume_all(lease, kBilling), 2);
  clock.advance(10 * kIdleMs);

  // Cold for billing, the only group on the stream, but fulfil has not joined: not reaped.
  EXPECT_FALSE(reap(lease));
  EXPECT_TRUE(stream_exists());
  EXPECT_TRUE(indexed());
  EXPECT_EQ(redis.execute({"XLEN", partition.stream()}).integer, 2);

  // Joined but behind: still not reaped (the existing rule).
  EXPECT_TRUE(run_now(broker.ensure_group(partition, kFulfil)).ok());
  EXPECT_FALSE(reap(lease));

  // Joined and consumed everything: reaped, with its index entry and lease.
  EXPECT_EQ(consume_all(lease, kFulfil), 2);
  EXPECT_TRUE(reap(lease));
  EXPECT_FALSE(stream_exists());
  EXPECT_FALSE(indexed());
  EXPECT_EQ(redis.execute({"EXISTS", partition.lease()}).integer, 0);
}

TEST_F(ReapSubscribers, SubscriberOfAnotherCategoryDoesNotHoldThePartition) {
  subscribe("order", kBilling);
  subscribe("payment", kFulfil);
  publish(1);
  const Lease lease = acquire();
  EXPECT_EQ(consume_all(lease, kBilling), 1);
  clock.advance(10 * kIdleMs);
  EXPECT_TRUE(reap(lease));
  EXPECT_FALSE(stream_exists());
  EXPECT_FALSE(indexed());
}

TEST_F(ReapSubscribers, ARecreatedPartitionWaitsForTheSubscriberToJoinAgain) {
  subscribe("order", kBilling);
  subscribe("order", kFulfil);
  publish(1);
  Lease lease = acquire();
  EXPECT_EQ(consume_all(lease, kBilling), 1);
  EXPECT_EQ(consume_all(lease, kFulfil), 1);
  clock.advance(10 * kIdleMs);
  ASSERT_TRUE(reap(lease));

  // The stream comes back without its groups: fulfil must join it again before a reap.
  publish(1);
  lease = acquire();
  EXPECT_EQ(consume_all(lease, kBilling), 1);
  clock.advance(10 * kIdleMs);
  EXPECT_FALSE(reap(lease));
  EXPECT_EQ(consume_all(lease, kFulfil), 1);
  EXPECT_TRUE(reap(lease));
}

}  // namespace
}  // namespace seqby::redis
