// The server faults through a ServerGate, as Redis 7.0 behaves: CLIENT PAUSE queues every
// command and runs them in order when it ends (leases past their TTL are gone to them), CLIENT
// KILL loses exactly one client's in-flight replies, a restart drops every connection, refuses
// commands while down and comes back with its data (AOF) or empty, and with no scripts;
// SCRIPT FLUSH empties only the script cache. The exempt publisher connection only waits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/server_gate.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"

namespace seqby::sim {
namespace {

struct Outcome {
  std::string text;  // "reply:<redis-cli form>" or "error:<errc>"
  std::uint64_t at_ms = 0;
};

Task<void> call(redis::RedisLink& link, Runtime& rt, redis::Command cmd,
                std::vector<Outcome>* out) {
  Result<redis::Reply> r = co_await link.execute(std::move(cmd));
  out->push_back(Outcome{
      r.ok() ? "reply:" + redis::to_string(r.value()) : std::string("error:") + errc_name(r.code()),
      rt.clock().now_ms()});
}

std::vector<std::string> texts(const std::vector<Outcome>& out) {
  std::vector<std::string> t;
  for (const auto& o : out) t.push_back(o.text);
  return t;
}

// Every command a server ran, in order ("client:COMMAND KEY").
class LoggingServer final : public SimServer {
 public:
  LoggingServer(SimRedis& redis, std::string name, std::vector<std::string>* log)
      : redis_(redis), name_(std::move(name)), log_(log) {}
  redis::Reply execute(const redis::Command& c) override {
    log_->push_back(name_ + ":" + c[0] + (c.size() > 1 ? " " + c[1] : ""));
    return redis_.execute(c);
  }
  void refused(const redis::Command&) override { ++refused_count; }
  int refused_count = 0;

