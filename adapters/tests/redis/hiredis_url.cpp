// parse_redis_url: what a good URL yields, and the exact message for each kind of bad URL.
#include <gtest/gtest.h>

#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/redis_url.h"

namespace seqby::redis {
namespace {

TEST(RedisUrl, HostAndPort) {
  auto config = parse_redis_url("redis://127.0.0.1:6390");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config.value().host, "127.0.0.1");
  EXPECT_EQ(config.value().port, 6390);
  EXPECT_EQ(config.value().user, "");
  EXPECT_EQ(config.value().password, "");
  EXPECT_EQ(config.value().db, 0u);
}

TEST(RedisUrl, PortAndDbDefault) {
  auto config = parse_redis_url("redis://cache.internal");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config.value().host, "cache.internal");
  EXPECT_EQ(config.value().port, 6379);
  EXPECT_EQ(config.value().db, 0u);
  auto slash = parse_redis_url("redis://cache.internal:7000/");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(slash.value().db, 0u);
}

TEST(RedisUrl, UserPasswordAndDb) {
  auto config = parse_redis_url("redis://alice:s3cret@10.0.0.5:7001/3");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config.value().user, "alice");
  EXPECT_EQ(config.value().password, "s3cret");
  EXPECT_EQ(config.value().host, "10.0.0.5");
  EXPECT_EQ(config.value().port, 7001);
  EXPECT_EQ(config.value().db, 3u);
}

TEST(RedisUrl, PasswordAloneAndEscapes) {
  auto config = parse_redis_url("redis://:p%40ss%3Aword@localhost:6379");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config.value().user, "");
  EXPECT_EQ(config.value().password, "p@ss:word");
}

TEST(RedisUrl, BracketedIpv6Host) {
  auto config = parse_redis_url("redis://[::1]:6380/2");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config.value().host, "::1");
  EXPECT_EQ(config.value().port, 6380);
  EXPECT_EQ(config.value().db, 2u);
}

TEST(RedisUrl, HiredisLinkForwardsToTheParser) {
  auto config = HiredisLink::parse_redis_url("redis://h:1");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config.value().port, 1);
}

void expect_invalid(std::string_view url, const std::string& message) {
  auto config = parse_redis_url(url);
  ASSERT_FALSE(config.ok()) << url;
  EXPECT_EQ(config.code(), Errc::invalid);
  EXPECT_EQ(config.error().message, message);
}

TEST(RedisUrl, BadUrlsNameThePart) {
  expect_invalid("http://h:1", "invalid redis URL \"http://h:1\": scheme must be \"redis://\"");
  expect_invalid("h:6379", "invalid redis URL \"h:6379\": scheme must be \"redis://\"");
  expect_invalid("rediss://h:1",
                 "invalid redis URL \"rediss://h:1\": TLS (rediss://) is not supported by hiredis "
                 "0.14");
  expect_invalid("redis://", "invalid redis URL \"redis://\": host is empty");
  expect_invalid("redis://:6379", "invalid redis URL \"redis://:6379\": host is empty");
  expect_invalid("redis://h:",
                 "invalid redis URL \"redis://h:\": port \"\" is not a number in "
                 "1..65535");
  expect_invalid("redis://h:http",
                 "invalid redis URL \"redis://h:http\": port \"http\" is not a number in 1..65535");
  expect_invalid("redis://h:0",
                 "invalid redis URL \"redis://h:0\": port \"0\" is not a number in 1..65535");
  expect_invalid("redis://h:65536",
                 "invalid redis URL \"redis://h:65536\": port \"65536\" is not a number in "
                 "1..65535");
  expect_invalid("redis://h:1/x",
                 "invalid redis URL \"redis://h:1/x\": db \"x\" is not a number in 0..2147483647");
  expect_invalid("redis://h:1/1/2",
                 "invalid redis URL \"redis://h:1/1/2\": db \"1/2\" is not a number in "
                 "0..2147483647");
  expect_invalid("redis://h:1?db=2",
                 "invalid redis URL \"redis://h:1?db=2\": query and fragment are not supported");
  expect_invalid("redis://alice@h:1",
                 "invalid redis URL \"redis://alice@h:1\": user info must be "
                 "\"user:password\" or \":password\"");
  expect_invalid("redis://alice:@h:1",
                 "invalid redis URL \"redis://alice:***@h:1\": password is "
                 "empty");
  expect_invalid("redis://[::1:6379",
                 "invalid redis URL \"redis://[::1:6379\": host has an unclosed '['");
}

TEST(RedisUrl, MessagesNeverShowThePassword) {
  expect_invalid("redis://alice:hunter2@h:port",
                 "invalid redis URL \"redis://alice:***@h:port\": port \"port\" is not a number "
                 "in 1..65535");
  expect_invalid("redis://:p%zz@h:1",
                 "invalid redis URL \"redis://:***@h:1\": password has a bad %-escape");
}

TEST(RedisUrl, RedactedUrlHidesThePassword) {
  RedisConfig config;
  config.host = "h";
  config.port = 7000;
  config.user = "alice";
  config.password = "hunter2";
  config.db = 4;
  EXPECT_EQ(redacted_url(config), "redis://alice:***@h:7000/4");
  config.user.clear();
  config.password.clear();
  config.db = 0;
  EXPECT_EQ(redacted_url(config), "redis://h:7000");
}

}  // namespace
}  // namespace seqby::redis
