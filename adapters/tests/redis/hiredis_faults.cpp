// HiredisLink when things go wrong: a server that stops answering (CLIENT PAUSE, SIGSTOP), a
// server killed and restarted on the same port, refused connections and backoff, AUTH and ACL
// users, a link destroyed with commands outstanding. Only outcomes are asserted, never durations.
#include <gtest/gtest.h>

#include <memory>

#include "redis_server.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis {
namespace {

constexpr int kRetryAttemptsMax = 400;  // with kRetrySleepMs between them: about 20 s at most
constexpr std::uint64_t kRetrySleepMs = 50;

RedisConfig config_of(const testing::RedisServer& server) {
  auto config = parse_redis_url(server.url());
  SEQBY_CHECK(config.ok());
  RedisConfig out = config.value();
  out.command_timeout_ms = 300;
  out.connect_timeout_ms = 300;
  out.reconnect_backoff_min_ms = 10;
  out.reconnect_backoff_max_ms = 100;
  return out;
}

testing::RedisServerOptions own_server(std::string password = "") {
  testing::RedisServerOptions options;
  options.own = true;  // these tests stop, kill or configure the server: never the shared one
  options.password = std::move(password);
  return options;
}

struct Retried {
  std::vector<Errc> errors;  // the codes of the failed attempts, in order
  Result<Reply> last = make_error(Errc::closed, "never tried");
};

// Repeats `command` until it gets a reply (or the attempts run out).
Task<Retried> retry_until_reply(Runtime& runtime, RedisLink& link, Command command) {
  Retried out;
  for (int attempt = 0; attempt < kRetryAttemptsMax; ++attempt) {
    out.last = co_await link.execute(command);
    if (out.last.ok()) break;
    out.errors.push_back(out.last.code());
    co_await runtime.sleep_ms(kRetrySleepMs);
  }
  co_return out;
}

TEST(HiredisFaults, PausedServerTimesOutThenTheLinkRecovers) {
  testing::RedisServer server(own_server());
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  const RedisConfig config = config_of(server);
  HiredisLink link(runtime, config);
  ASSERT_EQ(runtime.block_on(link.execute({"SET", "k", "v"})).value(), Reply::status("OK"));

  BlockingRedis admin(config);
  ASSERT_EQ(admin.execute({"CLIENT", "PAUSE", "1500", "ALL"}).value(), Reply::status("OK"));
  Result<Reply> paused = runtime.block_on(link.execute({"GET", "k"}));
  ASSERT_FALSE(paused.ok());
  EXPECT_EQ(paused.code(), Errc::timeout);
  EXPECT_EQ(paused.error().message,
            "command GET on " + redacted_url(config) + ": no reply within 300 ms");
  EXPECT_EQ(link.stats().timeouts, 1u);

  Retried after = runtime.block_on(retry_until_reply(runtime, link, {"GET", "k"}));
  ASSERT_TRUE(after.last.ok()) << after.last.error().message;
  EXPECT_EQ(after.last.value(), Reply::bulk("v"));
  EXPECT_GE(link.stats().connects, 2u);  // the timed-out connection was recycled
}

TEST(HiredisFaults, OnATimeoutTheOtherCommandsInFlightAreClosed) {
  testing::RedisServer server(own_server());
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  const RedisConfig config = config_of(server);
  HiredisLink link(runtime, config);
  ASSERT_TRUE(runtime.block_on(link.execute({"PING"})).ok());
  BlockingRedis admin(config);
  ASSERT_EQ(admin.execute({"CLIENT", "PAUSE", "1000", "ALL"}).value(), Reply::status("OK"));

  std::vector<Errc> codes(3, Errc::protocol);
  int finished = 0;
  for (int i = 0; i < 3; ++i) {
    runtime.spawn("command", [](RedisLink& l, Errc* code, int* count) -> Task<void> {
      Command command{"INCR", "n"};  // not inline: g++ 12 rejects braced lists in co_await
      Result<Reply> reply = co_await l.execute(std::move(command));
      *code = reply.ok() ? Errc::protocol : reply.code();
      ++*count;
    }(link, &codes[i], &finished));
  }
  runtime.block_on([](Runtime& rt, int* count) -> Task<void> {
    while (*count < 3) co_await rt.sleep_ms(5);
  }(runtime, &finished));
  // The first deadline to pass is the first command's; the recycle closes the other two.
  EXPECT_EQ(codes, (std::vector<Errc>{Errc::timeout, Errc::closed, Errc::closed}));
}

TEST(HiredisFaults, BlockingRedisTimesOutOnAPausedServerThenReconnects) {
  testing::RedisServer server(own_server());
  ASSERT_TRUE(server.ok()) << server.error();
  const RedisConfig config = config_of(server);
  BlockingRedis redis(config);
  ASSERT_EQ(redis.execute({"SET", "k", "v"}).value(), Reply::status("OK"));
  BlockingRedis admin(config);
  ASSERT_EQ(admin.execute({"CLIENT", "PAUSE", "1000", "ALL"}).value(), Reply::status("OK"));
  Result<Reply> paused = redis.execute({"GET", "k"});
  ASSERT_FALSE(paused.ok());
  EXPECT_EQ(paused.code(), Errc::timeout);
  EXPECT_EQ(paused.error().message,
            "command GET: no reply in time (Resource temporarily unavailable)");
  EXPECT_FALSE(redis.connected());  // the error is sticky: the context was dropped
  Result<Reply> after = make_error(Errc::closed, "never tried");
  for (int attempt = 0; attempt < kRetryAttemptsMax && !after.ok(); ++attempt) {
    after = redis.execute({"GET", "k"});
  }
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after.value(), Reply::bulk("v"));
}

