// RedisBroker on SimRedis: the engine's steps at scale, call by call. fenced_next acks one event
// and reads the next under ONE lease check (a batch of new entries, each held one entered only
// after a check of its own) and tells an idle worker after which id to wait;
// renew_many and acquire_many decide each lease exactly as renew and acquire do; ring_wake's
// doorbell and wait_for_entries without a wake link.
#include <gtest/gtest.h>

#include <algorithm>
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
using seqby::testing::renew_outcomes;
using seqby::testing::run_now;

struct EngineBrokerScale : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  const PartitionRef partition{"order", "k0"};

  Lease acquire(const PartitionRef& p, const std::string& owner, std::uint64_t ttl_ms = 3000) {
    auto got = run_now(broker.acquire(p, "", owner, ttl_ms));
    SEQBY_CHECK(got.ok() && got.value().has_value());
    return *got.value();
  }
  std::string publish(const std::string& n) {
    auto id = run_now(broker.publish(partition, "created", "{\"n\":" + n + "}"));
    SEQBY_CHECK(id.ok());
    return id.value();
  }
  NextReply next(const Lease& lease, ReadFrom from, const std::string& ack_id) {
    auto reply = run_now(broker.fenced_next(lease, kGroup, from, ack_id));
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? reply.value() : NextReply{};
  }
  std::int64_t pending_count() {
    Reply r = redis.execute({"XPENDING", partition.stream(), kGroup});
    return r.elements.empty() ? -1 : r.elements[0].integer;
  }
};

TEST_F(EngineBrokerScale, FencedNextAcksTheHandledEntryAndReadsTheNextInOneStep) {
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const std::string e1 = publish("1");
  const std::string e2 = publish("2");
  const Lease a = acquire(partition, "a");

  NextReply first = next(a, ReadFrom::new_entries, "");
  EXPECT_FALSE(first.ack_asked);
  ASSERT_TRUE(first.entry.has_value());
  EXPECT_EQ(first.entry->id, e1);
  EXPECT_EQ(first.entry->delivery_count, 1u);
  EXPECT_EQ(pending_count(), 1);

  NextReply second = next(a, ReadFrom::new_entries, e1);
  EXPECT_TRUE(second.ack_asked);
  EXPECT_TRUE(second.acked);
  ASSERT_TRUE(second.entry.has_value());
  EXPECT_EQ(second.entry->id, e2);
  EXPECT_EQ(pending_count(), 1);  // e1 acknowledged, e2 delivered

  NextReply idle = next(a, ReadFrom::new_entries, e2);
  EXPECT_TRUE(idle.acked);
  EXPECT_FALSE(idle.entry.has_value());
  EXPECT_EQ(idle.last_id, e2);  // wait for entries after the stream's last one
  EXPECT_EQ(pending_count(), 0);

  // Acknowledging again (a lost reply, sent again) is harmless and says so.
  NextReply again = next(a, ReadFrom::new_entries, e2);
  EXPECT_TRUE(again.ack_asked);
  EXPECT_FALSE(again.acked);
}

TEST_F(EngineBrokerScale, FencedNextOfAStaleOwnerAcksNothingAndReadsNothing) {
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const std::string e1 = publish("1");
  publish("2");
  const Lease a = acquire(partition, "a", 1000);
  ASSERT_TRUE(next(a, ReadFrom::new_entries, "").entry.has_value());
  clock.advance(1001);
  const Lease b = acquire(partition, "b");
  auto stale = run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, e1));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.code(), Errc::fenced);
  EXPECT_EQ(pending_count(), 1);  // e1 still pending for a: not acknowledged by the stale owner
  // The new owner's pending read finds nothing of its own; e2 is still to be delivered.
  NextReply fresh = next(b, ReadFrom::new_entries, "");
  ASSERT_TRUE(fresh.entry.has_value());
  EXPECT_NE(fresh.entry->id, e1);
}

TEST_F(EngineBrokerScale, FencedNextOnAnEmptyStreamWaitsAfterZeroAndFromPendingSaysNothing) {
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const Lease a = acquire(partition, "a");
  EXPECT_EQ(next(a, ReadFrom::new_entries, "").last_id, "0-0");
  EXPECT_EQ(next(a, ReadFrom::pending, "").last_id, "");
  auto no_group = run_now(broker.fenced_next(acquire(PartitionRef{"order", "k9"}, "a"), kGroup,
                                             ReadFrom::new_entries, ""));
  ASSERT_FALSE(no_group.ok());
  EXPECT_EQ(no_group.code(), Errc::no_group);
}

