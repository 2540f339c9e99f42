// RedisBroker over ClusterLink on a real Redis Cluster
// (scenarios/include/seqby/scenarios/redis_cluster.h): one partition's fenced steps (acquire,
// fenced_read / fenced_next, commit, ack, fencing of a stale owner) run when every key its scripts
// touch shares a slot. Today's names give that with a hash-tagged partition key K = "{p1}": C:{p1},
// C:{p1}:__lease__, __fence__, __sink__:G,
// __effects__:G, __journal__ all hash "p1". Publish and reap also touch the category's index
// C:__partitions__ (and C:__subscribers__), another slot: they are refused with CROSSSLOT until
// the cluster key layout (issue 17 item 1) splits them; a category tagged as a whole ("{orders}")
// puts everything in one slot and runs every script, but spreads nothing.
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/scenarios/redis_cluster.h"

namespace seqby::redis {
namespace {

using scenarios::RedisCluster;

}  // namespace

// How gtest shows a Reply in a failed expectation.
void PrintTo(const Reply& reply, std::ostream* out) { *out << to_string(reply); }

namespace {

constexpr const char* kGroup = "g";

void print_timings(const RedisCluster& cluster) {
  std::cout << "cluster fixture: spawn " << cluster.timings().spawn_ms << " ms, create "
            << cluster.timings().create_ms << " ms, healthy " << cluster.timings().ok_ms << " ms\n";
}

struct Fixture {
  explicit Fixture(RedisCluster& cluster)
      : link(runtime, cluster.seed()), broker(link, broker_options()) {}
  static RedisBrokerOptions broker_options() {
    RedisBrokerOptions options;
    options.journal_maxlen = 100;  // the journal's stream must share the unit's slot too
    options.journal_group = kGroup;
    return options;
  }
  template <typename T>
  T run(Task<T> task) {
    return runtime.block_on(std::move(task));
  }
  // An event appended as publish.lua appends it, without the index (another slot).
  std::string append(const PartitionRef& partition, const std::string& data) {
    Result<Reply> id =
        run(link.execute({"XADD", partition.stream(), "*", "type", "created", "data", data}));
    EXPECT_TRUE(id.ok() && id.value().kind == Reply::Kind::bulk);
    return id.ok() ? id.value().str : "";
  }

  RealRuntime runtime;
  HiredisClusterLink link;
  RedisBroker broker;
};

TEST(ClusterBroker, OnePartitionsFencedStepsRunWhenItsKeysShareASlot) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  Fixture f(cluster);
  const PartitionRef partition{"orders", "{p1}"};
  const std::uint16_t slot = key_slot(partition.stream());
  EXPECT_EQ(key_slot(partition.lease()), slot);
  EXPECT_EQ(key_slot(sink_key_name(partition, kGroup)), slot);
  EXPECT_EQ(key_slot(journal_stream_name(partition)), slot);

  // publish touches the category's index, in another slot: refused here, nothing written.
  Result<std::string> published = f.run(f.broker.publish(partition, "created", "{}"));
  ASSERT_FALSE(published.ok());
  EXPECT_NE(published.error().message.find("CROSSSLOT"), std::string::npos)
      << published.error().message;
  EXPECT_NE(published.error().message.find("orders:__partitions__"), std::string::npos)
      << published.error().message;

  const std::string first = f.append(partition, "{\"n\":1}");
  const std::string second = f.append(partition, "{\"n\":2}");
  ASSERT_TRUE(f.run(f.broker.ensure_group(partition, kGroup)).ok());
  Result<std::optional<Lease>> acquired = f.run(f.broker.acquire(partition, "", "node1", 30000));
  ASSERT_TRUE(acquired.ok()) << acquired.error().message;
  ASSERT_TRUE(acquired.value().has_value());
  const Lease lease = *acquired.value();
  EXPECT_EQ(lease.generation, 1u);
  // Exclusion: another owner does not get it.
  Result<std::optional<Lease>> other = f.run(f.broker.acquire(partition, "", "node2", 30000));
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_FALSE(other.value().has_value());

