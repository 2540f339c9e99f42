// The durability option on one real redis-server with no replica (the cluster tests show it with
// replicas and a failover): WAIT goes with the command on its connection and says how many
// replicas have its writes; with RedisBrokerOptions::wait_replicas = 1 every durable write is
// answered Errc::timeout naming the shortfall, though it ran on the master, and the other steps
// are not held up.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <vector>

#include "redis_server.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis {
namespace {

constexpr const char* kGroup = "g";

std::string unique_category(const std::string& name) {
  return "durability" + std::to_string(::getpid()) + name;
}

// A redis-server and a link to it (ok() false when it did not start: server.error() says why).
struct Connected {
  Connected() {
    if (server.ok() && config.ok()) link.emplace(runtime, config.value());
  }
  bool ok() const { return link.has_value(); }
  testing::RedisServer server;
  Result<RedisConfig> config = parse_redis_url(server.url());
  RealRuntime runtime;
  std::optional<HiredisLink> link;
};

TEST(DurabilityOption, AWaitSentWithACommandAnswersHowManyReplicasHaveItsWrites) {
  Connected c;
  ASSERT_TRUE(c.ok()) << c.server.error();
  RealRuntime& runtime = c.runtime;
  HiredisLink& link = *c.link;
  const std::string key = unique_category("wait") + ":k";
  Result<ReplicatedReply> set =
      runtime.block_on(link.execute_replicated({"SET", key, "v"}, 0, 1000));
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set.value().reply, Reply::status("OK"));
  EXPECT_EQ(set.value().replicas, 0);  // a server without replicas
  EXPECT_EQ(set.value().wait_error, "");
  // An error reply still comes with its WAIT's answer.
  Result<ReplicatedReply> wrong =
      runtime.block_on(link.execute_replicated({"LPUSH", key, "x"}, 0, 1000));
  ASSERT_TRUE(wrong.ok());
  EXPECT_TRUE(wrong.value().reply.is_error_with("WRONGTYPE")) << to_string(wrong.value().reply);
  EXPECT_EQ(wrong.value().replicas, 0);
}

Task<void> durable_incr(HiredisLink& link, std::string key, std::vector<ReplicatedReply>* out,
                        std::size_t* done) {
  Command incr{"INCR", std::move(key)};
  Result<ReplicatedReply> reply = co_await link.execute_replicated(std::move(incr), 0, 1000);
  if (reply.ok()) out->push_back(std::move(reply).value());
  ++*done;
}

Task<void> wait_done(Runtime& runtime, const std::size_t* done, std::size_t target) {
  while (*done < target) co_await runtime.sleep_ms(1);
}

// One WAIT at a time per connection (a WAIT holds the commands pipelined behind it): the
// durable commands sent while one is out share the next (a group commit), and each still gets
// its command's reply and a WAIT sent after it.
TEST(DurabilityOption, DurableCommandsInFlightTogetherShareTheirWaits) {
  Connected c;
  ASSERT_TRUE(c.ok()) << c.server.error();
  RealRuntime& runtime = c.runtime;
  HiredisLink& link = *c.link;
  const std::string key = unique_category("group") + ":n";
  ASSERT_TRUE(runtime.block_on(link.execute({"DEL", key})).ok());
  constexpr std::size_t kCommands = 64;
  std::vector<ReplicatedReply> replies;
  std::size_t done = 0;
  const std::uint64_t sent_before = link.stats().commands_sent;
  for (std::size_t i = 0; i < kCommands; ++i) {
    runtime.spawn("durable_incr", durable_incr(link, key, &replies, &done));
  }
  runtime.block_on(wait_done(runtime, &done, kCommands));
  ASSERT_EQ(replies.size(), kCommands);
  std::vector<std::int64_t> counts;
  for (const ReplicatedReply& reply : replies) {
    ASSERT_EQ(reply.reply.kind, Reply::Kind::integer) << to_string(reply.reply);
    counts.push_back(reply.reply.integer);
    EXPECT_EQ(reply.replicas, 0) << reply.wait_error;
  }
  std::sort(counts.begin(), counts.end());
  for (std::size_t i = 0; i < kCommands; ++i)
    EXPECT_EQ(counts[i], static_cast<std::int64_t>(i + 1));
  const std::uint64_t waits = link.stats().commands_sent - sent_before - kCommands;
  EXPECT_GE(waits, 1u);
  EXPECT_LT(waits, kCommands) << "every durable command sent a WAIT of its own";
  std::cout << kCommands << " durable commands in flight together: " << waits << " WAITs\n";
}

