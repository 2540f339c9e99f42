// RedisBroker on SimRedis, call by call: the lease lifecycle (NX, generation increment, CAS
// renew and release, generations never reused), the fence on every partition call, reclaim of an
// older consumer's pending entries, deletion of old consumers only once empty, the OCC effect
// sink, membership expiry, and the EVALSHA -> EVAL fallback after the script cache is flushed.
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

struct EngineBroker : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link};
  const PartitionRef partition{"order", "k0"};

  Lease acquire(const std::string& owner, std::uint64_t ttl_ms = 3000) {
    auto got = run_now(broker.acquire(partition, "", owner, ttl_ms));
    SEQBY_CHECK(got.ok() && got.value().has_value());
    return *got.value();
  }
  std::string publish(const std::string& n) {
    auto id = run_now(broker.publish(partition, "created", "{\"n\":" + n + "}"));
    SEQBY_CHECK(id.ok());
    return id.value();
  }
  std::optional<StreamEntry> read(const Lease& lease, ReadFrom from) {
    auto entry = run_now(broker.fenced_read(lease, kGroup, from));
    EXPECT_TRUE(entry.ok()) << entry.error().message;
    return entry.ok() ? entry.value() : std::nullopt;
  }
  std::size_t consumer_count() {
    Reply r = redis.execute({"XINFO", "CONSUMERS", partition.stream(), kGroup});
    return r.elements.size();
  }
};

TEST_F(EngineBroker, LeaseIsExclusiveRenewedByCasAndGenerationsAreNeverReused) {
  const Lease a = acquire("a");
  EXPECT_EQ(a.generation, 1u);
  EXPECT_EQ(a.token(), "a:1");
  EXPECT_EQ(a.key(), "order:k0:__lease__");
  auto refused = run_now(broker.acquire(partition, "", "b", 3000));
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused.value().has_value());
  EXPECT_TRUE(run_now(broker.renew(a, 3000)).ok());

  clock.advance(3001);  // a's lease lapses
  Status renewed = run_now(broker.renew(a, 3000));
  ASSERT_FALSE(renewed.ok());
  EXPECT_EQ(renewed.code(), Errc::fenced);
  const Lease b = acquire("b");
  EXPECT_EQ(b.generation, 2u);
  EXPECT_EQ(run_now(broker.check_lease(a)).code(), Errc::fenced);
  EXPECT_TRUE(run_now(broker.check_lease(b)).ok());
  EXPECT_FALSE(run_now(broker.release(a)).value());  // not a's any more: nothing deleted
  EXPECT_TRUE(run_now(broker.release(b)).value());
  EXPECT_EQ(acquire("a").generation, 3u);
}

TEST_F(EngineBroker, SameOwnerAcquiringAgainGetsAFreshGenerationAndFencesTheOldOne) {
  const Lease first = acquire("a");
  const Lease second = acquire("a");  // e.g. the first reply was lost
  EXPECT_EQ(second.generation, first.generation + 1);
  EXPECT_EQ(run_now(broker.check_lease(first)).code(), Errc::fenced);
  EXPECT_TRUE(run_now(broker.check_lease(second)).ok());
}

TEST_F(EngineBroker, LeasePerGroupUsesItsOwnKeyAndSharesTheGenerationCounter) {
  const Lease shared = acquire("a");
  auto scoped = run_now(broker.acquire(partition, kGroup, "b", 3000));
  ASSERT_TRUE(scoped.ok() && scoped.value().has_value());
  EXPECT_EQ(scoped.value()->key(), "order:k0:__lease__:billing");
  EXPECT_EQ(scoped.value()->generation, shared.generation + 1);
}

TEST_F(EngineBroker, StaleGenerationIsFencedEverywhereAndTheNewOwnerReclaimsItsPendingEntry) {
  const std::string e1 = publish("1");
  const std::string e2 = publish("2");
  const Lease a = acquire("a");
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());  // BUSYGROUP is fine
  auto first = read(a, ReadFrom::new_entries);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->id, e1);
  EXPECT_EQ(first->type, "created");
  EXPECT_EQ(first->data, "{\"n\":1}");
  EXPECT_EQ(first->delivery_count, 1u);

  clock.advance(3001);
  const Lease b = acquire("b");
  EXPECT_EQ(run_now(broker.fenced_read(a, kGroup, ReadFrom::new_entries)).code(), Errc::fenced);
  EXPECT_EQ(run_now(broker.fenced_read(a, kGroup, ReadFrom::pending)).code(), Errc::fenced);
  EXPECT_EQ(run_now(broker.fenced_ack(a, kGroup, e1)).code(), Errc::fenced);
  EXPECT_EQ(run_now(broker.reclaim(a, kGroup)).code(), Errc::fenced);
  EXPECT_EQ(run_now(broker.drop_stale_consumers(a, kGroup)).code(), Errc::fenced);
  auto stale_commit = run_now(broker.fenced_commit(a, kGroup, 1, "x"));
  ASSERT_TRUE(stale_commit.ok());
  EXPECT_EQ(stale_commit.value().outcome, CommitOutcome::fenced);

  EXPECT_EQ(run_now(broker.reclaim(b, kGroup)).value(), 1u);
  EXPECT_EQ(run_now(broker.drop_stale_consumers(b, kGroup)).value(), 1u);  // a's is empty now
  auto again = read(b, ReadFrom::pending);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->id, e1);
  EXPECT_EQ(again->delivery_count, 2u);  // reclaim (JUSTID) did not count, the read did
  EXPECT_TRUE(run_now(broker.fenced_ack(b, kGroup, e1)).ok());
  EXPECT_TRUE(run_now(broker.fenced_ack(b, kGroup, e1)).ok());  // acking twice is fine
  EXPECT_FALSE(read(b, ReadFrom::pending).has_value());
  auto next = read(b, ReadFrom::new_entries);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->id, e2);
  EXPECT_FALSE(read(b, ReadFrom::new_entries).has_value());
}

