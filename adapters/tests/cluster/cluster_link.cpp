// ClusterLink on a real Redis Cluster (3 masters, 3 replicas,
// scenarios/include/seqby/scenarios/redis_cluster.h): commands reach the master of their slot, a
// slot migrated mid-test is followed by MOVED and ASK (with TRYAGAIN while its keys are split), a
// failover by CLUSTER FAILOVER and by a SIGKILL of a master is followed by the map, and nothing
// that may have run is sent twice.
#include "seqby/hiredis/cluster_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "seqby/scenarios/redis_cluster.h"

namespace seqby::redis {
namespace {

using scenarios::RedisCluster;

}  // namespace

// How gtest shows a Reply in a failed expectation.
void PrintTo(const Reply& reply, std::ostream* out) { *out << to_string(reply); }

namespace {

std::string address(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

std::uint64_t total(const std::map<std::string, std::uint64_t>& per_node) {
  std::uint64_t sum = 0;
  for (const auto& [node, count] : per_node) sum += count;
  return sum;
}

void print_timings(const RedisCluster& cluster) {
  std::cout << "cluster fixture: spawn " << cluster.timings().spawn_ms << " ms, create "
            << cluster.timings().create_ms << " ms, healthy " << cluster.timings().ok_ms << " ms\n";
}

Result<Reply> run_on(RealRuntime& runtime, ClusterLink& link, Command command) {
  return runtime.block_on(link.execute(std::move(command)));
}

// Moves `slot` from master `from` to master `to` in two halves (RedisCluster's slot move):
// begin() marks it IMPORTING/MIGRATING and migrates `keys_first`; finish() migrates whatever keys
// are left and gives the slot to `to` on every master.
struct SlotMove {
  RedisCluster& cluster;
  std::uint16_t slot;
  std::uint16_t from;
  std::uint16_t to;

  void begin(const std::vector<std::string>& keys_first) const {
    ASSERT_TRUE(cluster.begin_slot_move(slot, from, to)) << cluster.error();
    migrate(keys_first);
  }
  void migrate(const std::vector<std::string>& keys) const {
    ASSERT_TRUE(cluster.migrate_keys(from, to, keys)) << cluster.error();
  }
  void finish() const { ASSERT_TRUE(cluster.finish_slot_move(slot, from, to)) << cluster.error(); }
};

// A master other than `not_this`.
std::uint16_t other_master(RedisCluster& cluster, std::uint16_t not_this) {
  for (std::uint16_t master : cluster.masters()) {
    if (master != not_this) return master;
  }
  return 0;
}

TEST(ClusterLink, RoutesEachKeyToTheMasterOfItsSlot) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  std::vector<std::string> keys;
  for (int i = 0; i < 30; ++i) keys.push_back("route:" + std::to_string(i));
  for (const std::string& key : keys) {
    // The slot this link computes is the one the server computes.
    Result<Reply> slot = RedisCluster::run(cluster.seed().port, {"CLUSTER", "KEYSLOT", key});
    ASSERT_EQ(slot.value(), Reply::of_int(key_slot(key))) << key;
    ASSERT_EQ(run_on(runtime, link, {"SET", key, "v:" + key}).value(), Reply::status("OK"));
  }
  std::set<std::string> used;
  for (const std::string& key : keys) {
    const std::optional<std::uint16_t> owner = cluster.master_of_slot(key_slot(key));
    ASSERT_TRUE(owner.has_value());
    EXPECT_EQ(link.node_of_slot(key_slot(key)), address(*owner)) << key;
    // The master of the slot holds the key: a plain connection to it reads it, no MOVED.
    EXPECT_EQ(RedisCluster::run(*owner, {"GET", key}).value(), Reply::bulk("v:" + key)) << key;
    used.insert(address(*owner));
    EXPECT_EQ(run_on(runtime, link, {"GET", key}).value(), Reply::bulk("v:" + key));
  }
  EXPECT_EQ(used.size(), 3u);  // 30 keys cover every master
  EXPECT_EQ(link.stats().moved, 0u);
  EXPECT_EQ(link.stats().asked, 0u);
  EXPECT_EQ(link.masters().size(), 3u);
  for (const std::string& master : link.masters()) {
    EXPECT_GT(link.commands_per_node()[master], 0u) << master;
  }
  // A command without keys, and one every master must run.
  EXPECT_EQ(run_on(runtime, link, {"PING"}).value(), Reply::status("PONG"));
  Result<Reply> keys_found = run_on(runtime, link, {"KEYS", "route:*"});
  ASSERT_TRUE(keys_found.ok());
  EXPECT_EQ(keys_found.value().elements.size(), keys.size());
}

TEST(ClusterLink, CommandsAcrossSlotsAreRefusedBeforeAnythingIsSent) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  ASSERT_EQ(run_on(runtime, link, {"SET", "a", "1"}).value(), Reply::status("OK"));
  const std::uint64_t sent_before = total(link.commands_per_node());

