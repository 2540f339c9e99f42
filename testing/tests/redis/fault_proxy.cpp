// FaultProxy (the chaos campaign's TCP fault proxy) against a real redis-server: it forwards
// untouched, names its upstream connections as the server sees them, delays without reordering,
// and after a drop or a reset a client never reads a reply that is not its own. Only outcomes
// are asserted, never durations.
#include "seqby/testing/fault_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "redis_server.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/redis_url.h"

namespace seqby::testing {
namespace {

constexpr int kWaitRoundsMax = 400;  // x 10 ms

redis::RedisConfig via(const FaultProxy& proxy, const RedisServer& server,
                       std::uint64_t timeout_ms = 2000) {
  auto config = redis::parse_redis_url(server.url());
  SEQBY_CHECK(config.ok());
  redis::RedisConfig out = config.value();
  out.host = "127.0.0.1";
  out.port = proxy.port();
  out.command_timeout_ms = timeout_ms;
  out.connect_timeout_ms = timeout_ms;
  return out;
}

// Waits (bounded) until `done` holds.
template <typename Done>
bool eventually(Done done) {
  for (int round = 0; round < kWaitRoundsMax; ++round) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(FaultProxy, ForwardsUntouchedAndNamesItsUpstreamConnections) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  FaultProxy proxy("127.0.0.1", server.port());
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  redis::BlockingRedis client(via(proxy, server));
  ASSERT_EQ(client.execute({"SET", "proxy:k", "v1"}).value(), redis::Reply::status("OK"));
  EXPECT_EQ(client.execute({"GET", "proxy:k"}).value(), redis::Reply::bulk("v1"));

  ASSERT_TRUE(eventually([&] { return proxy.upstream_local_ports().size() == 1; }));
  const std::string addr =
      "addr=127.0.0.1:" + std::to_string(proxy.upstream_local_ports().front()) + " ";
  auto list = redis::run_command_blocking(server.url(), {"CLIENT", "LIST"});
  ASSERT_TRUE(list.ok());
  EXPECT_NE(list.value().str.find(addr), std::string::npos) << list.value().str;
  EXPECT_GT(proxy.stats().bytes_forwarded, 0u);
  EXPECT_TRUE(redis::run_command_blocking(server.url(), {"DEL", "proxy:k"}).ok());
}

TEST(FaultProxy, DelayKeepsEveryReplyWithItsCommand) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  FaultProxy proxy("127.0.0.1", server.port());
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  redis::BlockingRedis client(via(proxy, server));
  ASSERT_TRUE(client.execute({"PING"}).ok());
  proxy.delay(50);
  EXPECT_EQ(proxy.mode(), ProxyMode::delay);
  for (int i = 0; i < 5; ++i) {
    const std::string value = "v" + std::to_string(i);
    ASSERT_EQ(client.execute({"SET", "proxy:d", value}).value(), redis::Reply::status("OK"));
    EXPECT_EQ(client.execute({"GET", "proxy:d"}).value(), redis::Reply::bulk(value));
  }
  EXPECT_GT(proxy.stats().chunks_delayed, 0u);
  proxy.pass();
  EXPECT_TRUE(redis::run_command_blocking(server.url(), {"DEL", "proxy:d"}).ok());
}

TEST(FaultProxy, DropTimesOutAndTheNextCommandsGetTheirOwnReplies) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  FaultProxy proxy("127.0.0.1", server.port());
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  redis::BlockingRedis client(via(proxy, server, 300));
  ASSERT_EQ(client.execute({"SET", "proxy:x", "before"}).value(), redis::Reply::status("OK"));
  proxy.drop();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the thread applies it
  auto lost = client.execute({"GET", "proxy:x"});
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.error().code, Errc::timeout);
  EXPECT_GT(proxy.stats().bytes_dropped, 0u);
  proxy.pass();
  // The next commands get their own replies, in order (the dropped GET's is never read).
  ASSERT_EQ(client.execute({"SET", "proxy:x", "after"}).value(), redis::Reply::status("OK"));
  EXPECT_EQ(client.execute({"GET", "proxy:x"}).value(), redis::Reply::bulk("after"));
  EXPECT_TRUE(redis::run_command_blocking(server.url(), {"DEL", "proxy:x"}).ok());
}

TEST(FaultProxy, AConnectionThatLostBytesIsResetWhenTheDropEnds) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  FaultProxy proxy("127.0.0.1", server.port());
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(proxy.port());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_TRUE(eventually([&] { return proxy.upstream_local_ports().size() == 1; }));
  proxy.drop();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string ping = "PING\r\n";
  ASSERT_EQ(::send(fd, ping.data(), ping.size(), MSG_NOSIGNAL), static_cast<ssize_t>(ping.size()));
  ASSERT_TRUE(eventually([&] { return proxy.stats().bytes_dropped > 0; }));
  proxy.pass();
  ASSERT_TRUE(eventually([&] { return proxy.stats().resets >= 1; }));
  // The client reads the end of the connection, never a reply to the PING that was dropped.
  char buffer[64];
  timeval wait{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
  EXPECT_LE(n, 0);
  ::close(fd);
}

TEST(FaultProxy, ResetAllClosesOpenConnectionsAndNewOnesWork) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  FaultProxy proxy("127.0.0.1", server.port());
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  redis::BlockingRedis client(via(proxy, server));
  ASSERT_TRUE(client.execute({"PING"}).ok());
  ASSERT_TRUE(eventually([&] { return proxy.upstream_local_ports().size() == 1; }));
  proxy.reset_all();
  ASSERT_TRUE(eventually([&] { return proxy.upstream_local_ports().empty(); }));
  EXPECT_EQ(proxy.stats().resets, 1u);
  auto broken = client.execute({"PING"});
  EXPECT_FALSE(broken.ok());
  EXPECT_EQ(client.execute({"PING"}).value(), redis::Reply::status("PONG"));  // reconnected
}

TEST(FaultProxy, RefusesClientsWhileTheUpstreamIsDown) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  FaultProxy proxy("127.0.0.1", 1);  // nothing listens on port 1
  ASSERT_TRUE(proxy.ok()) << proxy.error();
  redis::BlockingRedis client(via(proxy, server, 500));
  EXPECT_FALSE(client.execute({"PING"}).ok());
  EXPECT_TRUE(eventually([&] { return proxy.stats().upstream_failed >= 1; }));
}

}  // namespace
}  // namespace seqby::testing
