// A pending entry whose stream entry an operator deleted (XDEL, or a trim past it) while it was
// delivered: the owner's pending read skips it and ACKNOWLEDGES it, then gives the next pending
// entry that still has its fields, so the partition goes on instead of meeting the deleted entry
// on every read. RedisBroker on SimRedis, call by call, through fenced_next (the engine's one
// step per event) and fenced_read, which read through the same lib/read_one.lua (it kills
// mutate/catalog.txt read-one-trimmed-pending-not-acked).
#include <gtest/gtest.h>

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

struct TrimmedPending : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  const PartitionRef partition{"order", "k0"};
  std::vector<std::string> ids;
  Lease lease;

  void SetUp() override {
    ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
    for (int n = 1; n <= 3; ++n) {
      auto id = run_now(broker.publish(partition, "created", "{\"n\":" + std::to_string(n) + "}"));
      ASSERT_TRUE(id.ok());
      ids.push_back(id.value());
    }
    auto got = run_now(broker.acquire(partition, "", "a", 3000));
    ASSERT_TRUE(got.ok() && got.value().has_value());
    lease = *got.value();
    // The first two entries are delivered to a and left pending (a crashed before its acks, say),
    // then an operator deletes the first one.
    NextAsk batch;
    batch.count = 2;
    auto read = run_now(broker.fenced_next(lease, kGroup, ReadFrom::new_entries, "", batch));
    ASSERT_TRUE(read.ok()) << read.error().message;
    ASSERT_EQ(pending_ids(), (std::vector<std::string>{ids[0], ids[1]}));
    ASSERT_EQ(redis.execute({"XDEL", partition.stream(), ids[0]}).integer, 1);
  }
  std::vector<std::string> pending_ids() {
    Reply r = redis.execute({"XPENDING", partition.stream(), kGroup, "-", "+", "10"});
    std::vector<std::string> out;
    for (const Reply& entry : r.elements) out.push_back(entry.elements.at(0).str);
    return out;
  }
};

TEST_F(TrimmedPending, TheStepPerEventAcknowledgesTheDeletedEntryAndGivesTheNextPendingOne) {
  auto read = run_now(broker.fenced_next(lease, kGroup, ReadFrom::pending, ""));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read.value().entry.has_value());
  EXPECT_EQ(read.value().entry->id, ids[1]);
  EXPECT_EQ(read.value().entry->data, "{\"n\":2}");
  EXPECT_EQ(pending_ids(), (std::vector<std::string>{ids[1]})) << "the deleted entry is still "
                                                                  "pending: every read meets it";
  // And the partition goes on: e2 acknowledged, then e3 read as new.
  auto next = run_now(broker.fenced_next(lease, kGroup, ReadFrom::pending, ids[1]));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_FALSE(next.value().entry.has_value());
  auto third = run_now(broker.fenced_next(lease, kGroup, ReadFrom::new_entries, ""));
  ASSERT_TRUE(third.ok()) << third.error().message;
  ASSERT_TRUE(third.value().entry.has_value());
  EXPECT_EQ(third.value().entry->id, ids[2]);
}

TEST_F(TrimmedPending, ThePreviousReleasesReadSkipsTheDeletedEntryTheSameWay) {
  auto read = run_now(broker.fenced_read(lease, kGroup, ReadFrom::pending));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read.value().has_value());
  EXPECT_EQ(read.value()->id, ids[1]);
  EXPECT_EQ(pending_ids(), (std::vector<std::string>{ids[1]}));
}

}  // namespace
}  // namespace seqby::redis