TEST_F(EngineBroker, OldConsumerWithPendingEntriesIsKeptUntilReclaimEmptiesIt) {
  publish("1");
  publish("2");
  const Lease a = acquire("a");
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  ASSERT_TRUE(read(a, ReadFrom::new_entries).has_value());
  ASSERT_TRUE(read(a, ReadFrom::new_entries).has_value());
  clock.advance(3001);
  const Lease b = acquire("b");
  EXPECT_EQ(run_now(broker.drop_stale_consumers(b, kGroup)).value(), 0u);
  EXPECT_EQ(consumer_count(), 1u);  // a:1 still owns two entries
  EXPECT_EQ(run_now(broker.reclaim(b, kGroup)).value(), 2u);
  EXPECT_EQ(run_now(broker.drop_stale_consumers(b, kGroup)).value(), 1u);
  EXPECT_EQ(consumer_count(), 1u);  // only b:2 is left
}

TEST_F(EngineBroker, ReadWithoutGroupIsNoGroup) {
  publish("1");
  const Lease a = acquire("a");
  EXPECT_EQ(run_now(broker.fenced_read(a, kGroup, ReadFrom::new_entries)).code(), Errc::no_group);
}

TEST_F(EngineBroker, EffectSinkAcceptsOnlyTheNextSeqUnderTheLease) {
  const Lease a = acquire("a");
  auto commit = [&](std::int64_t seq) {
    return run_now(broker.fenced_commit(a, kGroup, seq, "effect-" + std::to_string(seq))).value();
  };
  EXPECT_EQ(commit(1).outcome, CommitOutcome::accepted);
  const CommitReply duplicate = commit(1);
  EXPECT_EQ(duplicate.outcome, CommitOutcome::duplicate);
  EXPECT_EQ(duplicate.last_seq, 1);
  EXPECT_EQ(duplicate.committed_by, "a:1");  // lets a retry recognise its own lost commit
  const CommitReply gap = commit(3);
  EXPECT_EQ(gap.outcome, CommitOutcome::out_of_order);
  EXPECT_EQ(gap.last_seq, 1);
  EXPECT_EQ(commit(2).outcome, CommitOutcome::accepted);
  Reply effects = redis.execute({"HGETALL", effects_hash_name(partition, kGroup)});
  EXPECT_EQ(to_string(effects), "[\"1\", \"effect-1\", \"2\", \"effect-2\"]");
}

TEST_F(EngineBroker, PartitionsAreSortedAndMembersExpireWithoutTheirHeartbeat) {
  for (const char* key : {"k2", "k0", "k1"}) {
    const PartitionRef p{"order", key};
    ASSERT_TRUE(run_now(broker.publish(p, "created", "{}")).ok());
  }
  EXPECT_EQ(run_now(broker.partitions("order")).value(),
            (std::vector<std::string>{"k0", "k1", "k2"}));

  ASSERT_TRUE(run_now(broker.announce_member("order", kGroup, "b", 1000)).ok());
  ASSERT_TRUE(run_now(broker.announce_member("order", kGroup, "a", 1000)).ok());
  EXPECT_EQ(run_now(broker.live_members("order", kGroup)).value(),
            (std::vector<std::string>{"a", "b"}));
  clock.advance(800);
  ASSERT_TRUE(run_now(broker.announce_member("order", kGroup, "a", 1000)).ok());
  clock.advance(800);
  EXPECT_EQ(run_now(broker.live_members("order", kGroup)).value(), std::vector<std::string>{"a"});
  ASSERT_TRUE(run_now(broker.leave_members("order", kGroup, "a")).ok());
  EXPECT_TRUE(run_now(broker.live_members("order", kGroup)).value().empty());
}

TEST_F(EngineBroker, ScriptCacheFlushFallsBackToEval) {
  const Lease a = acquire("a");
  EXPECT_EQ(to_string(redis.execute({"SCRIPT", "FLUSH"})), "OK");
  EXPECT_TRUE(run_now(broker.check_lease(a)).ok());  // NOSCRIPT, then EVAL
  EXPECT_TRUE(run_now(broker.renew(a, 3000)).ok());
}

}  // namespace
}  // namespace seqby::redis
