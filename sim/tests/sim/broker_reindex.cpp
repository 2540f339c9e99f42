// RedisBroker::reindex on SimRedis, through reindex.lua as real Redis runs it: the holder of a
// unit that discovery found in no index puts its key back while its stream holds entries, on one
// server in one script and under the cluster key layout (a server that refuses a script spanning
// slots) in the unit's slot and then the index's; a stream with no entries (reaped, then made
// again empty by a group) is not put back; a lease not held puts nothing back.
#include <gtest/gtest.h>

#include <string>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

constexpr const char* kGroup = "billing";

struct BrokerReindex : ::testing::TestWithParam<KeyLayout> {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link, options()};
  PartitionRef partition = laid_out(PartitionRef{"order", "k0"});

  BrokerReindex() {
    if (GetParam() == KeyLayout::cluster) redis.enable_cluster_mode();
  }
  RedisBrokerOptions options() const {
    RedisBrokerOptions o;
    o.key_layout = GetParam();
    return o;
  }
  PartitionRef laid_out(PartitionRef p) const {
    p.layout = GetParam();
    return p;
  }
  Lease acquire(const std::string& owner) {
    auto got = run_now(broker.acquire(partition, "", owner, 3000));
    SEQBY_CHECK(got.ok() && got.value().has_value());
    return *got.value();
  }
  bool indexed() { return redis.execute({"SISMEMBER", partition.index(), "k0"}).integer == 1; }
  void lose_index_entry() {
    ASSERT_EQ(redis.execute({"SREM", partition.index(), "k0"}).integer, 1);
  }
};

TEST_P(BrokerReindex, AHeldUnitWhoseStreamHoldsEntriesGoesBackIntoTheIndex) {
  ASSERT_TRUE(run_now(broker.publish(partition, "created", "{}")).ok());
  const Lease lease = acquire("a");
  lose_index_entry();
  const Result<bool> put_back = run_now(broker.reindex(lease));
  ASSERT_TRUE(put_back.ok()) << put_back.error().message;
  EXPECT_TRUE(put_back.value());
  EXPECT_TRUE(indexed());
}

TEST_P(BrokerReindex, AUnitWithNoEntriesIsNotPutBack) {
  // Reaped, then acquired: the holder's group made the stream again, empty.
  const Lease lease = acquire("a");
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  ASSERT_EQ(redis.execute({"EXISTS", partition.stream()}).integer, 1);
  const Result<bool> put_back = run_now(broker.reindex(lease));
  ASSERT_TRUE(put_back.ok()) << put_back.error().message;
  EXPECT_FALSE(put_back.value());
  EXPECT_FALSE(indexed());
}

TEST_P(BrokerReindex, ALeaseNotHeldPutsNothingBack) {
  ASSERT_TRUE(run_now(broker.publish(partition, "created", "{}")).ok());
  Lease stale = acquire("a");
  lose_index_entry();
  ASSERT_EQ(redis.execute({"DEL", stale.key()}).integer, 1);  // expired
  const Lease fresh = acquire("b");
  ASSERT_GT(fresh.generation, stale.generation);
  const Result<bool> put_back = run_now(broker.reindex(stale));
  ASSERT_FALSE(put_back.ok());
  EXPECT_EQ(put_back.code(), Errc::fenced);
  EXPECT_FALSE(indexed());
}

INSTANTIATE_TEST_SUITE_P(Layouts, BrokerReindex,
                         ::testing::Values(KeyLayout::flat, KeyLayout::cluster),
                         [](const ::testing::TestParamInfo<KeyLayout>& info) {
                           return std::string(info.param == KeyLayout::flat ? "Flat" : "Cluster");
                         });

}  // namespace
}  // namespace seqby::redis