  Result<std::optional<StreamEntry>> read =
      f.run(f.broker.fenced_read(lease, kGroup, ReadFrom::new_entries));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read.value().has_value());
  EXPECT_EQ(read.value()->id, first);
  EXPECT_EQ(read.value()->data, "{\"n\":1}");
  Result<CommitReply> commit = f.run(f.broker.fenced_commit(lease, kGroup, 1, "effect-1"));
  ASSERT_TRUE(commit.ok()) << commit.error().message;
  EXPECT_EQ(commit.value().outcome, CommitOutcome::accepted);
  Result<NextReply> next = f.run(f.broker.fenced_next(lease, kGroup, ReadFrom::new_entries, first));
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_TRUE(next.value().acked);
  ASSERT_TRUE(next.value().entry.has_value());
  EXPECT_EQ(next.value().entry->id, second);
  Result<CommitReply> commit2 = f.run(f.broker.fenced_commit(lease, kGroup, 2, "effect-2"));
  ASSERT_TRUE(commit2.ok()) << commit2.error().message;
  EXPECT_EQ(commit2.value().outcome, CommitOutcome::accepted);
  EXPECT_TRUE(f.run(f.broker.fenced_ack(lease, kGroup, second)).ok());

  // A new owner after a release; the old lease is fenced off every step.
  ASSERT_TRUE(f.run(f.broker.release(lease)).value());
  Result<std::optional<Lease>> taken = f.run(f.broker.acquire(partition, "", "node2", 30000));
  ASSERT_TRUE(taken.ok() && taken.value().has_value());
  EXPECT_EQ(taken.value()->generation, 2u);
  Result<CommitReply> stale = f.run(f.broker.fenced_commit(lease, kGroup, 3, "late"));
  ASSERT_TRUE(stale.ok()) << stale.error().message;
  EXPECT_EQ(stale.value().outcome, CommitOutcome::fenced);
  Status stale_ack = f.run(f.broker.fenced_ack(lease, kGroup, second));
  EXPECT_EQ(stale_ack.code(), Errc::fenced);

  // Everything lives on the slot's master; the journal recorded the steps there.
  const std::uint16_t owner = cluster.master_of_slot(slot).value();
  Result<Reply> journal = RedisCluster::run(owner, {"XLEN", journal_stream_name(partition)});
  ASSERT_TRUE(journal.ok());
  EXPECT_GT(journal.value().integer, 4);
  EXPECT_EQ(RedisCluster::run(owner, {"HLEN", effects_hash_name(partition, kGroup)}).value(),
            Reply::of_int(2));
}

TEST(ClusterBroker, ACategoryTaggedAsAWholeRunsEveryScriptInOneSlot) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  Fixture f(cluster);
  const PartitionRef partition{"{orders}", "k1"};
  Result<std::string> published = f.run(f.broker.publish(partition, "created", "{}"));
  ASSERT_TRUE(published.ok()) << published.error().message;
  Result<std::vector<std::string>> keys = f.run(f.broker.partitions("{orders}"));
  ASSERT_TRUE(keys.ok()) << keys.error().message;
  EXPECT_EQ(keys.value(), std::vector<std::string>{"k1"});
  ASSERT_TRUE(f.run(f.broker.ensure_group(partition, kGroup)).ok());
  ASSERT_TRUE(f.run(f.broker.subscribe("{orders}", kGroup)).ok());
  Result<std::optional<Lease>> acquired = f.run(f.broker.acquire(partition, "", "node1", 30000));
  ASSERT_TRUE(acquired.ok() && acquired.value().has_value());
  const Lease lease = *acquired.value();
  Result<NextReply> next = f.run(f.broker.fenced_next(lease, kGroup, ReadFrom::new_entries, ""));
  ASSERT_TRUE(next.ok()) << next.error().message;
  ASSERT_TRUE(next.value().entry.has_value());
  EXPECT_EQ(next.value().entry->id, published.value());
  Result<NextReply> last =
      f.run(f.broker.fenced_next(lease, kGroup, ReadFrom::new_entries, published.value()));
  ASSERT_TRUE(last.ok()) << last.error().message;
  EXPECT_FALSE(last.value().entry.has_value());
  // The partition is consumed by every subscribed group: the reaper takes it.
  Result<bool> reaped = f.run(f.broker.reap(lease, 0));
  ASSERT_TRUE(reaped.ok()) << reaped.error().message;
  EXPECT_TRUE(reaped.value());

  // No wake link: the broker says it cannot wait, and an engine on it polls.
  std::vector<WatchedStream> watched{{partition, "0-0"}};
  Result<std::vector<std::size_t>> woken =
      f.run(f.broker.wait_for_entries("{orders}", "node1", 0, watched, 10));
  ASSERT_FALSE(woken.ok());
  EXPECT_EQ(woken.code(), Errc::unsupported);
}