  Result<Reply> mget = run_on(runtime, link, {"MGET", "a", "b"});
  ASSERT_TRUE(mget.ok());
  EXPECT_TRUE(mget.value().is_error_with("CROSSSLOT")) << to_string(mget.value());
  EXPECT_NE(mget.value().str.find("\"a\" slot 15495, \"b\" slot 3300"), std::string::npos)
      << mget.value().str;
  // A script over two partitions' keys, and a blocking read over two slots (what a wake link
  // would send over many idle partitions): refused the same way.
  Result<Reply> eval = run_on(runtime, link, {"EVAL", "return 1", "2", "o:{p1}", "o:{p2}"});
  EXPECT_TRUE(eval.value().is_error_with("CROSSSLOT")) << to_string(eval.value());
  Result<Reply> wake =
      run_on(runtime, link,
             {"XREAD", "COUNT", "1", "BLOCK", "50", "STREAMS", "o:{p1}", "o:{p2}", "0", "0"});
  EXPECT_TRUE(wake.value().is_error_with("CROSSSLOT")) << to_string(wake.value());
  Result<Reply> multi = run_on(runtime, link, {"MULTI"});
  EXPECT_TRUE(multi.value().is_error_with("ERR seqby cluster link")) << to_string(multi.value());
  EXPECT_EQ(total(link.commands_per_node()), sent_before);  // none of them left the client
  EXPECT_EQ(link.stats().refused, 4u);
  // Keys sharing a hash tag go together.
  EXPECT_EQ(run_on(runtime, link, {"MSET", "x{t}", "1", "y{t}", "2"}).value(), Reply::status("OK"));
  EXPECT_EQ(run_on(runtime, link, {"MGET", "x{t}", "y{t}"}).value(),
            Reply::array({Reply::bulk("1"), Reply::bulk("2")}));
}

TEST(ClusterLink, MovedAfterASlotMigrationIsFollowedAndUpdatesTheMap) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  ClusterLinkOptions options;
  options.refresh_interval_min_ms = 0;  // the next command reads the map again, however soon
  HiredisClusterLink link(runtime, cluster.seed(), options);
  const std::string key = "mig:{m}a";
  const std::uint16_t slot = key_slot(key);
  ASSERT_EQ(run_on(runtime, link, {"SET", key, "before"}).value(), Reply::status("OK"));
  ASSERT_EQ(run_on(runtime, link, {"INCR", "mig:{m}n"}).value(), Reply::of_int(1));
  const std::uint16_t from = cluster.master_of_slot(slot).value();
  const std::uint16_t to = other_master(cluster, from);
  ASSERT_EQ(link.node_of_slot(slot), address(from));

  SlotMove move{cluster, slot, from, to};
  move.begin({});
  move.finish();

  // The link still routes by its old map: the old owner answers MOVED, the link follows it.
  EXPECT_EQ(run_on(runtime, link, {"GET", key}).value(), Reply::bulk("before"));
  EXPECT_EQ(link.stats().moved, 1u);
  EXPECT_EQ(link.node_of_slot(slot), address(to));
  // A write after the move runs once, on the new owner (MOVED means it did not run before).
  EXPECT_EQ(run_on(runtime, link, {"INCR", "mig:{m}n"}).value(), Reply::of_int(2));
  EXPECT_EQ(RedisCluster::run(to, {"GET", "mig:{m}n"}).value(), Reply::bulk("2"));
  EXPECT_EQ(link.stats().moved, 1u);
  EXPECT_GE(link.stats().refreshes, 2u);       // the map was read again after the redirection
  EXPECT_EQ(link.stats().failovers_seen, 0u);  // a slot moved between masters: no failover
}

