// The durability option (RedisBrokerOptions::wait_replicas, docs/ARCHITECTURE.md "What a failover
// keeps") on a real Redis Cluster: a master is killed while its replica lags, and the replica is
// promoted with a prefix of the master's writes. Without the option a publish and a commit the
// master acknowledged are lost by the failover, and nobody was told; with it the same writes are
// answered Errc::timeout (the publisher and the handler know to do them again), while the writes
// that WAIT confirmed are all on the promoted replica. The promoted master has no replica left,
// and with the option its writes are then refused: the option trades availability for it.
//
// A lagging replica, for real: the replica is stopped (SIGSTOP) and the master drops its
// replication connection (CLIENT KILL TYPE replica), so nothing written after that reaches it;
// then the master is SIGKILLed and the replica resumed, and it is promoted (cluster-node-timeout
// later) with what it had.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <optional>

#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/scenarios/redis_cluster.h"

namespace seqby::redis {

// How gtest shows a Reply in a failed expectation.
void PrintTo(const Reply& reply, std::ostream* out) { *out << to_string(reply); }

namespace {

using scenarios::RedisCluster;

constexpr const char* kGroup = "g";
// The most --wait-timeout-ms allows: a WAIT that should succeed must not run out on a loaded
// machine (a lagging replica's WAIT runs out all the same).
constexpr std::uint64_t kWaitTimeoutMs = 1500;

RedisBrokerOptions options_with(std::uint32_t wait_replicas) {
  RedisBrokerOptions options;
  options.key_layout = KeyLayout::cluster;
  options.wait_replicas = wait_replicas;
  options.wait_timeout_ms = kWaitTimeoutMs;
  return options;
}

// One partition `key` of category orders, the master of its slot and that master's replica.
struct Fixture {
  Fixture(RedisCluster& given, const std::string& key)
      : cluster(given),
        partition{"orders", key, KeyLayout::cluster},
        master(cluster.master_of_slot(key_slot(partition.stream())).value()),
        replica(cluster.replicas_of(master).at(0)),
        link(runtime, cluster.seed()),
        plain(link, options_with(0)),
        durable(link, options_with(1)) {}
  template <typename T>
  T run(Task<T> task) {
    return runtime.block_on(std::move(task));
  }
  Result<Reply> command(Command command) { return run(link.execute(std::move(command))); }

  // From here on the replica gets none of the master's writes.
  void lag_replica() {
    ASSERT_TRUE(cluster.wait_replicated(master, 10000)) << cluster.error();
    ASSERT_TRUE(cluster.signal(replica, SIGSTOP));
    Result<Reply> dropped = RedisCluster::run(master, {"CLIENT", "KILL", "TYPE", "replica"});
    ASSERT_TRUE(dropped.ok() && dropped.value() == Reply::of_int(1))
        << (dropped.ok() ? to_string(dropped.value()) : dropped.error().message);
  }
  // Kills the master, resumes the replica and waits until the link's commands on the partition's
  // stream run there.
  void fail_over() {
    const std::string key = partition.stream();
    cluster.kill(master);
    ASSERT_TRUE(cluster.signal(replica, SIGCONT));
    ASSERT_TRUE(cluster.wait_until(
        [&] {
          Result<Reply> served = command({"EXISTS", key});
          return served.ok() && !served.value().is_error();
        },
        30000, "the lagging replica 127.0.0.1:" + std::to_string(replica) + " to serve " + key))
        << cluster.error();
    ASSERT_EQ(link.node_of_slot(key_slot(key)), "127.0.0.1:" + std::to_string(replica));
  }
  std::vector<std::string> data_in(const PartitionRef& partition) {
    std::vector<std::string> out;
    Result<Reply> entries = command({"XRANGE", partition.stream(), "-", "+"});
    EXPECT_TRUE(entries.ok() && entries.value().kind == Reply::Kind::array);
    if (!entries.ok()) return out;
    for (const Reply& entry : entries.value().elements) {
      const std::vector<Reply>& fields = entry.elements.at(1).elements;
      for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        if (fields[i].str == "data") out.push_back(fields[i + 1].str);
      }
    }
    return out;
  }