TEST(ClusterBroker, AWakeLinkOverTheClusterIsRefusedNamingTheSlots) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  HiredisClusterLink wake(runtime, cluster.seed());
  RedisBroker broker(link, RedisBrokerOptions{}, &wake);
  std::vector<WatchedStream> watched{{PartitionRef{"orders", "{p1}"}, "0-0"},
                                     {PartitionRef{"orders", "{p2}"}, "0-0"}};
  Result<std::vector<std::size_t>> woken =
      runtime.block_on(broker.wait_for_entries("orders", "node1", 0, watched, 10));
  ASSERT_FALSE(woken.ok());
  EXPECT_NE(woken.error().message.find("CROSSSLOT"), std::string::npos) << woken.error().message;
  EXPECT_NE(woken.error().message.find("orders:{p1}"), std::string::npos) << woken.error().message;
}

// A partition's owner keeps going through a SIGKILL of the master of its slot: its lease and
// committed effects reached the replica before the kill, the steps in
// between fail with Errc::closed (never re-sent by the link), and once the replica is promoted the
// same lease reads on, commits the next seq and acks, with the scripts loaded on the new master.
TEST(ClusterBroker, AnOwnersStepsGoOnAfterItsMasterIsKilledAndTheReplicaPromoted) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  Fixture f(cluster);
  const PartitionRef partition{"orders", "{fo}"};
  const std::uint16_t slot = key_slot(partition.stream());
  const std::string first = f.append(partition, "1");
  const std::string second = f.append(partition, "2");
  ASSERT_TRUE(f.run(f.broker.ensure_group(partition, kGroup)).ok());
  Result<std::optional<Lease>> acquired = f.run(f.broker.acquire(partition, "", "node1", 60000));
  ASSERT_TRUE(acquired.ok() && acquired.value().has_value());
  const Lease lease = *acquired.value();
  Result<NextReply> read = f.run(f.broker.fenced_next(lease, kGroup, ReadFrom::new_entries, ""));
  ASSERT_TRUE(read.ok() && read.value().entry.has_value());
  EXPECT_EQ(read.value().entry->id, first);
  Result<CommitReply> commit = f.run(f.broker.fenced_commit(lease, kGroup, 1, "effect-1"));
  ASSERT_TRUE(commit.ok() && commit.value().outcome == CommitOutcome::accepted);
  const std::uint16_t master = cluster.master_of_slot(slot).value();
  const std::uint16_t replica = cluster.replicas_of(master).at(0);
  ASSERT_TRUE(cluster.wait_replicated(master, 10000)) << cluster.error();

  cluster.kill(master);
  std::uint64_t failed_steps = 0;
  std::optional<NextReply> next;
  ASSERT_TRUE(cluster.wait_until(
      [&] {
        Result<NextReply> step =
            f.run(f.broker.fenced_next(lease, kGroup, ReadFrom::new_entries, first));
        if (!step.ok()) {
          // closed (the dead master) or protocol (CLUSTERDOWN from a live node): not run.
          EXPECT_NE(step.code(), Errc::fenced) << step.error().message;
          ++failed_steps;
          return false;
        }
        next = step.value();
        return true;
      },
      30000, "the promoted replica 127.0.0.1:" + std::to_string(replica) + " to run the step"))
      << cluster.error();
  ASSERT_TRUE(next->entry.has_value());
  EXPECT_EQ(next->entry->id, second);
  Result<CommitReply> commit2 = f.run(f.broker.fenced_commit(lease, kGroup, 2, "effect-2"));
  ASSERT_TRUE(commit2.ok()) << commit2.error().message;
  EXPECT_EQ(commit2.value().outcome, CommitOutcome::accepted);
  EXPECT_EQ(commit2.value().last_seq, 2);
  EXPECT_TRUE(f.run(f.broker.fenced_ack(lease, kGroup, second)).ok());
  EXPECT_EQ(f.link.node_of_slot(slot), "127.0.0.1:" + std::to_string(replica));
  EXPECT_EQ(RedisCluster::run(replica, {"HLEN", effects_hash_name(partition, kGroup)}).value(),
            Reply::of_int(2));
  std::cout << "master killed: " << failed_steps << " steps failed before the promoted replica ran "
            << "them; " << f.link.stats().script_reloads << " scripts loaded on it on NOSCRIPT\n";
}

