// Every reply kind through HiredisLink (async, on a RealRuntime) and BlockingRedis (sync) from a
// real redis-server: both must produce the same Reply values the simulated Redis produces.
#include <gtest/gtest.h>

#include <memory>

#include "redis_server.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis {
namespace {

class HiredisReplies : public ::testing::Test {
 protected:
  // An own server: these tests FLUSHALL and SCRIPT FLUSH, which a shared server must not see.
  static void SetUpTestSuite() {
    testing::RedisServerOptions options;
    options.own = true;
    server_ = new testing::RedisServer(options);
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(server_->ok()) << server_->error();
    ASSERT_TRUE(server_->flushall());
    auto config = parse_redis_url(server_->url());
    ASSERT_TRUE(config.ok());
    config_ = config.value();
    link_ = std::make_unique<HiredisLink>(runtime_, config_);
  }
  void TearDown() override { link_.reset(); }

  // The reply through the async link, checking the sync client gets the very same.
  Reply run(const Command& command) {
    Result<Reply> reply = runtime_.block_on(link_->execute(command));
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? reply.value() : Reply::error("transport failure");
  }

  static testing::RedisServer* server_;
  RedisConfig config_;
  RealRuntime runtime_;
  std::unique_ptr<HiredisLink> link_;
};

testing::RedisServer* HiredisReplies::server_ = nullptr;

TEST_F(HiredisReplies, StatusBulkNilInteger) {
  EXPECT_EQ(run({"SET", "k", "v"}), Reply::status("OK"));
  EXPECT_EQ(run({"GET", "k"}), Reply::bulk("v"));
  EXPECT_EQ(run({"GET", "missing"}), Reply::nil());
  EXPECT_EQ(run({"INCR", "n"}), Reply::of_int(1));
  EXPECT_EQ(run({"INCRBY", "n", "-5"}), Reply::of_int(-4));
  EXPECT_EQ(run({"SET", "k", "v", "NX"}), Reply::nil());
}

TEST_F(HiredisReplies, BulkStringsAreBinarySafe) {
  const std::string value("a\0b\r\nc", 6);
  EXPECT_EQ(run({"SET", "bin", value}), Reply::status("OK"));
  EXPECT_EQ(run({"GET", "bin"}), Reply::bulk(value));
  EXPECT_EQ(run({"SET", "empty", ""}), Reply::status("OK"));
  EXPECT_EQ(run({"GET", "empty"}), Reply::bulk(""));
}

TEST_F(HiredisReplies, Arrays) {
  EXPECT_EQ(run({"RPUSH", "list", "a", "b", "c"}), Reply::of_int(3));
  EXPECT_EQ(run({"LRANGE", "list", "0", "-1"}),
            Reply::array({Reply::bulk("a"), Reply::bulk("b"), Reply::bulk("c")}));
  EXPECT_EQ(run({"LRANGE", "nothing", "0", "-1"}), Reply::array({}));
  EXPECT_EQ(run({"MGET", "list", "missing"}).kind, Reply::Kind::array);
}

TEST_F(HiredisReplies, NestedArraysFromStreams) {
  EXPECT_EQ(run({"XADD", "s", "1-1", "type", "t", "data", "{}"}), Reply::bulk("1-1"));
  EXPECT_EQ(run({"XRANGE", "s", "-", "+"}),
            Reply::array({Reply::array(
                {Reply::bulk("1-1"), Reply::array({Reply::bulk("type"), Reply::bulk("t"),
                                                   Reply::bulk("data"), Reply::bulk("{}")})})}));
}

TEST_F(HiredisReplies, ErrorRepliesAreSuccessfulResults) {
  EXPECT_EQ(run({"SET", "k", "text"}), Reply::status("OK"));
  const Reply reply = run({"INCR", "k"});
  EXPECT_EQ(reply, Reply::error("ERR value is not an integer or out of range"));
  EXPECT_TRUE(reply.is_error_with("ERR"));
  EXPECT_TRUE(run({"NOSUCHCOMMAND"}).is_error_with("ERR unknown command"));
  EXPECT_TRUE(
      run({"XREADGROUP", "GROUP", "g", "c", "STREAMS", "nostream", ">"}).is_error_with("NOGROUP"));
}

TEST_F(HiredisReplies, EvalConvertsLuaValues) {
  EXPECT_EQ(run({"EVAL", "return 7", "0"}), Reply::of_int(7));
  EXPECT_EQ(run({"EVAL", "return false", "0"}), Reply::nil());
  EXPECT_EQ(run({"EVAL", "return {ok='FINE'}", "0"}), Reply::status("FINE"));
  EXPECT_EQ(run({"EVAL", "return {err='FENCED stale generation'}", "0"}),
            Reply::error("FENCED stale generation"));
  EXPECT_EQ(run({"EVAL", "return {KEYS[1], ARGV[1], {1, 'x'}}", "1", "key", "arg"}),
            Reply::array({Reply::bulk("key"), Reply::bulk("arg"),
                          Reply::array({Reply::of_int(1), Reply::bulk("x")})}));
}

TEST_F(HiredisReplies, EvalshaReportsNoscriptUntilTheScriptIsLoaded) {
  const std::string script = "return redis.call('INCR', KEYS[1])";
  ASSERT_EQ(run({"SCRIPT", "FLUSH"}), Reply::status("OK"));
  const Reply sha = run({"SCRIPT", "LOAD", script});
  ASSERT_EQ(sha.kind, Reply::Kind::bulk);
  ASSERT_EQ(run({"SCRIPT", "FLUSH"}), Reply::status("OK"));
  EXPECT_TRUE(run({"EVALSHA", sha.str, "1", "counter"}).is_error_with("NOSCRIPT"));
  EXPECT_EQ(run({"SCRIPT", "LOAD", script}), sha);
  EXPECT_EQ(run({"EVALSHA", sha.str, "1", "counter"}), Reply::of_int(1));
  EXPECT_EQ(run({"EVALSHA", sha.str, "1", "counter"}), Reply::of_int(2));
}

TEST_F(HiredisReplies, BlockingRedisGivesTheSameReplies) {
  const std::vector<Command> commands = {{"SET", "k", "v"},
                                         {"GET", "k"},
                                         {"GET", "missing"},
                                         {"INCR", "n"},
                                         {"INCR", "k"},
                                         {"RPUSH", "l", "a"},
                                         {"LRANGE", "l", "0", "-1"},
                                         {"EVAL", "return {1, {2, 'three'}}", "0"}};
  BlockingRedis blocking(config_);
  std::vector<Reply> sync_replies;
  for (const Command& command : commands) {
    Result<Reply> reply = blocking.execute(command);
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    sync_replies.push_back(reply.value());
  }
  ASSERT_TRUE(server_->flushall());
  std::vector<Reply> async_replies;
  for (const Command& command : commands) async_replies.push_back(run(command));
  EXPECT_EQ(async_replies, sync_replies);
  EXPECT_EQ(sync_replies[4], Reply::error("ERR value is not an integer or out of range"));
}

TEST_F(HiredisReplies, SelectsTheDatabaseOfTheUrl) {
  RedisConfig db5 = config_;
  db5.db = 5;
  HiredisLink link5(runtime_, db5);
  ASSERT_EQ(runtime_.block_on(link5.execute({"SET", "where", "five"})).value(),
            Reply::status("OK"));
  EXPECT_EQ(run({"GET", "where"}), Reply::nil());
  EXPECT_EQ(run({"SELECT", "5"}), Reply::status("OK"));
  EXPECT_EQ(run({"GET", "where"}), Reply::bulk("five"));
  BlockingRedis blocking5(db5);
  EXPECT_EQ(blocking5.execute({"GET", "where"}).value(), Reply::bulk("five"));
}

TEST_F(HiredisReplies, EmptyCommandIsInvalid) {
  Result<Reply> reply = runtime_.block_on(link_->execute({}));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.code(), Errc::invalid);
  EXPECT_EQ(reply.error().message, "empty command");
}

}  // namespace
}  // namespace seqby::redis