TEST(ClusterLink, AskDuringAMigrationAndTryagainWhileItsKeysAreSplit) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  ClusterLinkOptions options;
  options.tryagain_count_max = 2;
  options.tryagain_backoff_min_ms = 5;
  HiredisClusterLink link(runtime, cluster.seed(), options);
  const std::string moved_key = "ask:{q}1";
  const std::string staying_key = "ask:{q}2";
  const std::uint16_t slot = key_slot(moved_key);
  ASSERT_EQ(run_on(runtime, link, {"SET", moved_key, "one"}).value(), Reply::status("OK"));
  ASSERT_EQ(run_on(runtime, link, {"SET", staying_key, "two"}).value(), Reply::status("OK"));
  const std::uint16_t from = cluster.master_of_slot(slot).value();
  const std::uint16_t to = other_master(cluster, from);

  SlotMove move{cluster, slot, from, to};
  move.begin({moved_key});

  // The migrated key: the old owner answers ASK, the link sends ASKING + GET to the new one.
  EXPECT_EQ(run_on(runtime, link, {"GET", moved_key}).value(), Reply::bulk("one"));
  EXPECT_EQ(link.stats().asked, 1u);
  EXPECT_EQ(link.node_of_slot(slot), address(from));  // ASK leaves the map as it is
  // The key not migrated yet is served by the old owner.
  EXPECT_EQ(run_on(runtime, link, {"GET", staying_key}).value(), Reply::bulk("two"));
  EXPECT_EQ(link.stats().asked, 1u);
  // A new key of the slot is created on the importing node (ASK again).
  EXPECT_EQ(run_on(runtime, link, {"SET", "ask:{q}3", "three"}).value(), Reply::status("OK"));
  EXPECT_EQ(link.stats().asked, 2u);
  // It is not on the old owner, which sends a plain client on to the importing node.
  Result<Reply> on_old = RedisCluster::run(from, {"EXISTS", "ask:{q}3"});
  EXPECT_TRUE(on_old.ok() && on_old.value().is_error_with("ASK ")) << to_string(on_old.value());
  // Both keys at once while they are split: TRYAGAIN, retried with a backoff, then returned.
  Result<Reply> split = run_on(runtime, link, {"MGET", moved_key, staying_key});
  ASSERT_TRUE(split.ok());
  EXPECT_TRUE(split.value().is_error_with("TRYAGAIN")) << to_string(split.value());
  EXPECT_NE(split.value().str.find("gave up after 3 tries"), std::string::npos)
      << split.value().str;
  EXPECT_EQ(link.stats().tryagain, 2u);

  move.finish();
  EXPECT_EQ(run_on(runtime, link, {"MGET", moved_key, staying_key}).value(),
            Reply::array({Reply::bulk("one"), Reply::bulk("two")}));
  EXPECT_EQ(link.stats().moved, 1u);
  EXPECT_EQ(link.node_of_slot(slot), address(to));
  EXPECT_EQ(RedisCluster::run(to, {"GET", "ask:{q}3"}).value(), Reply::bulk("three"));
}

// Writers keep incrementing counters of one slot while another thread migrates it: every INCR
// that was answered ran exactly once (a MOVED or ASK was followed, never a command re-sent that
// had run), so each counter ends at the number of its answered INCRs.
struct Writers {
  explicit Writers(std::atomic<bool>* migrated_flag) : migrated(migrated_flag) {}
  std::atomic<bool>* migrated;
  int replies_ok = 0;
  int replies_bad = 0;
  int done = 0;
  std::map<std::string, std::int64_t> answered;  // key -> INCRs answered with an integer
  std::vector<std::string> problems;
};

Task<void> write_counters(RealRuntime& runtime, ClusterLink& link, std::vector<std::string> keys,
                          Writers* out) {
  // Until the migration is over, and some more after it.
  for (int after = 0; after < 20;) {
    for (const std::string& key : keys) {
      Command incr{"INCR", key};
      Result<Reply> reply = co_await link.execute(std::move(incr));
      if (reply.ok() && reply.value().kind == Reply::Kind::integer) {
        ++out->replies_ok;
        ++out->answered[key];
      } else {
        ++out->replies_bad;
        if (out->problems.size() < 5) {
          out->problems.push_back(key + ": " +
                                  (reply.ok() ? to_string(reply.value()) : reply.error().message));
        }
      }
    }
    co_await runtime.sleep_ms(1);
    if (out->migrated->load()) ++after;
  }
  ++out->done;
}