// 64 partitions, each in the slot of its tagged key: every master gets about a third of the
// commands (INFO commandstats per node, the target: within 25% of a third).
TEST(ClusterBroker, SixtyFourPartitionsSpreadTheirCommandsOverTheMasters) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  Fixture f(cluster);
  constexpr int kPartitions = 64;
  constexpr int kEventsPerPartition = 3;
  for (std::uint16_t master : cluster.masters()) {
    ASSERT_EQ(RedisCluster::run(master, {"CONFIG", "RESETSTAT"}).value(), Reply::status("OK"));
  }
  for (int p = 0; p < kPartitions; ++p) {
    const PartitionRef partition{"spread", "{p" + std::to_string(p) + "}"};
    for (int e = 0; e < kEventsPerPartition; ++e) f.append(partition, std::to_string(e));
    ASSERT_TRUE(f.run(f.broker.ensure_group(partition, kGroup)).ok());
    Result<std::optional<Lease>> acquired = f.run(f.broker.acquire(partition, "", "node1", 30000));
    ASSERT_TRUE(acquired.ok() && acquired.value().has_value()) << partition.key;
    const Lease lease = *acquired.value();
    std::string ack;
    for (int e = 0; e <= kEventsPerPartition; ++e) {
      Result<NextReply> next =
          f.run(f.broker.fenced_next(lease, kGroup, ReadFrom::new_entries, ack));
      ASSERT_TRUE(next.ok()) << next.error().message;
      if (e == kEventsPerPartition) {
        EXPECT_FALSE(next.value().entry.has_value());
        break;
      }
      ASSERT_TRUE(next.value().entry.has_value());
      ack = next.value().entry->id;
      Result<CommitReply> commit = f.run(f.broker.fenced_commit(lease, kGroup, e + 1, ack));
      ASSERT_TRUE(commit.ok() && commit.value().outcome == CommitOutcome::accepted);
    }
  }
  // Server side: the calls each master counted (INFO commandstats: cmdstat_X:calls=N,...).
  std::map<std::uint16_t, std::uint64_t> calls;
  std::map<std::uint16_t, std::uint64_t> usec_of;  // server time in the broker's commands
  std::uint64_t all = 0;
  for (std::uint16_t master : cluster.masters()) {
    Result<Reply> stats = RedisCluster::run(master, {"INFO", "commandstats"});
    ASSERT_TRUE(stats.ok());
    std::uint64_t count = 0;
    std::istringstream lines(stats.value().str);
    std::string line;
    while (std::getline(lines, line)) {
      // cmdstat_NAME:calls=N,...; the test's own probes and the replicas' REPLCONF ACKs are
      // not the broker's.
      const std::size_t colon = line.find(':');
      if (line.rfind("cmdstat_", 0) != 0 || colon == std::string::npos) continue;
      const std::string name = line.substr(8, colon - 8);
      bool probe = false;
      for (const char* skipped : {"replconf", "info", "config", "cluster", "ping", "command"}) {
        probe = probe || name.rfind(skipped, 0) == 0;
      }
      const std::size_t calls = line.find("calls=", colon);
      const std::size_t usec = line.find("usec=", colon);
      if (!probe && calls != std::string::npos) count += std::stoull(line.substr(calls + 6));
      if (!probe && usec != std::string::npos)
        usec_of[master] += std::stoull(line.substr(usec + 5));
    }
    calls[master] = count;
    all += count;
  }
  ASSERT_EQ(calls.size(), 3u);
  std::map<std::uint16_t, int> partitions_of;
  for (int p = 0; p < kPartitions; ++p) {
    const std::string stream = PartitionRef{"spread", "{p" + std::to_string(p) + "}"}.stream();
    ++partitions_of[cluster.master_of_slot(key_slot(stream)).value_or(0)];
  }
  for (const auto& [master, count] : calls) {
    const double share = static_cast<double>(count) / static_cast<double>(all);
    std::cout << "master 127.0.0.1:" << master << ": " << count << " commands of " << all << " ("
              << static_cast<int>(share * 1000 + 0.5) / 10.0 << "%)\n";
    const int events = partitions_of[master] * kEventsPerPartition;
    std::cout << "  " << partitions_of[master] << " partitions, " << usec_of[master]
              << " us of server time in their commands, "
              << (events > 0 ? usec_of[master] / events : 0) << " us per event\n";
    EXPECT_GT(share, 0.75 / 3) << master;
    EXPECT_LT(share, 1.25 / 3) << master;
  }
  for (const auto& [node, count] : f.link.commands_per_node()) {
    std::cout << "link -> " << node << ": " << count << " commands\n";
  }
}

}  // namespace
}  // namespace seqby::redis
