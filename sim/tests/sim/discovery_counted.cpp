// Discovery of a large index on the simulator (engine_options.h: the index count's gate): an
// instance that holds its share of 1,000 partitions reads the index's count each cycle and the
// whole index only every kDiscoveryFullReadEvery cycles, yet finds a new key at the next cycle, and
// a key added as another left the index (the count unchanged) by the next full read. Reading the
// whole index every cycle fails the first test; a gate that trusted the count for good fails the
// last. An instance short of its share for good (by less than the live members) no longer tries
// every partition every cycle, and takes a lease given up by the next full read.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "seqby/core/keyspace.h"
#include "sim_engine_parts.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261207;
constexpr int kPartitions = 1000;
static_assert(kPartitions >= static_cast<int>(kDiscoveryCountedIndexMin));

// Counts the index's full reads (SMEMBERS) and counts (SCARD) the instance sends.
class IndexReadsLink final : public redis::RedisLink {
 public:
  IndexReadsLink(redis::RedisLink& inner, Runtime&) : inner_(inner) {}
  std::uint64_t full_reads = 0;
  std::uint64_t counts = 0;
  std::vector<std::string> first_reads;  // the first six index reads' commands, in order

  Task<Result<redis::Reply>> execute(redis::Command command) override {
    if (command.size() == 2 && command[1] == index_) {
      if (command[0] == "SMEMBERS") ++full_reads;
      if (command[0] == "SCARD") ++counts;
      if (first_reads.size() < 6) first_reads.push_back(command[0]);
    }
    Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
    co_return reply;
  }

 private:
  redis::RedisLink& inner_;
  const std::string index_ = partition_index_name("order");
};

class OkHandler final : public Handler {
 public:
  Task<HandlerResult> handle(const Event&, HandlerContext&) override {
    co_return HandlerResult::success();
  }
};

using World = testing::OneWorkerWorld<OkHandler, IndexReadsLink>;

// The first time (ms) the instance recorded `op` for `key` at or after `from_ms`; 0 if never.
std::uint64_t first(const World& w, HistoryOp op, const std::string& key, std::uint64_t from_ms) {
  for (const HistoryRecord& r : w.history.records()) {
    if (r.op == op && r.key == key && r.time_ms >= from_ms) return r.time_ms;
  }
  return 0;
}

// Runs until the first event of `key` after `from` is acknowledged (at most 2 * within_ms), and
// expects its lease acquired within `within_ms` of `from`.
void expect_found(World& w, const std::string& key, std::uint64_t from, std::uint64_t within_ms) {
  w.scheduler.run_until([&] { return first(w, HistoryOp::ack, key, from) > 0; },
                        from + 2 * within_ms);
  const std::uint64_t taken = first(w, HistoryOp::acquire, key, from);
  ASSERT_GT(taken, 0u) << key << " was never acquired";
  EXPECT_LE(taken - from, within_ms);
  EXPECT_GT(first(w, HistoryOp::ack, key, from), 0u) << key << "'s event was never handled";
}

std::size_t acquired(const World& w) {
  return static_cast<std::size_t>(
      std::count_if(w.history.records().begin(), w.history.records().end(),
                    [](const HistoryRecord& r) { return r.op == HistoryOp::acquire; }));
}

