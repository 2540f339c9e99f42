// SimRedis's cluster mode (SimRedis::enable_cluster_mode): Redis 7.0's CROSSSLOT refusal of a
// command or script whose keys span hash slots, and its refusal of a script's command on a key of
// another node (every slot on a node of its own), with the exact error texts; SMOVE and SUNION.
#include <gtest/gtest.h>

#include "seqby/sim/sim_redis.h"
#include "sim_redis_test_util.h"

namespace seqby::sim {
namespace {

using namespace testing;  // NOLINT: the reply builders

constexpr const char* kCrossSlot = "CROSSSLOT Keys in request don't hash to the same slot";

struct SimRedisCluster : ::testing::Test {
  ManualClock clock{1000};
  SimRedis redis{clock};
  void SetUp() override { redis.enable_cluster_mode(); }
};

TEST_F(SimRedisCluster, ACommandAcrossSlotsIsRefusedWithCrossslot) {
  EXPECT_EQ(redis.execute({"DEL", "foo", "bar"}), error(kCrossSlot));
  EXPECT_EQ(redis.execute({"SUNION", "foo", "bar"}), error(kCrossSlot));
  EXPECT_EQ(redis.execute({"SMOVE", "foo", "bar", "m"}), error(kCrossSlot));
  EXPECT_EQ(redis.execute({"XREAD", "COUNT", "1", "STREAMS", "foo", "bar", "0", "0"}),
            error(kCrossSlot));
  // One slot: runs.
  EXPECT_EQ(redis.execute({"SADD", "{t}a", "m"}), integer(1));
  EXPECT_EQ(redis.execute({"SMOVE", "{t}a", "{t}b", "m"}), integer(1));
  EXPECT_EQ(redis.execute({"SUNION", "{t}a", "{t}b"}), bulks({"m"}));
  EXPECT_EQ(redis.execute({"DEL", "{t}a", "{t}b"}), integer(1));
}

TEST_F(SimRedisCluster, AScriptWhoseKeysSpanSlotsIsRefusedBeforeItRuns) {
  EXPECT_EQ(redis.execute({"EVAL", "redis.call('SET', KEYS[1], 'x') return 1", "2", "foo", "bar"}),
            error(kCrossSlot));
  EXPECT_EQ(redis.execute({"EXISTS", "foo"}), integer(0));
}

TEST_F(SimRedisCluster, AScriptTouchingAKeyOfAnotherSlotFailsThere) {
  // Declared foo; the undeclared bar is in another slot (another node, here): the write before
  // stays (no rollback), the call fails as Redis 7.0 fails it.
  const std::string body = "redis.call('SET', KEYS[1], 'x')\nredis.call('SET', 'bar', 'y')\n";
  Reply reply = redis.execute({"EVAL", body, "1", "foo"});
  ASSERT_EQ(reply.kind, Reply::Kind::error);
  EXPECT_EQ(reply.str.rfind("ERR Script attempted to access a non local key in a cluster node "
                            "script: ",
                            0),
            0u)
      << reply.str;
  EXPECT_NE(reply.str.find(", on @user_script:2."), std::string::npos) << reply.str;
  EXPECT_EQ(redis.execute({"GET", "foo"}), bulk("x"));
  EXPECT_EQ(redis.execute({"EXISTS", "bar"}), integer(0));
  // With no KEYS the first key touched binds the script's slot.
  reply = redis.execute({"EVAL", "redis.call('GET', 'foo')\nreturn redis.call('GET', 'bar')", "0"});
  ASSERT_EQ(reply.kind, Reply::Kind::error);
  EXPECT_NE(reply.str.find("non local key"), std::string::npos) << reply.str;
  // Same slot through a tag: runs.
  EXPECT_EQ(redis.execute({"EVAL",
                           "redis.call('SET', KEYS[1], 1)\nreturn redis.call('INCR', "
                           "'{foo}:n')",
                           "1", "{foo}:m"}),
            integer(1));
}

TEST(SimRedisNotCluster, CommandsAcrossSlotsRunAsOnOneServer) {
  ManualClock clock{1000};
  SimRedis redis{clock};
  EXPECT_EQ(redis.execute({"SADD", "foo", "m"}), integer(1));
  EXPECT_EQ(redis.execute({"SMOVE", "foo", "bar", "m"}), integer(1));
  EXPECT_EQ(redis.execute({"SMOVE", "foo", "bar", "m"}), integer(0));
  EXPECT_EQ(redis.execute({"EXISTS", "foo"}), integer(0));  // an emptied set goes
  EXPECT_EQ(redis.execute({"SUNION", "foo", "bar"}), bulks({"m"}));
  EXPECT_EQ(redis.execute({"SET", "s", "v"}), ok());
  EXPECT_EQ(redis.execute({"SMOVE", "s", "bar", "m"}), error(kWrongType));
  EXPECT_EQ(redis.execute({"SUNION", "bar", "s"}), error(kWrongType));
}

}  // namespace
}  // namespace seqby::sim
