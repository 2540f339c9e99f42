// SimRedis generic commands, strings, sets, hashes and sorted sets: exact Redis 7.0 replies,
// error texts included, and key expiry against the server clock.
#include <gtest/gtest.h>

#include "seqby/sim/sim_redis.h"
#include "sim_redis_test_util.h"

namespace seqby::sim {
namespace {

using namespace testing;

class SimRedisKeysTest : public ::testing::Test {
 protected:
  Reply run(redis::Command c) { return redis.execute(c); }
  ManualClock clock{1'000'000};
  SimRedis redis{clock};
};

TEST_F(SimRedisKeysTest, DispatchRejectsUnknownCommandsAndWrongArity) {
  EXPECT_EQ(run({"PING"}), status("PONG"));
  EXPECT_EQ(run({"ping", "hi"}), bulk("hi"));
  EXPECT_EQ(run({"ping", "a", "b"}), error("ERR wrong number of arguments for 'ping' command"));
  EXPECT_EQ(run({"foo", "a", "b"}),
            error("ERR unknown command 'foo', with args beginning with: 'a' 'b' "));
  EXPECT_EQ(run({"get"}), error("ERR wrong number of arguments for 'get' command"));
  EXPECT_EQ(run({"xgroup", "create", "s"}),
            error("ERR wrong number of arguments for 'xgroup|create' command"));
  EXPECT_EQ(run({"xgroup", "foo"}), error("ERR unknown subcommand 'foo'. Try XGROUP HELP."));
  EXPECT_EQ(run({"EcHo", "x"}), bulk("x"));
}

TEST_F(SimRedisKeysTest, SetOptionsFollowRedis) {
  EXPECT_EQ(run({"set", "k", "v", "xx", "nx"}), error("ERR syntax error"));
  EXPECT_EQ(run({"set", "k", "v", "ex", "0"}), error("ERR invalid expire time in 'set' command"));
  EXPECT_EQ(run({"set", "k", "v", "ex", "abc"}),
            error("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"set", "k", "v", "xx"}), nil());
  EXPECT_EQ(run({"set", "k", "v", "get"}), nil());
  EXPECT_EQ(run({"set", "k", "w", "nx", "get"}), bulk("v"));
  EXPECT_EQ(run({"set", "k", "x", "xx", "get"}), bulk("v"));
  EXPECT_EQ(run({"get", "k"}), bulk("x"));
  EXPECT_EQ(run({"sadd", "s", "m"}), integer(1));
  EXPECT_EQ(run({"set", "s", "v", "get"}), error(kWrongType));
  EXPECT_EQ(run({"set", "s", "v"}), ok());  // plain SET replaces any type
  EXPECT_EQ(run({"type", "s"}), status("string"));
}

TEST_F(SimRedisKeysTest, IncrementsCheckTypesAndOverflow) {
  EXPECT_EQ(run({"incr", "n"}), integer(1));
  EXPECT_EQ(run({"incrby", "n", "41"}), integer(42));
  EXPECT_EQ(run({"decr", "n"}), integer(41));
  EXPECT_EQ(run({"incrby", "n", "abc"}), error("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"set", "big", "9223372036854775807"}), ok());
  EXPECT_EQ(run({"incr", "big"}), error("ERR increment or decrement would overflow"));
  EXPECT_EQ(run({"set", "t", "01"}), ok());
  EXPECT_EQ(run({"incr", "t"}), error("ERR value is not an integer or out of range"));
  EXPECT_EQ(run({"hset", "h", "f", "v"}), integer(1));
  EXPECT_EQ(run({"incr", "h"}), error(kWrongType));
}

TEST_F(SimRedisKeysTest, KeysExpireOnTheServerClock) {
  EXPECT_EQ(run({"set", "a", "1", "px", "100"}), ok());
  EXPECT_EQ(run({"set", "b", "2", "ex", "10"}), ok());
  EXPECT_EQ(run({"set", "c", "3"}), ok());
  EXPECT_EQ(run({"pttl", "a"}), integer(100));
  EXPECT_EQ(run({"ttl", "b"}), integer(10));
  EXPECT_EQ(run({"ttl", "c"}), integer(-1));
  EXPECT_EQ(run({"ttl", "nope"}), integer(-2));
  clock.advance_ms(100);
  EXPECT_EQ(run({"get", "a"}), bulk("1"));  // expired only when now > expiry
  clock.advance_ms(1);
  EXPECT_EQ(run({"get", "a"}), nil());
  EXPECT_EQ(run({"keys", "*"}), bulks({"b", "c"}));
  EXPECT_EQ(run({"dbsize"}), integer(2));
  EXPECT_EQ(redis.key_count(), 2u);
  EXPECT_FALSE(redis.key_exists("a"));
  EXPECT_EQ(run({"ttl", "b"}), integer(10));  // 9899 ms rounds to 10 s
  clock.advance_ms(60'000);                   // a forward jump: b is gone
  EXPECT_EQ(redis.key_count(), 1u);
  EXPECT_EQ(redis.active_expire(), 1u);
  EXPECT_EQ(run({"exists", "b", "c", "c"}), integer(2));
}

TEST_F(SimRedisKeysTest, ExpireOptionsAndPersist) {
  EXPECT_EQ(run({"set", "k", "v"}), ok());
  EXPECT_EQ(run({"expire", "k", "10", "xx"}), integer(0));
  EXPECT_EQ(run({"pexpire", "k", "5000", "nx"}), integer(1));
  EXPECT_EQ(run({"pexpire", "k", "9000", "nx"}), integer(0));
  EXPECT_EQ(run({"pexpire", "k", "4000", "gt"}), integer(0));
  EXPECT_EQ(run({"pexpire", "k", "4000", "lt"}), integer(1));
  EXPECT_EQ(run({"pttl", "k"}), integer(4000));
  EXPECT_EQ(run({"expire", "k", "10", "nx", "xx"}),
            error("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_EQ(run({"expire", "k", "10", "foo"}), error("ERR Unsupported option foo"));
  EXPECT_EQ(run({"persist", "k"}), integer(1));
  EXPECT_EQ(run({"persist", "k"}), integer(0));
  EXPECT_EQ(run({"set", "k2", "v", "px", "500"}), ok());
  EXPECT_EQ(run({"incr", "n"}), integer(1));
  EXPECT_EQ(run({"set", "k2", "w", "keepttl"}), ok());
  EXPECT_EQ(run({"pttl", "k2"}), integer(500));
  EXPECT_EQ(run({"set", "k2", "w"}), ok());
  EXPECT_EQ(run({"pttl", "k2"}), integer(-1));
  EXPECT_EQ(run({"expire", "k2", "-1"}), integer(1));  // a past time deletes the key
  EXPECT_EQ(run({"exists", "k2"}), integer(0));
  EXPECT_EQ(run({"expire", "nokey", "10"}), integer(0));
}

TEST_F(SimRedisKeysTest, DelKeysGlobAndFlushall) {
  for (const char* k : {"user:1", "user:2", "user:10", "order:1"}) run({"set", k, "v"});
  EXPECT_EQ(run({"keys", "user:?"}), bulks({"user:1", "user:2"}));
  EXPECT_EQ(run({"keys", "user:[1]*"}), bulks({"user:1", "user:10"}));
  EXPECT_EQ(run({"keys", "*:1"}), bulks({"order:1", "user:1"}));
  EXPECT_EQ(run({"del", "user:1", "nokey", "user:2"}), integer(2));
  EXPECT_EQ(run({"flushall"}), ok());
  EXPECT_EQ(run({"dbsize"}), integer(0));
  EXPECT_EQ(run({"flushall", "foo"}), error("ERR syntax error"));
}

TEST_F(SimRedisKeysTest, MgetGetdelHmgetAndAbsoluteExpiry) {
  run({"set", "a", "1"});
  run({"sadd", "s", "x"});
  EXPECT_EQ(run({"mget", "a", "s", "nokey"}), arr({bulk("1"), nil(), nil()}));
  EXPECT_EQ(run({"getdel", "a"}), bulk("1"));
  EXPECT_EQ(run({"getdel", "a"}), nil());
  EXPECT_EQ(run({"getdel", "s"}), error(kWrongType));
  run({"hset", "h", "f", "1"});
  EXPECT_EQ(run({"hmget", "h", "f", "zz"}), arr({bulk("1"), nil()}));
  run({"set", "k", "v"});
  EXPECT_EQ(run({"pexpireat", "k", "1000500"}), integer(1));
  EXPECT_EQ(run({"pttl", "k"}), integer(500));
  EXPECT_EQ(run({"expireat", "k", "1"}), integer(1));
  EXPECT_EQ(run({"exists", "k"}), integer(0));
}

TEST_F(SimRedisKeysTest, TimeFollowsTheServerClock) {
  clock.advance_ms(234);  // 1'000'234 ms
  EXPECT_EQ(run({"time"}), bulks({"1000", "234000"}));
}

TEST_F(SimRedisKeysTest, SetsAreDeletedWhenEmpty) {
  EXPECT_EQ(run({"sadd", "s", "b", "a", "c", "a"}), integer(3));
  EXPECT_EQ(run({"smembers", "s"}), bulks({"a", "b", "c"}));
  EXPECT_EQ(run({"sismember", "s", "b"}), integer(1));
  EXPECT_EQ(run({"sismember", "s", "z"}), integer(0));
  EXPECT_EQ(run({"scard", "s"}), integer(3));
  EXPECT_EQ(run({"srem", "s", "a", "b", "c", "z"}), integer(3));
  EXPECT_EQ(run({"exists", "s"}), integer(0));
  EXPECT_EQ(run({"sadd", "i", "10", "2", "-5"}), integer(3));
  EXPECT_EQ(run({"smembers", "i"}), bulks({"-5", "2", "10"}));  // intset order
  EXPECT_EQ(run({"smembers", "nokey"}), arr({}));
  EXPECT_EQ(run({"set", "str", "v"}), ok());
  EXPECT_EQ(run({"sadd", "str", "x"}), error(kWrongType));
}

TEST_F(SimRedisKeysTest, HashesKeepInsertionOrder) {
  EXPECT_EQ(run({"hset", "h", "b", "1", "a", "2"}), integer(2));
  EXPECT_EQ(run({"hset", "h", "b", "3", "c", "4"}), integer(1));
  EXPECT_EQ(run({"hset", "h", "a"}), error("ERR wrong number of arguments for 'hset' command"));
  EXPECT_EQ(run({"hgetall", "h"}), bulks({"b", "3", "a", "2", "c", "4"}));
  EXPECT_EQ(run({"hget", "h", "a"}), bulk("2"));
  EXPECT_EQ(run({"hget", "h", "z"}), nil());
  EXPECT_EQ(run({"hincrby", "h", "a", "5"}), integer(7));
  EXPECT_EQ(run({"hincrby", "h", "n", "-5"}), integer(-5));
  EXPECT_EQ(run({"hset", "h", "s", "x"}), integer(1));
  EXPECT_EQ(run({"hincrby", "h", "s", "1"}), error("ERR hash value is not an integer"));
  EXPECT_EQ(run({"hexists", "h", "n"}), integer(1));
  EXPECT_EQ(run({"hdel", "h", "b", "a", "c", "n", "s", "zz"}), integer(5));
  EXPECT_EQ(run({"exists", "h"}), integer(0));
}

TEST_F(SimRedisKeysTest, SortedSetsOrderByScoreThenMember) {
  EXPECT_EQ(run({"zadd", "z", "1", "b", "1", "a", "0.1", "c", "inf", "d"}), integer(4));
  EXPECT_EQ(run({"zrange", "z", "0", "-1", "withscores"}),
            bulks({"c", "0.10000000000000001", "a", "1", "b", "1", "d", "inf"}));
  EXPECT_EQ(run({"zscore", "z", "c"}), bulk("0.10000000000000001"));
  EXPECT_EQ(run({"zadd", "z", "abc", "a"}), error("ERR value is not a valid float"));
  EXPECT_EQ(run({"zadd", "z", "1", "a", "2"}), error("ERR syntax error"));
  EXPECT_EQ(run({"zadd", "z", "nx", "xx", "1", "a"}),
            error("ERR XX and NX options at the same time are not compatible"));
  EXPECT_EQ(run({"zadd", "z", "xx", "5", "a", "5", "new"}), integer(0));
  EXPECT_EQ(run({"zadd", "z", "nx", "9", "a", "2", "e"}), integer(1));
  EXPECT_EQ(run({"zscore", "z", "a"}), bulk("5"));
  EXPECT_EQ(run({"zcount", "z", "(1", "5"}), integer(2));
  EXPECT_EQ(run({"zcount", "z", "x", "5"}), error("ERR min or max is not a float"));
  EXPECT_EQ(run({"zrangebyscore", "z", "-inf", "+inf", "limit", "1", "2"}), bulks({"b", "e"}));
  EXPECT_EQ(run({"zrangebyscore", "z", "1", "(5", "withscores"}), bulks({"b", "1", "e", "2"}));
  EXPECT_EQ(run({"zrange", "z", "-2", "-1"}), bulks({"a", "d"}));
  EXPECT_EQ(run({"zrem", "z", "d", "nope"}), integer(1));
  EXPECT_EQ(run({"zremrangebyscore", "z", "0", "2"}), integer(3));
  EXPECT_EQ(run({"zcard", "z"}), integer(1));
  EXPECT_EQ(run({"zremrangebyscore", "z", "-inf", "+inf"}), integer(1));
  EXPECT_EQ(run({"exists", "z"}), integer(0));
}

TEST(SimRedisDeterminism, SameCommandsGiveSameReplies) {
  const std::vector<redis::Command> commands = {
      {"set", "a", "1", "px", "50"},
      {"xadd", "s", "*", "f", "v"},
      {"xadd", "s", "*", "f", "w"},
      {"xgroup", "create", "s", "g", "0"},
      {"xreadgroup", "group", "g", "c", "streams", "s", ">"},
      {"eval", "return {math.random(100), redis.call('time')[2]}", "0"},
      {"get", "a"},
      {"xpending", "s", "g", "-", "+", "10"},
      {"keys", "*"}};
  std::vector<Reply> first;
  for (int round = 0; round < 2; round++) {
    ManualClock clock(5'000);
    SimRedis redis(clock);
    std::vector<Reply> replies;
    for (const auto& c : commands) {
      replies.push_back(redis.execute(c));
      clock.advance_ms(20);
    }
    if (round == 0)
      first = replies;
    else
      EXPECT_EQ(replies, first);
  }
  EXPECT_EQ(first[1], bulk("5020-0"));
  EXPECT_EQ(first[6], nil());
}

}  // namespace
}  // namespace seqby::sim
