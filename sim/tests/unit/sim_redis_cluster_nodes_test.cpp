// SimRedis's cluster nodes (SimRedis::enable_cluster_nodes): a command sent to one node is
// answered as Redis 7.0 answers it there, with the exact texts a ClusterLink parses: MOVED from a
// node that does not serve the slot (a replica too), ASK and TRYAGAIN while the slot migrates,
// ASKING on the importing node, CLUSTER SLOTS, a script cache per node, and CLUSTER FAILOVER.
#include <gtest/gtest.h>

#include "seqby/core/keyspace.h"
#include "seqby/sim/sim_redis.h"
#include "sim_redis_test_util.h"

namespace seqby::sim {
namespace {

using namespace testing;  // NOLINT: the reply builders

constexpr const char* kTryAgain = "TRYAGAIN Multiple keys request during rehashing of slot";

struct SimRedisNodes : ::testing::Test {
  ManualClock clock{1000};
  SimRedis redis{clock};
  void SetUp() override { redis.enable_cluster_nodes(3); }
  Reply on(std::uint32_t node, const redis::Command& command, bool asking = false) {
    return redis.execute_on_node(node, command, asking);
  }
};

TEST_F(SimRedisNodes, SlotsAreSplitAsRedisCliSplitsThemAndClusterSlotsSaysSo) {
  auto endpoint = [](std::uint32_t node) {
    return arr({bulk("sim-node-" + std::to_string(node)), integer(7000 + node),
                bulk(std::string(39, '0') + std::to_string(node))});
  };
  EXPECT_EQ(on(1, {"CLUSTER", "SLOTS"}),
            arr({arr({integer(0), integer(5460), endpoint(0), endpoint(3)}),
                 arr({integer(5461), integer(10922), endpoint(1), endpoint(4)}),
                 arr({integer(10923), integer(16383), endpoint(2), endpoint(5)})}));
  EXPECT_EQ(SimRedis::node_of_address("sim-node-4", 7004), 4u);
  EXPECT_FALSE(SimRedis::node_of_address("sim-node-4", 7005).has_value());
  EXPECT_FALSE(SimRedis::node_of_address("127.0.0.1", 7000).has_value());
}

TEST_F(SimRedisNodes, ANodeThatDoesNotServeTheSlotAnswersMovedAReplicaToo) {
  ASSERT_EQ(key_hash_slot("foo"), 12182);  // shard 2: master node 2, replica node 5
  EXPECT_EQ(on(2, {"SET", "foo", "x"}), ok());
  EXPECT_EQ(on(0, {"GET", "foo"}), error("MOVED 12182 sim-node-2:7002"));
  EXPECT_EQ(on(5, {"GET", "foo"}), error("MOVED 12182 sim-node-2:7002"));
  EXPECT_EQ(on(2, {"GET", "foo"}), bulk("x"));
  // A script is routed by its KEYS.
  EXPECT_EQ(on(0, {"EVAL", "return redis.call('GET', KEYS[1])", "1", "foo"}),
            error("MOVED 12182 sim-node-2:7002"));
  EXPECT_EQ(on(2, {"EVAL", "return redis.call('GET', KEYS[1])", "1", "foo"}), bulk("x"));
  const SimRedis::Redirections seen = redis.redirections();
  EXPECT_EQ(seen.moved, 3u);
  EXPECT_EQ(seen.ask, 0u);
}

TEST_F(SimRedisNodes, AMigratingSlotAnswersAskAndTryagainAndTheImporterRunsAfterAsking) {
  const std::uint16_t slot = key_hash_slot("{t}a");
  ASSERT_EQ(slot, 15891);  // shard 2
  const std::string slot_text = std::to_string(slot);
  EXPECT_EQ(on(2, {"SET", "{t}a", "1"}), ok());
  EXPECT_EQ(on(2, {"SET", "{t}b", "2"}), ok());
  ASSERT_TRUE(redis.begin_slot_migration(slot, 0));
  EXPECT_FALSE(redis.begin_slot_migration(slot, 1));  // one at a time

  // Before any key moved: keys here run; a missing key is asked for on the importing node.
  EXPECT_EQ(on(2, {"GET", "{t}a"}), bulk("1"));
  EXPECT_EQ(on(2, {"GET", "{t}c"}), error("ASK " + slot_text + " sim-node-0:7000"));
  // The importer does not serve the slot without ASKING.
  EXPECT_EQ(on(0, {"GET", "{t}a"}), error("MOVED " + slot_text + " sim-node-2:7002"));

  ASSERT_TRUE(redis.migrate_one_key());  // {t}a, in name order
  EXPECT_EQ(on(2, {"GET", "{t}a"}), error("ASK " + slot_text + " sim-node-0:7000"));
  EXPECT_EQ(on(2, {"MGET", "{t}a", "{t}b"}), error(kTryAgain));
  EXPECT_EQ(on(0, {"GET", "{t}a"}, true), bulk("1"));
  EXPECT_EQ(on(0, {"MGET", "{t}a", "{t}b"}, true), error(kTryAgain));
  // A key written on the importer is there: the source asks for it.
  EXPECT_EQ(on(0, {"SET", "{t}c", "3"}, true), ok());
  EXPECT_EQ(on(2, {"GET", "{t}c"}), error("ASK " + slot_text + " sim-node-0:7000"));
  // A script on the source whose declared keys are here may not create one there.
  Reply created = on(2, {"EVAL", "redis.call('SET', KEYS[1], 'y') return 1", "1", "{t}b"});
  EXPECT_EQ(created, integer(1));
  created = on(
      2, {"EVAL", "redis.call('GET', KEYS[1]) return redis.call('SET', '{t}d', 'z')", "1", "{t}b"});
  ASSERT_EQ(created.kind, Reply::Kind::error);
  EXPECT_NE(created.str.find("non local key"), std::string::npos) << created.str;

  ASSERT_TRUE(redis.migrate_one_key());   // {t}b
  EXPECT_FALSE(redis.migrate_one_key());  // {t}c was written there
  redis.end_slot_migration();
  EXPECT_EQ(redis.shard_of_slot(slot), 0u);
  EXPECT_EQ(on(2, {"GET", "{t}a"}), error("MOVED " + slot_text + " sim-node-0:7000"));
  EXPECT_EQ(on(0, {"MGET", "{t}a", "{t}b", "{t}c"}), arr({bulk("1"), bulk("y"), bulk("3")}));
  const SimRedis::Redirections seen = redis.redirections();
  EXPECT_EQ(seen.ask, 4u);
  EXPECT_EQ(seen.tryagain, 2u);
}

TEST_F(SimRedisNodes, EachNodeHasItsOwnScriptCacheAndAPromotedReplicaHasNone) {
  const std::string body = "return redis.call('GET', KEYS[1])";
  const Reply sha = on(0, {"SCRIPT", "LOAD", body});
  ASSERT_EQ(sha.kind, Reply::Kind::bulk);
  ASSERT_EQ(key_hash_slot("bar"), 5061);   // shard 0
  ASSERT_EQ(key_hash_slot("foo"), 12182);  // shard 2
  EXPECT_EQ(on(0, {"SET", "bar", "b"}), ok());
  EXPECT_EQ(on(0, {"EVALSHA", sha.str, "1", "bar"}), bulk("b"));
  EXPECT_EQ(on(2, {"EVALSHA", sha.str, "1", "foo"}),
            error("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(on(2, {"EVAL", body, "1", "foo"}), nil());
  EXPECT_EQ(on(2, {"EVALSHA", sha.str, "1", "foo"}), nil());

  // CLUSTER FAILOVER of shard 0: its replica (node 3) serves the slots with the same data and
  // no scripts; the old master redirects.
  redis.promote_replica(0);
  EXPECT_EQ(redis.master_of_shard(0), 3u);
  EXPECT_EQ(on(0, {"GET", "bar"}), error("MOVED 5061 sim-node-3:7003"));
  EXPECT_EQ(on(3, {"EVALSHA", sha.str, "1", "bar"}),
            error("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(on(3, {"SCRIPT", "LOAD", body}), sha);
  EXPECT_EQ(on(3, {"EVALSHA", sha.str, "1", "bar"}), bulk("b"));
  EXPECT_EQ(redis.redirections().noscript, 2u);
  // SCRIPT FLUSH (the script_flush fault's) empties every node's cache.
  EXPECT_EQ(redis.execute({"SCRIPT", "FLUSH"}), ok());
  EXPECT_EQ(on(2, {"EVALSHA", sha.str, "1", "foo"}),
            error("NOSCRIPT No matching script. Please use EVAL."));
}

}  // namespace
}  // namespace seqby::sim
