// The one place hiredis errors become Errc values, and the shape checks of reply conversion,
// fed with hand-built redisReply values (no server needed).
#include <gtest/gtest.h>

#include <cerrno>

#include "../../src/hiredis/hiredis_common.h"

namespace seqby::redis::hiredis {
namespace {

redisReply make(int type) {
  redisReply r{};
  r.type = type;
  return r;
}

TEST(HiredisConvert, ErrorCodesMapInOnePlace) {
  const Error timeout =
      error_from_hiredis(REDIS_ERR_IO, "Resource temporarily unavailable", EAGAIN, "command GET");
  EXPECT_EQ(timeout.code, Errc::timeout);
  EXPECT_EQ(timeout.message, "command GET: no reply in time (Resource temporarily unavailable)");
  const Error reset = error_from_hiredis(REDIS_ERR_IO, "Connection reset by peer", ECONNRESET, "x");
  EXPECT_EQ(reset.code, Errc::closed);
  EXPECT_EQ(reset.message, "x: I/O error (Connection reset by peer)");
  const Error eof = error_from_hiredis(REDIS_ERR_EOF, "Server closed the connection", 0, "x");
  EXPECT_EQ(eof.code, Errc::closed);
  EXPECT_EQ(eof.message, "x: server closed the connection (Server closed the connection)");
  const Error protocol = error_from_hiredis(REDIS_ERR_PROTOCOL, "Protocol error", 0, "x");
  EXPECT_EQ(protocol.code, Errc::closed);
  EXPECT_EQ(protocol.message, "x: protocol error (Protocol error)");
  const Error other = error_from_hiredis(REDIS_ERR_OTHER, "Name or service not known", 0, "x");
  EXPECT_EQ(other.code, Errc::closed);
  EXPECT_EQ(other.message, "x: Name or service not known");
}

TEST(HiredisConvert, WellFormedReplies) {
  char text[] = "hello";
  redisReply bulk = make(REDIS_REPLY_STRING);
  bulk.str = text;
  bulk.len = 5;
  redisReply integer = make(REDIS_REPLY_INTEGER);
  integer.integer = -42;
  redisReply nil = make(REDIS_REPLY_NIL);
  redisReply* elements[] = {&bulk, &integer, &nil};
  redisReply array = make(REDIS_REPLY_ARRAY);
  array.element = elements;
  array.elements = 3;
  Result<Reply> converted = convert_reply(&array);
  ASSERT_TRUE(converted.ok());
  EXPECT_EQ(converted.value(),
            Reply::array({Reply::bulk("hello"), Reply::of_int(-42), Reply::nil()}));
}

TEST(HiredisConvert, MalformedRepliesAreProtocolErrors) {
  redisReply unknown = make(99);
  EXPECT_EQ(convert_reply(&unknown).error().message, "reply of unknown type 99");
  redisReply textless = make(REDIS_REPLY_STATUS);
  textless.len = 3;
  EXPECT_EQ(convert_reply(&textless).error().message, "string reply without its text");
  redisReply hollow = make(REDIS_REPLY_ARRAY);
  hollow.elements = 2;
  EXPECT_EQ(convert_reply(&hollow).error().message, "array reply without its elements");
  redisReply* holes[] = {nullptr};
  redisReply with_hole = make(REDIS_REPLY_ARRAY);
  with_hole.element = holes;
  with_hole.elements = 1;
  EXPECT_EQ(convert_reply(&with_hole).code(), Errc::protocol);
  EXPECT_EQ(convert_reply(nullptr).error().message, "missing reply");
}

TEST(HiredisConvert, NestingIsBounded) {
  std::vector<redisReply> levels(40, make(REDIS_REPLY_ARRAY));
  std::vector<redisReply*> links(40);
  for (std::size_t i = 0; i + 1 < levels.size(); ++i) {
    links[i] = &levels[i + 1];
    levels[i].element = &links[i];
    levels[i].elements = 1;
  }
  Result<Reply> deep = convert_reply(&levels[0]);
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.code(), Errc::protocol);
  EXPECT_EQ(deep.error().message, "reply nested deeper than 32");
}

TEST(HiredisConvert, HandshakeCommands) {
  RedisConfig config;
  EXPECT_TRUE(handshake_commands(config).empty());
  config.password = "pw";
  config.db = 3;
  EXPECT_EQ(handshake_commands(config), (std::vector<Command>{{"AUTH", "pw"}, {"SELECT", "3"}}));
  config.user = "worker";
  EXPECT_EQ(handshake_commands(config).front(), (Command{"AUTH", "worker", "pw"}));
}

}  // namespace
}  // namespace seqby::redis::hiredis
