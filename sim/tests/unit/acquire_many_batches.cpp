// acquire_many over more partitions than one script call takes (RedisBroker::kLeaseBatchMax): an
// instance asking for `want` leases gets exactly `want` when enough are free, however the free
// ones fall across the batches, and the free partitions it did not need stay free for the other
// instances (the fair share). RedisBroker on SimRedis, call by call (it kills mutate/catalog.txt
// broker-acquire-many-want-per-batch).
#include <gtest/gtest.h>

#include <cstddef>
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

struct AcquireManyBatches : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  std::vector<PartitionRef> partitions;

  void SetUp() override {
    for (std::size_t i = 0; i < RedisBroker::kLeaseBatchMax + 44; ++i) {
      partitions.push_back(PartitionRef{"order", "k" + std::to_string(i)});
      ASSERT_TRUE(run_now(broker.publish(partitions.back(), "created", "{}")).ok());
    }
  }
  bool take(const PartitionRef& partition, const std::string& owner) {
    auto got = run_now(broker.acquire(partition, "", owner, 3000));
    SEQBY_CHECK(got.ok());
    return got.value().has_value();
  }
  static std::size_t granted(const std::vector<std::optional<Lease>>& leases) {
    std::size_t n = 0;
    for (const auto& lease : leases) n += lease.has_value() ? 1 : 0;
    return n;
  }
};

// Another instance holds all but 10 of the first batch: the 10 free ones there are taken, and
// then only 10 of the next batch, not a whole `want` more.
TEST_F(AcquireManyBatches, TheWantIsMetExactlyWhenItsLeasesFallInTwoBatches) {
  for (std::size_t i = 10; i < RedisBroker::kLeaseBatchMax; ++i) {
    ASSERT_TRUE(take(partitions[i], "b"));
  }
  auto got = run_now(broker.acquire_many(partitions, "", "a", 3000, 20));
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(granted(got.value()), 20u) << "a asked for 20 leases";

  // The rest of the second batch is still free for a third instance.
  std::size_t left_free = 0;
  for (std::size_t i = RedisBroker::kLeaseBatchMax; i < partitions.size(); ++i) {
    left_free += take(partitions[i], "c") ? 1 : 0;
  }
  EXPECT_EQ(left_free, partitions.size() - RedisBroker::kLeaseBatchMax - 10);
}

}  // namespace
}  // namespace seqby::redis