TEST(HiredisFaults, StoppedServerTimesOutAndContinuedServerServesAgain) {
  testing::RedisServer server(own_server());
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  HiredisLink link(runtime, config_of(server));
  ASSERT_EQ(runtime.block_on(link.execute({"SET", "k", "v"})).value(), Reply::status("OK"));

  ASSERT_TRUE(testing::RedisServer::stop_process(server.pid()));
  Result<Reply> stalled = runtime.block_on(link.execute({"GET", "k"}));
  ASSERT_FALSE(stalled.ok());
  EXPECT_EQ(stalled.code(), Errc::timeout);
  // While it stays stopped, reconnecting fails too (the kernel accepts, nobody answers).
  Result<Reply> still = runtime.block_on(link.execute({"GET", "k"}));
  ASSERT_FALSE(still.ok());
  EXPECT_EQ(still.code(), Errc::closed);

  ASSERT_TRUE(testing::RedisServer::continue_process(server.pid()));
  Retried after = runtime.block_on(retry_until_reply(runtime, link, {"GET", "k"}));
  ASSERT_TRUE(after.last.ok()) << after.last.error().message;
  EXPECT_EQ(after.last.value(), Reply::bulk("v"));
}

TEST(HiredisFaults, KilledServerGivesClosedAndARestartedOneIsReconnected) {
  testing::RedisServer server(own_server());
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  HiredisLink link(runtime, config_of(server));
  ASSERT_EQ(runtime.block_on(link.execute({"SET", "k", "v"})).value(), Reply::status("OK"));

  server.kill();
  Result<Reply> dead = runtime.block_on(link.execute({"GET", "k"}));
  ASSERT_FALSE(dead.ok());
  EXPECT_EQ(dead.code(), Errc::closed);
  Result<Reply> refused = runtime.block_on(link.execute({"GET", "k"}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::closed);

  ASSERT_TRUE(server.restart()) << server.error();
  Retried after = runtime.block_on(retry_until_reply(runtime, link, {"GET", "k"}));
  ASSERT_TRUE(after.last.ok()) << after.last.error().message;
  EXPECT_EQ(after.last.value(), Reply::nil());  // a new server without persistence
  for (Errc code : after.errors) EXPECT_EQ(code, Errc::closed);
}

TEST(HiredisFaults, RefusedConnectFailsAndBackoffFailsFastWithoutAnotherAttempt) {
  std::uint16_t port = 0;
  {
    testing::RedisServer gone(own_server());
    ASSERT_TRUE(gone.ok()) << gone.error();
    port = gone.port();
  }  // nothing listens on `port` any more
  RealRuntime runtime;
  RedisConfig config;
  config.port = port;
  config.reconnect_backoff_min_ms = 600000;  // the second command falls inside the backoff
  config.reconnect_backoff_max_ms = 600000;
  HiredisLink link(runtime, config);
  Result<Reply> first = runtime.block_on(link.execute({"PING"}));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.code(), Errc::closed);
  EXPECT_EQ(first.error().message, "connect to redis://127.0.0.1:" + std::to_string(port) +
                                       ": I/O error (Connection refused)");
  Result<Reply> second = runtime.block_on(link.execute({"PING"}));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.code(), Errc::closed);
  EXPECT_NE(second.error().message.find("(next attempt in "), std::string::npos)
      << second.error().message;
  EXPECT_EQ(link.stats().connect_attempts, 1u);
  EXPECT_FALSE(link.connected());
}