TEST(DurabilityOption, WithoutTheReplicasAskedEveryDurableWriteIsReportedAndTheRestRuns) {
  Connected c;
  ASSERT_TRUE(c.ok()) << c.server.error();
  RealRuntime& runtime = c.runtime;
  HiredisLink& link = *c.link;
  RedisBrokerOptions options;
  options.wait_replicas = 1;
  options.wait_timeout_ms = 50;
  RedisBroker durable(link, options);
  RedisBroker plain(link, RedisBrokerOptions{});
  const PartitionRef partition{unique_category("writes"), "k1"};
  BlockingRedis setup(c.config.value());

  Result<std::string> published = runtime.block_on(durable.publish(partition, "created", "{}"));
  ASSERT_FALSE(published.ok());
  EXPECT_EQ(published.code(), Errc::timeout);
  EXPECT_EQ(published.error().message,
            "publish ran on the master but its writes have 0 of the 1 replicas asked within 50 "
            "ms (the durability option): a failover may lose them");
  // It ran: the event is in the stream and its key in the index.
  EXPECT_EQ(setup.execute({"XLEN", partition.stream()}).value(), Reply::of_int(1));
  EXPECT_EQ(setup.execute({"SISMEMBER", partition.index(), "k1"}).value(), Reply::of_int(1));

  ASSERT_TRUE(runtime.block_on(durable.ensure_group(partition, kGroup)).ok());
  Result<std::optional<Lease>> acquired =
      runtime.block_on(durable.acquire(partition, "", "node1", 60000));
  ASSERT_FALSE(acquired.ok());
  EXPECT_EQ(acquired.code(), Errc::timeout) << acquired.error().message;
  Result<std::vector<std::optional<Lease>>> many =
      runtime.block_on(durable.acquire_many({partition}, "", "node2", 60000, 1));
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.code(), Errc::timeout) << many.error().message;

  // The refused acquire did take the lease on the master: its owner's next acquire takes it
  // again at a fresh generation (another owner waits for its ttl).
  Result<std::optional<Lease>> other =
      runtime.block_on(plain.acquire(partition, "", "node3", 60000));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other.value().has_value());
  Result<std::optional<Lease>> lease =
      runtime.block_on(plain.acquire(partition, "", "node1", 60000));
  ASSERT_TRUE(lease.ok() && lease.value().has_value());
  EXPECT_EQ(lease.value()->generation, 2u);
  // The steps the option does not wait for run as before: the fenced read.
  Result<NextReply> read =
      runtime.block_on(durable.fenced_next(*lease.value(), kGroup, ReadFrom::new_entries, ""));
  ASSERT_TRUE(read.ok() && read.value().entry.has_value()) << read.error().message;
  Result<CommitReply> commit =
      runtime.block_on(durable.fenced_commit(*lease.value(), kGroup, 1, "effect"));
  ASSERT_FALSE(commit.ok());
  EXPECT_EQ(commit.code(), Errc::timeout) << commit.error().message;
  // A handler's retry without the option finds its own commit (duplicate, by its own token).
  Result<CommitReply> again =
      runtime.block_on(plain.fenced_commit(*lease.value(), kGroup, 1, "effect"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().outcome, CommitOutcome::duplicate);
  EXPECT_EQ(again.value().committed_by, lease.value()->token());
  // A refused step is not waited for: FENCED comes back as it did.
  Lease stale = *lease.value();
  stale.generation += 7;
  Result<CommitReply> fenced = runtime.block_on(durable.fenced_commit(stale, kGroup, 2, "e"));
  ASSERT_TRUE(fenced.ok()) << fenced.error().message;
  EXPECT_EQ(fenced.value().outcome, CommitOutcome::fenced);
}

}  // namespace
}  // namespace seqby::redis
