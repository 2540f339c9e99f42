// The reaper never deletes an event no group has read: a partition whose one event was published
// before any consumer group joined its stream (and before any group subscribed to the category,
// as with producers deployed before their consumers) is not reaped, however cold; once a group
// has joined and consumed it, it is. RedisBroker on SimRedis, call by call through reap.lua (it
// kills mutate/catalog.txt reap-groupless-stream: the existing tests reaped only streams that
// had a group, or more than one entry).
#include <gtest/gtest.h>

#include <string>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

constexpr const char* kGroup = "billing";
constexpr std::uint64_t kIdleMs = 1000;

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

struct ReapUnreadStream : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  const PartitionRef partition{"order", "k0"};

  bool reap(const Lease& lease) {
    auto reaped = run_now(broker.reap(lease, kIdleMs));
    EXPECT_TRUE(reaped.ok()) << reaped.error().message;
    return reaped.ok() && reaped.value();
  }
  std::int64_t length() { return redis.execute({"XLEN", partition.stream()}).integer; }
  bool indexed() { return redis.execute({"SISMEMBER", partition.index(), "k0"}).integer == 1; }
};

TEST_F(ReapUnreadStream, APartitionWhoseOnlyEventNoGroupHasReadIsNotReaped) {
  ASSERT_TRUE(run_now(broker.publish(partition, "created", "{\"n\":1}")).ok());
  auto got = run_now(broker.acquire(partition, "", "a", 60'000));
  ASSERT_TRUE(got.ok() && got.value().has_value());
  const Lease lease = *got.value();
  clock.advance(10 * kIdleMs);

  EXPECT_FALSE(reap(lease)) << "the event was deleted before any group read it";
  EXPECT_EQ(length(), 1);
  EXPECT_TRUE(indexed());

  // Read and acknowledged by a group, the same partition is cold and reaped.
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  auto entry = run_now(broker.fenced_read(lease, kGroup, ReadFrom::new_entries));
  ASSERT_TRUE(entry.ok() && entry.value().has_value());
  ASSERT_TRUE(run_now(broker.fenced_ack(lease, kGroup, entry.value()->id)).ok());
  EXPECT_TRUE(reap(lease));
  EXPECT_EQ(length(), 0);
  EXPECT_FALSE(indexed());
}

}  // namespace
}  // namespace seqby::redis