 private:
  SimRedis& redis_;
  std::string name_;
  std::vector<std::string>* log_;
};

SimLinkOptions one_ms(std::uint64_t timeout_ms = 1000) {
  return SimLinkOptions{1, 1, 1, 1, timeout_ms};
}

struct GatedWorld {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerGate gate{scheduler, redis};
  std::vector<std::string> log;
  SimRuntime a{scheduler, "a"}, b{scheduler, "b"}, pub{scheduler, "publisher"};
  LoggingServer server_a{redis, "a", &log}, server_b{redis, "b", &log},
      server_pub{redis, "pub", &log};
  SimRedisLink link_a{a, server_a, Rng(1), one_ms(), {&gate, gate.connect("a", false)}};
  SimRedisLink link_b{b, server_b, Rng(2), one_ms(), {&gate, gate.connect("b", false)}};
  SimRedisLink link_pub{
      pub, server_pub, Rng(3), one_ms(), {&gate, gate.connect("publisher", true)}};
};

TEST(RuntimeServerGate, WithoutFaultsTheLinkBehavesAsWithoutAGate) {
  GatedWorld s;
  std::vector<Outcome> out;
  s.a.spawn("w", call(s.link_a, s.a, {"SET", "k", "v"}, &out));
  s.a.spawn("w", call(s.link_a, s.a, {"GET", "k"}, &out));
  s.scheduler.run_until(100);
  EXPECT_EQ(texts(out), (std::vector<std::string>{"reply:OK", "reply:\"v\""}));
  EXPECT_EQ(out[1].at_ms, 2u);
}

TEST(RuntimeServerGate, ClientPauseQueuesEveryCommandAndRunsThemInOrderWhenItEnds) {
  GatedWorld s;
  std::vector<Outcome> out_a, out_b, out_pub;
  ASSERT_EQ(redis::to_string(s.redis.execute({"SET", "lease", "a:1", "PX", "3000"})), "OK");
  ASSERT_TRUE(s.gate.pause_clients(5000));  // at 0, past the lease's 3000 ms
  // b blocks first, then the publisher, then a (twice), then b again: Redis runs b's whole
  // buffer, then the publisher's, then a's.
  s.scheduler.call_at(100, [&] { s.b.spawn("w", call(s.link_b, s.b, {"INCR", "n"}, &out_b)); });
  s.scheduler.call_at(200, [&] {
    s.pub.spawn("w", call(s.link_pub, s.pub, {"INCR", "published"}, &out_pub));
  });
  s.scheduler.call_at(4200, [&] { s.a.spawn("w", call(s.link_a, s.a, {"GET", "lease"}, &out_a)); });
  s.scheduler.call_at(4500, [&] { s.a.spawn("w", call(s.link_a, s.a, {"INCR", "n"}, &out_a)); });
  s.scheduler.call_at(4600, [&] { s.b.spawn("w", call(s.link_b, s.b, {"GET", "n"}, &out_b)); });
  s.scheduler.run_until(4999);
  EXPECT_TRUE(s.log.empty());  // nothing ran during the pause
  EXPECT_TRUE(s.gate.paused());
  s.scheduler.run_until(10'000);
  EXPECT_EQ(s.log, (std::vector<std::string>{"b:INCR n", "b:GET n", "pub:INCR published",
                                             "a:GET lease", "a:INCR n"}));
  // b's first caller timed out (1000 ms) but its INCR still ran; the lease's TTL ran on during
  // the pause, so the queued GET found it gone.
  EXPECT_EQ(texts(out_b), (std::vector<std::string>{"error:timeout", "reply:\"1\""}));
  EXPECT_EQ(out_b[0].at_ms, 1100u);  // sent at 100
  EXPECT_EQ(texts(out_a), (std::vector<std::string>{"reply:(nil)", "reply:(integer) 2"}));
  EXPECT_EQ(out_a[1].at_ms, 5001u);
  // The publisher's exempt connection never times out: it waited for the pause to end.
  EXPECT_EQ(texts(out_pub), (std::vector<std::string>{"reply:(integer) 1"}));
  EXPECT_EQ(out_pub[0].at_ms, 5001u);
  EXPECT_EQ(s.gate.queued_count(), 0u);
}

TEST(RuntimeServerGate, ClientKillLosesExactlyThatClientsInFlightReplies) {
  GatedWorld s;
  std::vector<Outcome> out_a, out_b;
  // Sent at 0, both run at 1 and would reply at 2: a is killed at 2, before its reply.
  s.a.spawn("w", call(s.link_a, s.a, {"INCR", "n"}, &out_a));
  s.b.spawn("w", call(s.link_b, s.b, {"INCR", "m"}, &out_b));
  s.scheduler.call_at(2, [&] { EXPECT_TRUE(s.gate.kill_client("a")); });
  // Sent at 10, killed at 11 as it arrives: it never runs.
  s.scheduler.call_at(10, [&] { s.a.spawn("w", call(s.link_a, s.a, {"INCR", "n"}, &out_a)); });
  s.scheduler.call_at(11, [&] { EXPECT_TRUE(s.gate.kill_client("a")); });
  // Then a reconnects: its next command runs.
  s.scheduler.call_at(20, [&] { s.a.spawn("w", call(s.link_a, s.a, {"GET", "n"}, &out_a)); });
  s.scheduler.run_until(100);
  EXPECT_EQ(texts(out_a),
            (std::vector<std::string>{"error:closed", "error:closed", "reply:\"1\""}));
  EXPECT_EQ(texts(out_b), (std::vector<std::string>{"reply:(integer) 1"}));
  EXPECT_EQ(s.server_a.refused_count, 1);
  EXPECT_EQ(s.log, (std::vector<std::string>{"a:INCR n", "b:INCR m", "a:GET n"}));
  EXPECT_FALSE(s.gate.kill_client("nobody"));
}

TEST(RuntimeServerGate, RestartWithPersistenceKeepsTheDataAndForgetsTheScripts) {
  GatedWorld s;
  std::vector<Outcome> out_a, out_pub;
  s.redis.execute({"SET", "k", "v"});
  s.redis.execute({"SCRIPT", "LOAD", "return 1"});
  ASSERT_EQ(s.redis.script_count(), 1u);
  s.a.spawn("w", call(s.link_a, s.a, {"INCR", "n"}, &out_a));  // runs at 1, reply due at 2
  s.scheduler.call_at(2, [&] { EXPECT_TRUE(s.gate.restart(true, 500)); });
  s.scheduler.call_at(100, [&] {
    s.a.spawn("w", call(s.link_a, s.a, {"GET", "k"}, &out_a));  // refused: the server is down
    s.pub.spawn("w", call(s.link_pub, s.pub, {"GET", "k"}, &out_pub));  // waits
  });
  s.scheduler.call_at(600, [&] { s.a.spawn("w", call(s.link_a, s.a, {"GET", "n"}, &out_a)); });
  s.scheduler.run_until(1000);
  EXPECT_EQ(texts(out_a),
            (std::vector<std::string>{"error:closed", "error:closed", "reply:\"1\""}));
  EXPECT_EQ(out_a[1].at_ms, 102u);
  EXPECT_EQ(texts(out_pub), (std::vector<std::string>{"reply:\"v\""}));
  EXPECT_EQ(out_pub[0].at_ms, 503u);  // queued at 101, run when the server is back at 502
  EXPECT_EQ(s.redis.script_count(), 0u);
}

TEST(RuntimeServerGate, RestartWithoutPersistenceComesBackEmpty) {
  GatedWorld s;
  s.redis.execute({"SET", "k", "v"});
  s.redis.execute({"INCR", "order:k:__fence__"});
  ASSERT_TRUE(s.gate.restart(false, 200));
  EXPECT_TRUE(s.gate.down());
  EXPECT_FALSE(s.gate.restart(true, 200));  // already down: nothing happens
  EXPECT_FALSE(s.gate.kill_client("a"));
  s.scheduler.run_until(300);
  EXPECT_FALSE(s.gate.down());
  EXPECT_EQ(s.redis.key_count(), 0u);  // the fence counter too: generations would repeat
}

TEST(RuntimeServerGate, ScriptFlushEmptiesOnlyTheScriptCacheAndWaitsForAPause) {
  GatedWorld s;
  s.redis.execute({"SET", "k", "v"});
  s.redis.execute({"SCRIPT", "LOAD", "return 1"});
  ASSERT_TRUE(s.gate.pause_clients(1000));
  ASSERT_TRUE(s.gate.flush_scripts());  // the admin client is paused too
  EXPECT_EQ(s.redis.script_count(), 1u);
  s.scheduler.run_until(1000);
  EXPECT_EQ(s.redis.script_count(), 0u);
  EXPECT_TRUE(s.redis.key_exists("k"));
}

// Counts the NOSCRIPT replies a broker gets.
class NoscriptCounter final : public SimServer {
 public:
  explicit NoscriptCounter(SimRedis& redis) : redis_(redis) {}
  redis::Reply execute(const redis::Command& c) override {
    redis::Reply r = redis_.execute(c);
    if (r.is_error_with("NOSCRIPT")) ++noscript;
    if (c[0] == "EVALSHA") ++evalsha;
    return r;
  }
  int noscript = 0;
  int evalsha = 0;

 private:
  SimRedis& redis_;
};

Task<void> publish_one(redis::RedisBroker& broker, std::vector<std::string>* ids) {
  // Named first: g++ 12 mishandles temporaries inside a co_await expression.
  const PartitionRef partition{"order", "k"};
  Result<std::string> id = co_await broker.publish(partition, "created", "{}");
  ids->push_back(id.ok() ? "ok" : std::string("error:") + errc_name(id.code()));
}

TEST(RuntimeServerGate, AfterARestartTheBrokerGetsNoscriptOnceThenSucceeds) {
  Scheduler scheduler;
  ServerClock clock(scheduler);
  SimRedis redis(clock);
  ServerGate gate(scheduler, redis);
  SimRuntime rt(scheduler, "a");
  NoscriptCounter server(redis);
  SimRedisLink link(rt, server, Rng(1), one_ms(), {&gate, gate.connect("a", false)});
  redis::RedisBroker broker(link);
  std::vector<std::string> ids;
  rt.spawn("w", publish_one(broker, &ids));
  scheduler.run_until(100);
  ASSERT_TRUE(gate.restart(true, 100));
  scheduler.run_until(300);
  for (int i = 0; i < 3; ++i) {
    rt.spawn("w", publish_one(broker, &ids));
    scheduler.run_until(scheduler.now_ms() + 100);
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"ok", "ok", "ok", "ok"}));
  EXPECT_EQ(server.noscript, 1);  // then EVAL, then SCRIPT LOAD again and EVALSHA
  EXPECT_EQ(server.evalsha, 4);
  EXPECT_EQ(redis::to_string(redis.execute({"XLEN", "order:k"})), "(integer) 4");
}

}  // namespace
}  // namespace seqby::sim