  RedisCluster& cluster;
  const PartitionRef partition;
  const std::uint16_t master;
  const std::uint16_t replica;
  RealRuntime runtime;
  HiredisClusterLink link;
  RedisBroker plain;    // no durability option
  RedisBroker durable;  // WAIT for 1 replica
};

TEST(ClusterDurability, APublishTheMasterAcknowledgedIsLostByAFailoverUnlessItWaitedForItsReplica) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  Fixture f(cluster, "k1");
  // A fresh cluster's replica may not be online yet: a WAIT would count it out.
  ASSERT_TRUE(cluster.wait_replicated(f.master, 10000)) << cluster.error();
  const PartitionRef& partition = f.partition;

  Result<std::string> kept = f.run(f.durable.publish(partition, "created", R"({"n":1})"));
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  f.lag_replica();
  Result<std::string> acknowledged = f.run(f.plain.publish(partition, "created", R"({"n":2})"));
  ASSERT_TRUE(acknowledged.ok()) << acknowledged.error().message;
  Result<std::string> told = f.run(f.durable.publish(partition, "created", R"({"n":3})"));
  ASSERT_FALSE(told.ok());
  EXPECT_EQ(told.code(), Errc::timeout) << told.error().message;
  EXPECT_NE(told.error().message.find("0 of the 1 replicas"), std::string::npos)
      << told.error().message;
  // The master has all three.
  EXPECT_EQ(RedisCluster::run(f.master, {"XLEN", partition.stream()}).value(), Reply::of_int(3));

  f.fail_over();
  // The promoted replica has the prefix WAIT confirmed: the acknowledged publish is gone.
  EXPECT_EQ(f.data_in(partition), std::vector<std::string>{R"({"n":1})"});
  std::cout << "failover of a lagging replica: kept the publish WAIT confirmed; lost one the "
               "master acknowledged without the option, and one the option had reported failed\n";
}

TEST(ClusterDurability, ACommitTheMasterAcceptedIsLostByAFailoverUnlessItWaitedForItsReplica) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  Fixture f(cluster, "k2");
  // A fresh cluster's replica may not be online yet: a WAIT would count it out.
  ASSERT_TRUE(cluster.wait_replicated(f.master, 10000)) << cluster.error();
  const PartitionRef& partition = f.partition;
  ASSERT_TRUE(f.run(f.durable.publish(partition, "created", R"({"n":1})")).ok());
  ASSERT_TRUE(f.run(f.durable.ensure_group(partition, kGroup)).ok());
  Result<std::optional<Lease>> acquired = f.run(f.durable.acquire(partition, "", "node1", 60000));
  ASSERT_TRUE(acquired.ok() && acquired.value().has_value()) << acquired.error().message;
  const Lease lease = *acquired.value();
  Result<NextReply> read = f.run(f.durable.fenced_next(lease, kGroup, ReadFrom::new_entries, ""));
  ASSERT_TRUE(read.ok() && read.value().entry.has_value());

  f.lag_replica();
  Result<CommitReply> accepted = f.run(f.plain.fenced_commit(lease, kGroup, 1, "effect-1"));
  ASSERT_TRUE(accepted.ok()) << accepted.error().message;
  EXPECT_EQ(accepted.value().outcome, CommitOutcome::accepted);
  Result<CommitReply> told = f.run(f.durable.fenced_commit(lease, kGroup, 2, "effect-2"));
  ASSERT_FALSE(told.ok());
  EXPECT_EQ(told.code(), Errc::timeout) << told.error().message;

  f.fail_over();
  // Both commits are gone (the accepted one too); the lease, acquired with WAIT, is still ours,
  // the entry is still pending, and the handler's retry commits seq 1 again: order holds.
  EXPECT_EQ(f.command({"HLEN", effects_hash_name(partition, kGroup)}).value(), Reply::of_int(0));
  EXPECT_TRUE(f.run(f.plain.check_lease(lease)).ok());
  Result<NextReply> again = f.run(f.plain.fenced_next(lease, kGroup, ReadFrom::pending, ""));
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_TRUE(again.value().entry.has_value());
  EXPECT_EQ(again.value().entry->id, read.value().entry->id);
  Result<CommitReply> retried = f.run(f.plain.fenced_commit(lease, kGroup, 1, "effect-1"));
  ASSERT_TRUE(retried.ok()) << retried.error().message;
  EXPECT_EQ(retried.value().outcome, CommitOutcome::accepted);
  EXPECT_EQ(retried.value().last_seq, 1);
  // The promoted master has no replica left: with the option every write is now refused (what
  // the option costs while a shard runs without a replica).
  Result<CommitReply> alone = f.run(f.durable.fenced_commit(lease, kGroup, 2, "effect-2"));
  ASSERT_FALSE(alone.ok());
  EXPECT_EQ(alone.code(), Errc::timeout) << alone.error().message;
}