TEST_F(EngineBrokerScale, ABatchReadDeliversManyAndEachHeldEntryIsEnteredOnlyAfterItsOwnCheck) {
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  std::vector<std::string> ids;
  for (int n = 1; n <= 5; ++n) ids.push_back(publish(std::to_string(n)));
  const Lease a = acquire(partition, "a");

  NextAsk batch;
  batch.count = 3;
  auto read = run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, "", batch));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read.value().entry.has_value());
  EXPECT_EQ(read.value().entry->id, ids[0]);
  ASSERT_EQ(read.value().held.size(), 2u);
  EXPECT_EQ(read.value().held[0].id, ids[1]);
  EXPECT_EQ(read.value().held[1].id, ids[2]);
  EXPECT_EQ(read.value().held[1].type, "created");
  EXPECT_EQ(read.value().held[1].data, "{\"n\":3}");
  EXPECT_EQ(read.value().held[1].delivery_count, 1u);
  EXPECT_EQ(pending_count(), 3);  // all three delivered to a:1

  // The step for a held entry acks the one handled and checks the lease; it reads nothing.
  NextAsk held;
  held.held_id = ids[1];
  auto check = run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, ids[0], held));
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_TRUE(check.value().acked);
  EXPECT_TRUE(check.value().held_checked);
  EXPECT_FALSE(check.value().entry.has_value());
  EXPECT_EQ(pending_count(), 2);  // ids[0] acknowledged; ids[3] and ids[4] not delivered

  // Once the lease moved, the step for the next held entry is refused and acks nothing.
  clock.advance(3001);
  const Lease b = acquire(partition, "b");
  held.held_id = ids[2];
  auto stale = run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, ids[1], held));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.code(), Errc::fenced);
  EXPECT_EQ(pending_count(), 2);
  // The new owner takes the held entries over and reads them first, in order.
  auto reclaimed = run_now(broker.reclaim(b, kGroup));
  ASSERT_TRUE(reclaimed.ok());
  EXPECT_EQ(reclaimed.value(), 2u);
  NextReply first = next(b, ReadFrom::pending, "");
  ASSERT_TRUE(first.entry.has_value());
  EXPECT_EQ(first.entry->id, ids[1]);
  NextReply second = next(b, ReadFrom::pending, ids[1]);
  ASSERT_TRUE(second.entry.has_value());
  EXPECT_EQ(second.entry->id, ids[2]);
}

TEST_F(EngineBrokerScale, ABatchReadOnAnEmptyStreamWaitsAfterItsLastEntry) {
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const std::string e1 = publish("1");
  const Lease a = acquire(partition, "a");
  NextAsk batch;
  batch.count = 8;
  auto read = run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, "", batch));
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(read.value().entry.has_value());
  EXPECT_TRUE(read.value().held.empty());
  auto idle = run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, e1, batch));
  ASSERT_TRUE(idle.ok());
  EXPECT_FALSE(idle.value().entry.has_value());
  EXPECT_EQ(idle.value().last_id, e1);
}

TEST_F(EngineBrokerScale, RenewManyRenewsEachOwnLeaseAndRefusesOnlyTheLostOnes) {
  std::vector<Lease> leases;
  for (int i = 0; i < 5; ++i) {
    leases.push_back(acquire(PartitionRef{"order", "k" + std::to_string(i)}, "a", 1000));
  }
  clock.advance(600);
  // k1 lapses and is taken by b; k3 is released: both refused, the others renewed.
  redis.execute({"PEXPIRE", leases[1].key(), "1"});
  clock.advance(2);
  acquire(leases[1].partition, "b");
  ASSERT_TRUE(run_now(broker.release(leases[3])).value());
  const std::vector<std::string> renewed = renew_outcomes(run_now(broker.renew_many(leases, 1000)));
  EXPECT_EQ(renewed,
            (std::vector<std::string>{"renewed", "fenced", "renewed", "fenced", "renewed"}));
  clock.advance(600);  // past the first TTL: the renewed ones live on
  for (const int i : {0, 2, 4}) EXPECT_TRUE(run_now(broker.check_lease(leases[i])).ok());
}

TEST_F(EngineBrokerScale, RenewManySplitsLargeBatchesAndAnswersPerLease) {
  std::vector<Lease> leases;
  const std::size_t count = RedisBroker::kLeaseBatchMax + 7;
  for (std::size_t i = 0; i < count; ++i) {
    leases.push_back(acquire(PartitionRef{"order", "k" + std::to_string(i)}, "a"));
  }
  const std::vector<std::string> renewed = renew_outcomes(run_now(broker.renew_many(leases, 3000)));
  EXPECT_EQ(renewed, std::vector<std::string>(count, "renewed"));
}

