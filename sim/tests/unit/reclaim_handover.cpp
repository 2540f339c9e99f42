// The new owner's reclaim takes over EVERY entry its partition's earlier consumers left pending,
// however recently they were delivered and however many there are: an entry left pending by a
// failed handler just before its owner released the lease (a graceful stop or a rebalance) is
// read again by the next owner at once; a long pending list is walked to its end whatever the
// batch sizes. RedisBroker on SimRedis, call by call (it kills mutate/catalog.txt
// reclaim-min-idle-count and reclaim-one-call).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

constexpr const char* kGroup = "billing";

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

struct ReclaimHandover : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  const PartitionRef partition{"order", "k0"};

  static Lease acquire(RedisBroker& broker, const PartitionRef& p, const std::string& owner) {
    auto got = run_now(broker.acquire(p, "", owner, 3000));
    SEQBY_CHECK(got.ok() && got.value().has_value());
    return *got.value();
  }
  static std::optional<StreamEntry> read(RedisBroker& broker, const Lease& lease, ReadFrom from) {
    auto entry = run_now(broker.fenced_read(lease, kGroup, from));
    SEQBY_CHECK(entry.ok());
    return entry.value();
  }
};

TEST_F(ReclaimHandover, AnEntryLeftPendingByAReleasedOwnerIsReadAgainByTheNextAtOnce) {
  RedisBroker broker{link};
  const std::string e1 = run_now(broker.publish(partition, "created", "{\"seq\":1}")).value();
  const std::string e2 = run_now(broker.publish(partition, "created", "{\"seq\":2}")).value();
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const Lease a = acquire(broker, partition, "a");
  const std::optional<StreamEntry> first = read(broker, a, ReadFrom::new_entries);
  ASSERT_TRUE(first.has_value());
  ASSERT_EQ(first->id, e1);                         // its handler fails: e1 stays pending
  ASSERT_TRUE(run_now(broker.release(a)).value());  // a stops (or gives the unit up)

  const Lease b = acquire(broker, partition, "b");  // the same millisecond
  EXPECT_EQ(run_now(broker.reclaim(b, kGroup)).value(), 1u);
  const std::optional<StreamEntry> again = read(broker, b, ReadFrom::pending);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->id, e1);
  EXPECT_EQ(again->delivery_count, 2u);
  ASSERT_TRUE(run_now(broker.fenced_ack(b, kGroup, e1)).ok());
  const std::optional<StreamEntry> next = read(broker, b, ReadFrom::new_entries);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->id, e2);
}

TEST_F(ReclaimHandover, APendingListLongerThanEveryBatchIsTakenOverToItsEnd) {
  RedisBrokerOptions options;
  options.reclaim_count_per_call = 2;    // XAUTOCLAIM COUNT
  options.reclaim_calls_per_script = 2;  // so 5 entries need 2 calls in one script, 1 in the next
  RedisBroker broker{link, options};
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  std::vector<std::string> ids;
  for (int seq = 1; seq <= 5; ++seq) {
    const std::string data = "{\"seq\":" + std::to_string(seq) + "}";
    ids.push_back(run_now(broker.publish(partition, "created", data)).value());
  }
  // Five earlier generations each left one entry pending (each was fenced before its ack).
  for (const std::string& id : ids) {
    const Lease stale = acquire(broker, partition, "a");
    ASSERT_EQ(read(broker, stale, ReadFrom::new_entries)->id, id);
    clock.advance(3001);
  }
  const Lease b = acquire(broker, partition, "b");
  EXPECT_EQ(run_now(broker.reclaim(b, kGroup)).value(), 5u);
  for (const std::string& id : ids) {  // b reads them again, in order, as its own pending ones
    const std::optional<StreamEntry> entry = read(broker, b, ReadFrom::pending);
    ASSERT_TRUE(entry.has_value());
    EXPECT_EQ(entry->id, id);
    ASSERT_TRUE(run_now(broker.fenced_ack(b, kGroup, id)).ok());
  }
  EXPECT_FALSE(read(broker, b, ReadFrom::pending).has_value());
  EXPECT_FALSE(read(broker, b, ReadFrom::new_entries).has_value());
}

}  // namespace
}  // namespace seqby::redis