// kPartitions empty partitions k0.. in the index, each with its group, the first `foreign` of
// them leased by an owner "other" that is no live member, and the instance holding all the others
// (the only live member: its share is every partition).
void settle(World& w, int foreign = 0) {
  for (int i = 0; i < kPartitions; ++i) {
    const PartitionRef partition{"order", "k" + std::to_string(i)};
    w.redis.execute({"XGROUP", "CREATE", partition.stream(), "billing", "0", "MKSTREAM"});
    w.redis.execute({"SADD", partition.index(), partition.key});
    if (i < foreign) w.redis.execute({"SET", lease_key_for(partition, ""), "other:1"});
  }
  w.engine.start();
  const auto held = static_cast<std::size_t>(kPartitions - foreign);
  w.scheduler.run_until([&] { return acquired(w) >= held; }, 60'000);
  ASSERT_EQ(acquired(w), held);
  w.scheduler.run_until(w.scheduler.now_ms() + 2'000);  // a few cycles at the share
}

TEST(DiscoveryCounted, AnInstanceAtItsShareReadsTheWholeIndexOnlyEveryTenthCycle) {
  World w(kSeed);
  settle(w);
  // The second cycle reads the index whole too (its count has none before it to compare with):
  // a worker's /readyz turns 200 with that read (WorkerMetrics).
  const std::vector<std::string> first_cycles{"SMEMBERS", "SCARD", "SMEMBERS", "SCARD", "SCARD"};
  ASSERT_GE(w.wrap.first_reads.size(), first_cycles.size());
  EXPECT_EQ(std::vector<std::string>(w.wrap.first_reads.begin(),
                                     w.wrap.first_reads.begin() + first_cycles.size()),
            first_cycles);
  w.wrap.full_reads = 0;
  w.wrap.counts = 0;
  w.scheduler.run_until(w.scheduler.now_ms() + 12'000);  // about 24 cycles of 500 ms

  EXPECT_GE(w.wrap.counts, 18u) << "a cycle did not read the index's count";
  EXPECT_GE(w.wrap.full_reads, 2u) << "the whole index was never read again";
  EXPECT_LE(w.wrap.full_reads, w.wrap.counts / kDiscoveryFullReadEvery + 1)
      << w.wrap.full_reads << " full reads in " << w.wrap.counts << " cycles";
}

// Short of its share by its whole share's worth (as a joining instance is), an instance reads the
// index every cycle. Short by less than the live members (ceil(P / N) * N > P: the rest is held by
// others), each full cycle would try every partition it does not hold: after
// kDiscoveryEmptyAcquiresMin such cycles that got nothing, it tries only with the full read of
// every tenth cycle, and takes a lease given up by then.
TEST(DiscoveryCounted, AnInstanceShortOfItsShareForGoodStopsTryingEveryCycle) {
  World w(kSeed + 3);
  constexpr int kForeign = 501;  // of 1,000: two members' share is 500 each
  settle(w, kForeign);
  w.wrap.full_reads = 0;
  w.wrap.counts = 0;
  w.scheduler.run_until(w.scheduler.now_ms() + 3'000);
  // The other owner is no live member yet: the instance's target is all 1,000.
  EXPECT_GE(w.wrap.full_reads + 1, w.wrap.counts) << "a cycle short of 501 did not read the index";

  // It joins: the instance's target is 500, it holds 499.
  const std::string member = member_key_name("order", "billing", "other", KeyLayout::flat);
  w.redis.execute({"SET", member, "1", "PX", "600000"});
  w.redis.execute({"SADD", members_set_name("order", "billing", KeyLayout::flat), "other"});
  w.scheduler.run_until(w.scheduler.now_ms() + 3'000);
  w.wrap.full_reads = 0;
  w.wrap.counts = 0;
  w.scheduler.run_until(w.scheduler.now_ms() + 12'000);

  EXPECT_GE(w.wrap.counts, 18u) << "a cycle did not read the index's count";
  EXPECT_LE(w.wrap.full_reads, w.wrap.counts / kDiscoveryFullReadEvery + 1)
      << w.wrap.full_reads << " full reads in " << w.wrap.counts << " cycles";
  EXPECT_EQ(acquired(w), static_cast<std::size_t>(kPartitions - kForeign));

  // The other member gives a lease up: the next full read takes it.
  const std::uint64_t from = w.scheduler.now_ms();
  w.redis.execute({"DEL", lease_key_for(PartitionRef{"order", "k0"}, "")});
  const std::uint64_t bound = kDiscoveryFullReadEvery * World::options().discovery_interval_ms;
  w.scheduler.run_until([&] { return first(w, HistoryOp::acquire, "k0", from) > 0; },
                        from + bound + 1'000);
  EXPECT_GT(first(w, HistoryOp::acquire, "k0", from), 0u) << "the lease given up stayed free";
}

TEST(DiscoveryCounted, ANewKeyIsFoundAtTheNextCycle) {
  World w(kSeed + 1);
  settle(w);
  const std::uint64_t from = w.scheduler.now_ms();
  const PartitionRef fresh{"order", "knew"};
  w.publisher_runtime.spawn("publisher", [&]() -> Task<void> {
    Result<std::string> id = co_await w.publisher.publish(fresh, "created", "{\"seq\":1}");
    SEQBY_CHECK(id.ok());
  }());
  expect_found(w, "knew", from, 1'000);  // one cycle's wait (500 ms) and the cycle itself
}

TEST(DiscoveryCounted, AKeyAddedAsAnotherLeftTheIndexIsFoundByTheNextFullRead) {
  World w(kSeed + 2);
  settle(w);
  // At one instant, as an operator and a foreign publisher would: k5 leaves the index (its
  // stream, with an event, and its lease stay), kx joins it with an event. The count is what it
  // was.
  const std::uint64_t from = w.scheduler.now_ms();
  const PartitionRef gone{"order", "k5"};
  const PartitionRef fresh{"order", "kx"};
  w.redis.execute({"XADD", gone.stream(), "*", "type", "created", "data", "{\"seq\":1}"});
  w.redis.execute({"SREM", gone.index(), gone.key});
  w.redis.execute({"XADD", fresh.stream(), "*", "type", "created", "data", "{\"seq\":1}"});
  w.redis.execute({"SADD", fresh.index(), fresh.key});
  const std::uint64_t bound = kDiscoveryFullReadEvery * World::options().discovery_interval_ms;
  expect_found(w, "kx", from, bound + 1'000);
  // k5, whose stream holds an entry, is put back by the same full read (warned), and kept.
  const redis::Reply member = w.redis.execute({"SISMEMBER", gone.index(), gone.key});
  EXPECT_EQ(member.integer, 1) << "k5 was not put back in the index";
  EXPECT_GT(first(w, HistoryOp::warn, "k5", from), 0u);
  EXPECT_EQ(first(w, HistoryOp::lose, "k5", from), 0u);
}

}  // namespace
}  // namespace seqby::sim