TEST_F(EngineBrokerScale, AcquireManyTakesFreeLeasesInOrderUntilWantAndSkipsHeldOnes) {
  std::vector<PartitionRef> partitions;
  for (int i = 0; i < 6; ++i) {
    partitions.push_back(PartitionRef{"order", "k" + std::to_string(i)});
    ASSERT_TRUE(run_now(broker.publish(partitions.back(), "created", "{}")).ok());
  }
  const Lease held = acquire(partitions[1], "b");
  const Lease own_lost_reply = acquire(partitions[2], "a");  // a's earlier reply was lost
  auto got = run_now(broker.acquire_many(partitions, "", "a", 3000, 3));
  ASSERT_TRUE(got.ok()) << got.error().message;
  // k0 granted, k1 held by b, k2 again at a fresh generation, k3 granted: then 3 were granted.
  ASSERT_EQ(got.value().size(), 4u);
  EXPECT_TRUE(got.value()[0].has_value());
  EXPECT_FALSE(got.value()[1].has_value());
  ASSERT_TRUE(got.value()[2].has_value());
  EXPECT_EQ(got.value()[2]->generation, own_lost_reply.generation + 1);
  EXPECT_EQ(run_now(broker.check_lease(own_lost_reply)).code(), Errc::fenced);
  ASSERT_TRUE(got.value()[3].has_value());
  EXPECT_EQ(got.value()[3]->token(), "a:1");
  EXPECT_TRUE(run_now(broker.check_lease(held)).ok());
  auto rest = run_now(broker.acquire(partitions[4], "", "b", 3000));
  ASSERT_TRUE(rest.ok());
  EXPECT_TRUE(rest.value().has_value());  // k4 was not touched
}

// An index member with no stream, or whose key is no stream, is no partition: its lease is not
// taken (no empty stream is made for it, nothing loops on it), and the broker says why, once.
TEST_F(EngineBrokerScale, AcquireManyTakesNoLeaseForAMemberWithoutAStreamOrWithAString) {
  std::vector<std::pair<std::string, std::string>> told;
  RedisBrokerOptions options;
  options.on_no_partition = [&told](const PartitionRef& unit, const std::string& why) {
    told.emplace_back(unit.key, why);
  };
  RedisBroker watched(link, options);
  const PartitionRef good{"order", "good"};
  const PartitionRef missing{"order", "missing"};
  const PartitionRef text{"order", "text"};
  ASSERT_TRUE(run_now(watched.publish(good, "created", "{}")).ok());
  redis.execute({"SET", text.stream(), "not a stream"});
  for (int cycle = 0; cycle < 2; ++cycle) {
    auto got = run_now(watched.acquire_many({missing, text, good}, "", "a", 3000, 3));
    ASSERT_TRUE(got.ok()) << got.error().message;
    ASSERT_EQ(got.value().size(), 3u);
    EXPECT_FALSE(got.value()[0].has_value());
    EXPECT_FALSE(got.value()[1].has_value());
    EXPECT_TRUE(got.value()[2].has_value());  // the second time a's own, at a fresh generation
  }
  EXPECT_EQ(redis.execute({"EXISTS", missing.stream()}).integer, 0);
  EXPECT_EQ(redis.execute({"EXISTS", missing.lease()}).integer, 0);
  EXPECT_EQ(redis.execute({"EXISTS", text.lease()}).integer, 0);
  EXPECT_EQ(redis.execute({"GET", text.stream()}).str, "not a stream");
  const std::vector<std::pair<std::string, std::string>> once{
      {"missing", "no stream order:missing"}, {"text", "order:text is a string, not a stream"}};
  EXPECT_EQ(told, once);
  EXPECT_EQ(watched.no_partition_units(), 2u);
  // Published to at last, the member is a partition.
  ASSERT_TRUE(run_now(watched.publish(missing, "created", "{}")).ok());
  auto later = run_now(watched.acquire_many({missing}, "", "a", 3000, 1));
  ASSERT_TRUE(later.ok()) << later.error().message;
  ASSERT_EQ(later.value().size(), 1u);
  EXPECT_TRUE(later.value()[0].has_value());
}

TEST_F(EngineBrokerScale, WithoutAWakeLinkTheBrokerCannotWait) {
  auto waited = run_now(broker.wait_for_entries("order", "a", 0, {{partition, "0-0"}}, 100));
  ASSERT_FALSE(waited.ok());
  EXPECT_EQ(waited.code(), Errc::unsupported);
  // The doorbell rings on the main link: one entry, kept briefly.
  ASSERT_TRUE(run_now(broker.ring_wake("order", "a", 0)).ok());
  ASSERT_TRUE(run_now(broker.ring_wake("order", "a", 0)).ok());
  EXPECT_EQ(redis.execute({"XLEN", "order:__wake__:a"}).integer, 1);
  EXPECT_GT(redis.execute({"PTTL", "order:__wake__:a"}).integer, 0);
}

}  // namespace
}  // namespace seqby::redis