// A lease acquired while the replica lags is not given to the engine with the option: the
// acquire is answered Errc::timeout. Without it the lease is used, and after the failover the
// fence counter is back where the replica had it: generations are given again (a token still
// differs by its owner id, so the owner of the lost lease is fenced).
TEST(ClusterDurability, AnAcquireWhileTheReplicaLagsIsRefusedWithTheOptionAndItsGenerationReused) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  Fixture f(cluster, "k3");
  // A fresh cluster's replica may not be online yet: a WAIT would count it out.
  ASSERT_TRUE(cluster.wait_replicated(f.master, 10000)) << cluster.error();
  const PartitionRef& partition = f.partition;
  ASSERT_TRUE(f.run(f.durable.publish(partition, "created", R"({"n":1})")).ok());
  ASSERT_TRUE(f.run(f.durable.ensure_group(partition, kGroup)).ok());

  f.lag_replica();
  Result<std::optional<Lease>> told = f.run(f.durable.acquire(partition, "", "node1", 60000));
  ASSERT_FALSE(told.ok());
  EXPECT_EQ(told.code(), Errc::timeout) << told.error().message;
  Result<bool> released = f.run(f.plain.release(Lease{partition, "", "node1", 1, ""}));
  ASSERT_TRUE(released.ok() && released.value());  // the master had granted it
  Result<std::optional<Lease>> used = f.run(f.plain.acquire(partition, "", "node2", 60000));
  ASSERT_TRUE(used.ok() && used.value().has_value()) << used.error().message;
  EXPECT_EQ(used.value()->generation, 2u);

  f.fail_over();
  Result<std::optional<Lease>> after = f.run(f.plain.acquire(partition, "", "node3", 60000));
  ASSERT_TRUE(after.ok() && after.value().has_value()) << after.error().message;
  EXPECT_EQ(after.value()->generation, 1u);  // the counter lost both increments
  const Status stale = f.run(f.plain.check_lease(*used.value()));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.code(), Errc::fenced);
}

