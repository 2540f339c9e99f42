// Owner ids where one begins with the other (pod names worker-1 and worker-10, or a restarted
// worker-1 beside worker-10): a lease is an owner's own only when its value is exactly
// "owner:generation", so neither acquire nor acquire_many ever hands one of them the lease the
// other holds. RedisBroker on SimRedis, call by call (it kills mutate/catalog.txt
// acquire-owner-prefix-no-colon and acquire-many-owner-prefix-no-colon).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

struct LeaseOwnerNames : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  const PartitionRef partition{"order", "k0"};

  void SetUp() override {
    ASSERT_TRUE(run_now(broker.publish(partition, "created", "{\"seq\":1}")).ok());
  }
  std::optional<Lease> acquire(const std::string& owner) {
    auto got = run_now(broker.acquire(partition, "", owner, 3000));
    SEQBY_CHECK(got.ok());
    return got.value();
  }
  std::optional<Lease> acquire_many(const std::string& owner) {
    auto got = run_now(broker.acquire_many({partition}, "", owner, 3000, 1));
    SEQBY_CHECK(got.ok() && got.value().size() == 1);
    return got.value()[0];
  }
  bool holds(const Lease& lease) { return run_now(broker.check_lease(lease)).ok(); }
};

TEST_F(LeaseOwnerNames, AnOwnerWhoseIdBeginsTheHoldersIdIsRefusedByAcquire) {
  const std::optional<Lease> held = acquire("worker-10");
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(acquire("worker-1").has_value());
  EXPECT_TRUE(holds(*held));
  EXPECT_FALSE(acquire("worker-").has_value());
  EXPECT_TRUE(holds(*held));
}

TEST_F(LeaseOwnerNames, AnOwnerWhoseIdBeginsTheHoldersIdIsRefusedByAcquireMany) {
  const std::optional<Lease> held = acquire_many("worker-10");
  ASSERT_TRUE(held.has_value());
  EXPECT_FALSE(acquire_many("worker-1").has_value());
  EXPECT_TRUE(holds(*held));
}

TEST_F(LeaseOwnerNames, TheHolderItselfStillTakesItsLeaseAgainAtAFreshGeneration) {
  const std::optional<Lease> first = acquire("worker-1");
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(acquire("worker-10").has_value());
  const std::optional<Lease> again = acquire_many("worker-1");  // its earlier reply was lost
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->generation, first->generation + 1);
  EXPECT_FALSE(holds(*first));
  EXPECT_TRUE(holds(*again));
}

}  // namespace
}  // namespace seqby::redis
