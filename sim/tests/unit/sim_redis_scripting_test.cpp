// SimRedis scripting: EVAL/EVALSHA/SCRIPT, Redis 7.0's reply conversions both ways, error
// replies with script and line, key expiry frozen while a script runs, no rollback, and the
// project's own embedded scripts running unchanged.
#include <gtest/gtest.h>

#include "seqby/broker/scripts.h"
#include "seqby/sim/sha1.h"
#include "seqby/sim/sim_redis.h"
#include "sim_redis_test_util.h"

namespace seqby::sim {
namespace {

using namespace testing;

class SimRedisScriptingTest : public ::testing::Test {
 protected:
  Reply run(redis::Command c) { return redis.execute(c); }
  Reply eval(const std::string& body) { return run({"eval", body, "0"}); }
  ManualClock clock{1'000'000};
  SimRedis redis{clock};
};

// A clock that moves forward on every read, to show a script reads it only once.
class RacingClock : public Clock {
 public:
  std::uint64_t now_ms() override { return now_ms_ += 1000; }

 private:
  std::uint64_t now_ms_ = 0;
};

TEST(Sha1, MatchesKnownDigests) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex(std::string(1000, 'a')), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST_F(SimRedisScriptingTest, LuaValuesBecomeRedisReplies) {
  EXPECT_EQ(eval("return {1, 'a', {ok='x'}, 2.9, true, false, 3}"),
            arr({integer(1), bulk("a"), status("x"), integer(2), integer(1), nil(), integer(3)}));
  EXPECT_EQ(eval("return {1, 2, nil, 4}"), arr({integer(1), integer(2)}));
  EXPECT_EQ(eval("return -3.9"), integer(-3));
  EXPECT_EQ(eval("return {err='FENCED'}"), error("FENCED"));
  EXPECT_EQ(eval("return redis.error_reply('FENCED')"), error("ERR FENCED"));
  EXPECT_EQ(eval("return redis.error_reply('FENCED lease lost')"), error("FENCED lease lost"));
  EXPECT_EQ(eval("return redis.status_reply('fine')"), status("fine"));
  EXPECT_EQ(eval("return nil"), nil());
  EXPECT_EQ(run({"eval", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "1", "k", "a", "b"}),
            arr({bulk("k"), bulk("a"), integer(1), integer(2)}));
}

TEST_F(SimRedisScriptingTest, RedisRepliesBecomeLuaValues) {
  run({"set", "k", "v"});
  EXPECT_EQ(eval("return type(redis.call('ping'))"), bulk("table"));
  EXPECT_EQ(eval("return redis.call('ping')"), status("PONG"));
  EXPECT_EQ(eval("return tostring(redis.call('get', 'nokey'))"), bulk("false"));
  EXPECT_EQ(eval("return redis.call('incr', 'n') + 1"), integer(2));
  EXPECT_EQ(eval("return redis.pcall('incr', 'k')['err']"),
            bulk("ERR value is not an integer or out of range"));
  EXPECT_EQ(eval("local ok, e = pcall(function() redis.call('incr', 'k') end) return e"),
            bulk("ERR value is not an integer or out of range"));
  EXPECT_EQ(eval("return redis.call('set', 'f', 0.1)"), ok());
  EXPECT_EQ(run({"get", "f"}), bulk("0.10000000000000001"));
  EXPECT_EQ(eval("return redis.pcall('get', {})"),
            error("ERR Lua redis lib command arguments must be strings or integers"));
}

TEST_F(SimRedisScriptingTest, ErrorsCarryScriptAndLine) {
  run({"set", "str", "v"});
  const std::string body = "local x = 1\nreturn redis.call('sadd', 'str', 'x')";
  EXPECT_EQ(eval(body),
            error(std::string(kWrongType) + " script: " + sha1_hex(body) + ", on @user_script:2."));
  EXPECT_EQ(eval("error('boom')"), error("ERR user_script:1: boom script: " +
                                         sha1_hex("error('boom')") + ", on @user_script:1."));
  EXPECT_EQ(eval("return redis.call('nocmd')"),
            error("ERR Unknown Redis command called from script script: " +
                  sha1_hex("return redis.call('nocmd')") + ", on @user_script:1."));
  EXPECT_EQ(eval("return redis.pcall('get', 'a', 'b')['err']"),
            bulk("ERR Wrong number of args calling Redis command from script"));
  EXPECT_EQ(eval("return redis.pcall('eval', 'return 1', '0')['err']"),
            bulk("ERR This Redis command is not allowed from script"));
  EXPECT_EQ(eval("return redis.pcall('xreadgroup', 'group', 'g', 'c', 'block', '0', 'streams', "
                 "'s', '>')['err']"),
            bulk("ERR xreadgroup command is not allowed with BLOCK option from scripts"));
  EXPECT_EQ(eval("return os"),
            error("ERR user_script:1: Script attempted to access nonexistent global variable 'os' "
                  "script: " +
                  sha1_hex("return os") + ", on @user_script:1."));
  EXPECT_EQ(eval("x = 5"), error("ERR user_script:1: Attempt to modify a readonly table script: " +
                                 sha1_hex("x = 5") + ", on @user_script:1."));
  EXPECT_EQ(eval("return 'x' +"),
            error("ERR Error compiling script (new function): user_script:1: unexpected symbol "
                  "near '<eof>'"));
  EXPECT_EQ(run({"eval", "return 1", "-1"}), error("ERR Number of keys can't be negative"));
  EXPECT_EQ(run({"eval", "return 1", "2", "a"}),
            error("ERR Number of keys can't be greater than number of args"));
}

TEST_F(SimRedisScriptingTest, ScriptCacheAndEvalsha) {
  EXPECT_EQ(run({"evalsha", "abc", "0"}), error("NOSCRIPT No matching script. Please use EVAL."));
  const std::string sha = sha1_hex("return ARGV[1]");
  EXPECT_EQ(run({"evalsha", sha, "0", "x"}),
            error("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(run({"script", "load", "return ARGV[1]"}), bulk(sha));
  EXPECT_EQ(run({"evalsha", sha, "0", "x"}), bulk("x"));
  EXPECT_EQ(run({"script", "exists", sha, "ffffffffffffffffffffffffffffffffffffffff"}),
            arr({integer(1), integer(0)}));
  EXPECT_EQ(run({"eval", "return 2", "0"}), integer(2));  // EVAL caches too
  EXPECT_EQ(redis.script_count(), 2u);
  EXPECT_EQ(run({"script", "flush"}), ok());
  EXPECT_EQ(redis.script_count(), 0u);
  EXPECT_EQ(run({"evalsha", sha, "0"}), error("NOSCRIPT No matching script. Please use EVAL."));
}

TEST_F(SimRedisScriptingTest, WritesBeforeAnErrorStay) {
  EXPECT_EQ(eval("redis.call('set', 'a', '1') redis.call('incr', 'nope', 'x') "
                 "redis.call('set', 'b', '2')")
                .is_error(),
            true);
  EXPECT_EQ(run({"get", "a"}), bulk("1"));
  EXPECT_EQ(run({"exists", "b"}), integer(0));
}

TEST(SimRedisScriptingClock, KeyExpiryIsFrozenWhileAScriptRuns) {
  RacingClock clock;
  SimRedis redis(clock);
  EXPECT_EQ(redis.execute({"set", "lease", "me", "px", "1500"}), status("OK"));  // at 1000
  const std::string body =
      "local a = redis.call('get', KEYS[1]) "
      "for i = 1, 50 do redis.call('ping') end "
      "return {a, redis.call('get', KEYS[1]), redis.call('time')[1]}";
  // The script starts at 2000 (< 2500): the lease holds for its whole run, TIME included.
  EXPECT_EQ(redis.execute({"eval", body, "1", "lease"}), arr({bulk("me"), bulk("me"), bulk("2")}));
  EXPECT_EQ(redis.execute({"get", "lease"}), nil());  // at 3000
}

TEST_F(SimRedisScriptingTest, MathRandomIsRedisRand48) {
  // Redis 7.0 starts rand48 from its default state and never reseeds it between scripts.
  EXPECT_EQ(eval("return tostring(math.random())"), bulk("0.39646477363839"));
  EXPECT_EQ(eval("return tostring(math.random())"), bulk("0.84048536971234"));
}

// redis.acl_check_cmd (Redis 7.0), which the publish scripts ask before their first write: the
// simulated server has no ACL, so a command it knows is permitted, one it does not know raises as
// on Redis, and nothing is run either way.
TEST_F(SimRedisScriptingTest, AclCheckCmdPermitsWhatTheServerKnowsAndRunsNothing) {
  EXPECT_EQ(eval("return redis.acl_check_cmd('SADD', 'k', 'm')"), integer(1));
  EXPECT_EQ(eval("return redis.acl_check_cmd('xgroup', 'create', 's', 'g', '$')"), integer(1));
  EXPECT_EQ(run({"exists", "k"}), integer(0));
  EXPECT_EQ(run({"exists", "s"}), integer(0));
  const std::string unknown = "return redis.acl_check_cmd('nocmd', 'k')";
  EXPECT_EQ(eval(unknown), error("ERR Invalid command passed to redis.acl_check_cmd() script: " +
                                 sha1_hex(unknown) + ", on @user_script:1."));
  const std::string none = "return redis.acl_check_cmd()";
  EXPECT_EQ(eval(none).is_error(), true);
}

TEST_F(SimRedisScriptingTest, PublishScriptRunsUnchanged) {
  const char* source = redis::script_source("publish");
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(run({"eval", source, "2", "orders:42", "orders:__partitions__", "42", "placed", "{}"}),
            bulk("1000000-0"));
  EXPECT_EQ(run({"xrange", "orders:42", "-", "+"}),
            arr({entry("1000000-0", {"type", "placed", "data", "{}"})}));
  EXPECT_EQ(run({"smembers", "orders:__partitions__"}), bulks({"42"}));
}

}  // namespace
}  // namespace seqby::sim
