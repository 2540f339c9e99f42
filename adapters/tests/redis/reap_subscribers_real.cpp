// reap.lua and the category's subscriber set on a real redis-server (the simulator's twin is
// sim/tests/sim/reap_subscribers.cpp): a group subscribed to the category that has no consumer
// group on the partition keeps it from being reaped; once it has joined and consumed
// everything, the partition is reaped with its index entry and lease.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "redis_server.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

constexpr const char* kCategory = "reap-subscribers-real";  // no other test uses it
constexpr const char* kBilling = "billing";
constexpr const char* kFulfil = "fulfil";
constexpr std::uint64_t kIdleMs = 5;

class ReapSubscribersReal : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    auto config = parse_redis_url(server_.url());
    ASSERT_TRUE(config.ok());
    link_ = std::make_unique<HiredisLink>(runtime_, config.value());
    broker_ = std::make_unique<RedisBroker>(*link_);
    for (const std::string& key :
         {partition_.stream(), partition_.index(), partition_.subscribers(), partition_.lease(),
          partition_.fence()}) {
      run({"DEL", key});
    }
  }
  void TearDown() override {
    broker_.reset();
    link_.reset();
  }

  Reply run(const Command& command) {
    Result<Reply> reply = runtime_.block_on(link_->execute(command));
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? reply.value() : Reply::error("transport failure");
  }
  // Joins `group` to the stream, then reads and acks every entry for it; returns how many.
  int consume_all(const Lease& lease, const std::string& group) {
    EXPECT_TRUE(runtime_.block_on(broker_->ensure_group(partition_, group)).ok());
    for (int n = 0; n < 100; ++n) {
      auto entry = runtime_.block_on(broker_->fenced_read(lease, group, ReadFrom::new_entries));
      EXPECT_TRUE(entry.ok());
      if (!entry.ok() || !entry.value().has_value()) return n;
      EXPECT_TRUE(runtime_.block_on(broker_->fenced_ack(lease, group, entry.value()->id)).ok());
    }
    return -1;
  }
  bool reap(const Lease& lease) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2 * kIdleMs));  // past the idle time
    auto reaped = runtime_.block_on(broker_->reap(lease, kIdleMs));
    EXPECT_TRUE(reaped.ok()) << reaped.error().message;
    return reaped.ok() && reaped.value();
  }

  seqby::testing::RedisServer server_;
  RealRuntime runtime_;
  std::unique_ptr<HiredisLink> link_;
  std::unique_ptr<RedisBroker> broker_;
  const PartitionRef partition_{kCategory, "k0"};
};

TEST_F(ReapSubscribersReal, SubscriberNotJoinedBlocksTheReapUntilItHasConsumedEverything) {
  ASSERT_TRUE(runtime_.block_on(broker_->subscribe(kCategory, kBilling)).ok());
  ASSERT_TRUE(runtime_.block_on(broker_->subscribe(kCategory, kFulfil)).ok());
  ASSERT_TRUE(runtime_.block_on(broker_->subscribe(kCategory, kFulfil)).ok());  // idempotent
  EXPECT_EQ(run({"SCARD", partition_.subscribers()}).integer, 2);
  for (int n = 0; n < 2; ++n) {
    auto id = runtime_.block_on(broker_->publish(partition_, "created", "{}"));
    ASSERT_TRUE(id.ok()) << id.error().message;
  }
  auto acquired = runtime_.block_on(broker_->acquire(partition_, "", "a", 60'000));
  ASSERT_TRUE(acquired.ok() && acquired.value().has_value());
  const Lease lease = *acquired.value();
  EXPECT_EQ(consume_all(lease, kBilling), 2);

  EXPECT_FALSE(reap(lease)) << "reaped before fulfil joined the stream";
  EXPECT_EQ(run({"XLEN", partition_.stream()}).integer, 2);
  EXPECT_EQ(run({"SISMEMBER", partition_.index(), "k0"}).integer, 1);

  EXPECT_EQ(consume_all(lease, kFulfil), 2);
  EXPECT_TRUE(reap(lease));
  EXPECT_EQ(run({"EXISTS", partition_.stream()}).integer, 0);
  EXPECT_EQ(run({"SISMEMBER", partition_.index(), "k0"}).integer, 0);
  EXPECT_EQ(run({"EXISTS", partition_.lease()}).integer, 0);
}

}  // namespace
}  // namespace seqby::redis