Task<void> wait_done(RealRuntime& runtime, const Writers* writers, int target) {
  while (writers->done < target) co_await runtime.sleep_ms(5);
}

TEST(ClusterLink, WritesDuringAMigrationRunExactlyOnce) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back("busy:{b}" + std::to_string(i));
  const std::uint16_t slot = key_slot(keys.front());
  ASSERT_EQ(run_on(runtime, link, {"SET", keys.front(), "0"}).value(), Reply::status("OK"));
  const std::uint16_t from = cluster.master_of_slot(slot).value();
  const std::uint16_t to = other_master(cluster, from);
  std::atomic<bool> migrated{false};
  Writers writers(&migrated);
  constexpr int kWriters = 8;
  for (int w = 0; w < kWriters; ++w) {
    runtime.spawn("writer", write_counters(runtime, link, keys, &writers));
  }
  std::thread mover([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    SlotMove move{cluster, slot, from, to};
    // Half the keys first, a pause with the slot split, then the rest and the new owner.
    move.begin({keys.begin(), keys.begin() + 4});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    move.finish();
    migrated = true;
  });
  runtime.block_on(wait_done(runtime, &writers, kWriters));
  mover.join();

  EXPECT_EQ(writers.replies_bad, 0) << ::testing::PrintToString(writers.problems);
  for (const std::string& key : keys) {
    Result<Reply> value = RedisCluster::run(to, {"GET", key});
    ASSERT_TRUE(value.ok());
    EXPECT_EQ(value.value(), Reply::bulk(std::to_string(writers.answered[key]))) << key;
  }
  EXPECT_GE(link.stats().moved, 1u);
  EXPECT_EQ(link.node_of_slot(slot), address(to));
  std::cout << "during the migration: " << writers.replies_ok << " INCRs answered, "
            << link.stats().moved << " MOVED and " << link.stats().asked << " ASK followed\n";
}

TEST(ClusterLink, ScriptsAreLoadedOnEveryMasterAndReloadedOnANodeThatLostThem) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  const std::string source = "return redis.call('INCR', KEYS[1])";
  Result<Reply> sha = run_on(runtime, link, {"SCRIPT", "LOAD", source});
  ASSERT_TRUE(sha.ok());
  ASSERT_EQ(sha.value().kind, Reply::Kind::bulk) << to_string(sha.value());
  for (std::uint16_t master : cluster.masters()) {
    EXPECT_EQ(RedisCluster::run(master, {"SCRIPT", "EXISTS", sha.value().str}).value(),
              Reply::array({Reply::of_int(1)}))
        << master;
  }
  const std::string key = "script:{s}";
  EXPECT_EQ(run_on(runtime, link, {"EVALSHA", sha.value().str, "1", key}).value(),
            Reply::of_int(1));
  // The node forgets its scripts: NOSCRIPT did not run it, the link loads it there and sends
  // the EVALSHA again, once.
  const std::uint16_t owner = cluster.master_of_slot(key_slot(key)).value();
  ASSERT_EQ(RedisCluster::run(owner, {"SCRIPT", "FLUSH"}).value(), Reply::status("OK"));
  EXPECT_EQ(run_on(runtime, link, {"EVALSHA", sha.value().str, "1", key}).value(),
            Reply::of_int(2));
  EXPECT_EQ(link.stats().script_reloads, 1u);
}