// A cluster reap is three steps in two slots: the stream's delete (reap_stream) in the unit's,
// the key's removal from the index (reap_end) in the index's. A reap while the stream's replica
// lags, without the option, has its delete undone by the failover while the index's removal (on
// another master) stands: the stream comes back, its events with it, where discovery never
// looks. With the option the delete is waited for before the key leaves the index: it is
// answered Errc::timeout and the key goes back to the index, so the stream the failover brings
// back is found.
TEST(ClusterDurability, AReapWhileTheReplicaLagsStrandsItsStreamUnlessItWaitedForItsReplica) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  // Two keys whose streams share a master other than the index's.
  const std::string index = partition_index_name("orders");
  const std::optional<std::uint16_t> index_master = cluster.master_of_slot(key_slot(index));
  ASSERT_TRUE(index_master.has_value());
  auto master_of = [&](const std::string& key) {
    return cluster.master_of_slot(
        key_slot(PartitionRef{"orders", key, KeyLayout::cluster}.stream()));
  };
  std::vector<std::string> keys;
  for (int n = 0; n < 1000 && keys.size() < 2; ++n) {
    const std::string key = "r" + std::to_string(n);
    if (master_of(key) == index_master) continue;
    if (keys.empty() || master_of(key) == master_of(keys[0])) keys.push_back(key);
  }
  ASSERT_EQ(keys.size(), 2u);
  Fixture f(cluster, keys[0]);
  ASSERT_TRUE(cluster.wait_replicated(f.master, 10000)) << cluster.error();
  const PartitionRef plain_partition = f.partition;
  const PartitionRef durable_partition{"orders", keys[1], KeyLayout::cluster};

  // Each partition drained: its one event read and acknowledged, nothing pending. nullopt (and
  // a failure) when a step did not go so.
  auto drained = [&](const PartitionRef& partition,
                     const std::string& owner) -> std::optional<Lease> {
    EXPECT_TRUE(f.run(f.durable.publish(partition, "created", R"({"n":1})")).ok());
    EXPECT_TRUE(f.run(f.durable.ensure_group(partition, kGroup)).ok());
    Result<std::optional<Lease>> acquired = f.run(f.durable.acquire(partition, "", owner, 60000));
    if (!acquired.ok() || !acquired.value().has_value()) {
      ADD_FAILURE() << partition.key << " not acquired";
      return std::nullopt;
    }
    const Lease lease = *acquired.value();
    Result<NextReply> read = f.run(f.plain.fenced_next(lease, kGroup, ReadFrom::new_entries, ""));
    if (!read.ok() || !read.value().entry.has_value()) {
      ADD_FAILURE() << partition.key << ": its event not read";
      return std::nullopt;
    }
    Result<NextReply> acked =
        f.run(f.plain.fenced_next(lease, kGroup, ReadFrom::new_entries, read.value().entry->id));
    EXPECT_TRUE(acked.ok() && !acked.value().entry.has_value());
    return lease;
  };
  const std::optional<Lease> plain_lease = drained(plain_partition, "node1");
  const std::optional<Lease> durable_lease = drained(durable_partition, "node2");
  ASSERT_FALSE(::testing::Test::HasFailure());
  ASSERT_TRUE(plain_lease.has_value() && durable_lease.has_value());
  ASSERT_TRUE(cluster.wait_replicated(f.master, 10000)) << cluster.error();

  f.lag_replica();
  Result<bool> reaped = f.run(f.plain.reap(*plain_lease, 0));
  ASSERT_TRUE(reaped.ok() && reaped.value())
      << (reaped.ok() ? "not reaped" : reaped.error().message);
  Result<bool> told = f.run(f.durable.reap(*durable_lease, 0));
  ASSERT_FALSE(told.ok());
  EXPECT_EQ(told.code(), Errc::timeout) << told.error().message;
  // Both deletes ran on the master.
  EXPECT_EQ(RedisCluster::run(f.master, {"EXISTS", plain_partition.stream()}).value(),
            Reply::of_int(0));
  EXPECT_EQ(RedisCluster::run(f.master, {"EXISTS", durable_partition.stream()}).value(),
            Reply::of_int(0));

  f.fail_over();
  // The promoted replica has both streams back, each with its event.
  EXPECT_EQ(f.data_in(plain_partition), std::vector<std::string>{R"({"n":1})"});
  EXPECT_EQ(f.data_in(durable_partition), std::vector<std::string>{R"({"n":1})"});
  Result<std::vector<std::string>> found = f.run(f.plain.partitions("orders"));
  ASSERT_TRUE(found.ok()) << found.error().message;
  auto discovered = [&](const std::string& key) {
    return std::find(found.value().begin(), found.value().end(), key) != found.value().end();
  };
  EXPECT_FALSE(discovered(keys[0])) << "without the option the reaped stream is stranded";
  EXPECT_TRUE(discovered(keys[1])) << "with the option the stream the failover kept is found";
  std::cout << "reap beside a lagging replica: without the option the stream came back "
               "unindexed; with it the reap was told failed and the key stayed discoverable\n";
}

}  // namespace
}  // namespace seqby::redis