TEST(HiredisFaults, AuthWithRequirepass) {
  testing::RedisServer server(own_server("s3cret"));
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  const RedisConfig good = config_of(server);
  ASSERT_EQ(good.password, "s3cret");
  HiredisLink link(runtime, good);
  EXPECT_EQ(runtime.block_on(link.execute({"PING"})).value(), Reply::status("PONG"));

  RedisConfig wrong = good;
  wrong.password = "guess";
  const std::string wrong_text = "connect to " + redacted_url(wrong) +
                                 ": AUTH refused: WRONGPASS invalid username-password pair or "
                                 "user is disabled.";
  HiredisLink wrong_link(runtime, wrong);
  Result<Reply> refused = runtime.block_on(wrong_link.execute({"PING"}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::closed);
  EXPECT_EQ(refused.error().message, wrong_text);
  BlockingRedis wrong_blocking(wrong);
  Result<Reply> blocking_refused = wrong_blocking.execute({"PING"});
  ASSERT_FALSE(blocking_refused.ok());
  EXPECT_EQ(blocking_refused.error().message, wrong_text);

  RedisConfig none = good;
  none.password.clear();
  HiredisLink anonymous(runtime, none);
  Result<Reply> noauth = runtime.block_on(anonymous.execute({"PING"}));
  ASSERT_FALSE(noauth.ok());
  EXPECT_EQ(noauth.error().message,
            "connect to " + redacted_url(none) + ": PING refused: NOAUTH Authentication required.");
}

TEST(HiredisFaults, AuthAsAnAclUser) {
  testing::RedisServer server(own_server());
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  RedisConfig admin_config = config_of(server);
  BlockingRedis admin(admin_config);
  ASSERT_EQ(admin.execute({"ACL", "SETUSER", "worker", "on", ">pw", "~*", "+@all"}).value(),
            Reply::status("OK"));
  auto url = parse_redis_url("redis://worker:pw@127.0.0.1:" + std::to_string(server.port()) + "/2");
  ASSERT_TRUE(url.ok());
  HiredisLink link(runtime, url.value());
  EXPECT_EQ(runtime.block_on(link.execute({"ACL", "WHOAMI"})).value(), Reply::bulk("worker"));
  EXPECT_EQ(runtime.block_on(link.execute({"SET", "k", "in-db-2"})).value(), Reply::status("OK"));
  EXPECT_EQ(admin.execute({"SELECT", "2"}).value(), Reply::status("OK"));
  EXPECT_EQ(admin.execute({"GET", "k"}).value(), Reply::bulk("in-db-2"));
}

TEST(HiredisFaults, DisconnectOnRequestReconnectsOnTheNextCommand) {
  testing::RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  HiredisLink link(runtime, config_of(server));
  ASSERT_TRUE(runtime.block_on(link.execute({"PING"})).ok());
  EXPECT_TRUE(link.connected());
  link.disconnect();
  EXPECT_FALSE(link.connected());
  EXPECT_EQ(runtime.block_on(link.execute({"PING"})).value(), Reply::status("PONG"));
  EXPECT_EQ(link.stats().connects, 2u);
}

TEST(HiredisFaults, DestroyingTheLinkClosesOutstandingCommands) {
  testing::RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RealRuntime runtime;
  auto link = std::make_unique<HiredisLink>(runtime, config_of(server));
  std::vector<std::string> messages;
  for (int i = 0; i < 2; ++i) {
    runtime.spawn("command", [](RedisLink& l, std::vector<std::string>* out) -> Task<void> {
      Command command{"PING"};
      Result<Reply> reply = co_await l.execute(std::move(command));
      out->push_back(
          reply.ok() ? "ok" : std::string(errc_name(reply.code())) + ": " + reply.error().message);
    }(*link, &messages));
  }
  // Start both tasks (their commands wait for the connection), then destroy the link.
  runtime.block_on([](Runtime& rt) -> Task<void> { co_await rt.sleep_ms(0); }(runtime));
  const std::string url = redacted_url(link->config());
  link.reset();
  runtime.block_on([](Runtime& rt) -> Task<void> { co_await rt.sleep_ms(0); }(runtime));
  const std::string expected = "closed: the link to " + url + " was destroyed";
  EXPECT_EQ(messages, (std::vector<std::string>{expected, expected}));
}

}  // namespace
}  // namespace seqby::redis