TEST(ClusterLink, FollowsAFailoverByClusterFailover) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  const std::string key = "failover:{f}";
  const std::uint16_t slot = key_slot(key);
  ASSERT_EQ(run_on(runtime, link, {"SET", key, "kept"}).value(), Reply::status("OK"));
  const std::uint16_t master = cluster.master_of_slot(slot).value();
  const std::vector<std::uint16_t> replicas = cluster.replicas_of(master);
  ASSERT_EQ(replicas.size(), 1u);
  const std::uint16_t replica = replicas.front();
  ASSERT_TRUE(cluster.wait_replicated(master, 10000)) << cluster.error();

  // A manual failover the master does not complete in time (5 s) is given up by the replica:
  // asked again, up to 4 times, while the replica is still one.
  int asked = 0;
  std::uint64_t asked_at_ms = 0;
  ASSERT_TRUE(cluster.wait_until(
      [&] {
        const std::uint64_t now_ms = runtime.clock().now_ms();
        Result<Reply> role = RedisCluster::run(replica, {"ROLE"});
        const bool still_replica = role.ok() && !role.value().elements.empty() &&
                                   role.value().elements[0] == Reply::bulk("slave");
        if (still_replica && asked < 4 && (asked == 0 || now_ms >= asked_at_ms + 6000)) {
          EXPECT_EQ(RedisCluster::run(replica, {"CLUSTER", "FAILOVER"}).value(),
                    Reply::status("OK"));
          ++asked;
          asked_at_ms = now_ms;
        }
        for (std::uint16_t port : cluster.ports()) {
          if (cluster.master_of_slot(slot, port) != replica) return false;
        }
        return true;
      },
      20000,
      "every node to see 127.0.0.1:" + std::to_string(replica) + " serve slot " +
          std::to_string(slot)))
      << cluster.error();

  // The old master (now a replica) answers MOVED; the link follows and updates its map.
  EXPECT_EQ(run_on(runtime, link, {"GET", key}).value(), Reply::bulk("kept"));
  EXPECT_GE(link.stats().moved, 1u);
  EXPECT_EQ(link.node_of_slot(slot), address(replica));
  // A replica promoted: the engine reads its pending lists again (Broker::failovers_seen).
  EXPECT_GE(link.stats().failovers_seen, 1u);
  EXPECT_EQ(run_on(runtime, link, {"SET", key, "after"}).value(), Reply::status("OK"));
  EXPECT_EQ(RedisCluster::run(replica, {"GET", key}).value(), Reply::bulk("after"));
}

TEST(ClusterLink, AKilledMasterIsReportedNotRetriedThenItsPromotedReplicaServes) {
  RedisCluster cluster;
  ASSERT_TRUE(cluster.ok()) << cluster.error();
  print_timings(cluster);
  RealRuntime runtime;
  HiredisClusterLink link(runtime, cluster.seed());
  const std::string key = "kill:{k}";
  const std::uint16_t slot = key_slot(key);
  ASSERT_EQ(run_on(runtime, link, {"SET", key, "replicated"}).value(), Reply::status("OK"));
  const std::uint16_t master = cluster.master_of_slot(slot).value();
  const std::uint16_t replica = cluster.replicas_of(master).at(0);
  ASSERT_TRUE(cluster.wait_replicated(master, 10000)) << cluster.error();

  cluster.kill(master);
  // The connection to the dead master is lost: the command is reported, never sent elsewhere.
  Result<Reply> lost = run_on(runtime, link, {"INCR", "kill:{k}n"});
  ASSERT_FALSE(lost.ok()) << to_string(lost.value());
  EXPECT_EQ(lost.code(), Errc::closed) << lost.error().message;
  EXPECT_EQ(link.stats().transport_errors, 1u);

  // Until the replica is promoted, commands fail (closed, or CLUSTERDOWN from a live node);
  // then the refreshed map sends them to it.
  std::uint64_t failures = 0;
  std::optional<Reply> served;
  ASSERT_TRUE(cluster.wait_until(
      [&] {
        Result<Reply> reply = run_on(runtime, link, {"GET", key});
        if (reply.ok() && !reply.value().is_error()) {
          served = reply.value();
          return true;
        }
        ++failures;
        return false;
      },
      30000, "the replica 127.0.0.1:" + std::to_string(replica) + " to serve " + key))
      << cluster.error() << "; link stats: refreshes " << link.stats().refreshes;
  EXPECT_EQ(*served, Reply::bulk("replicated"));  // it had reached the replica
  EXPECT_EQ(link.node_of_slot(slot), address(replica));
  EXPECT_GE(link.stats().failovers_seen, 1u);
  // The INCR that was reported as lost did not run on the new master.
  EXPECT_EQ(run_on(runtime, link, {"GET", "kill:{k}n"}).value(), Reply::nil());
  std::cout << "failover after SIGKILL: " << failures << " failed reads before the promoted "
            << "replica served, " << link.stats().refreshes << " map refreshes\n";
  EXPECT_TRUE(cluster.wait_healthy(30000)) << cluster.error();
}

}  // namespace
}  // namespace seqby::redis
