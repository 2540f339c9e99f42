// A blocking XREAD through SimRedisLink, as Redis 7.0.15 behaves (checked by hand on one): held on
// the server until a write of any client (a plain XADD, or a script that XADDs) adds an entry to a
// watched stream, served right after that command with that stream's entries, or answered nil
// BLOCK ms after it blocked (also during a pause); data already there answers at once. The link's
// later commands wait behind it; the server closing the connection ends it with Errc::closed, a
// crash frees it; the client waits timeout_ms + BLOCK ms; the same seed gives the same replies at
// the same times.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "seqby/sim/faulty_link.h"
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

SimLinkOptions one_ms(std::uint64_t timeout_ms = 1000) {
  return SimLinkOptions{1, 1, 1, 1, timeout_ms};
}

// Two clients on one SimRedis: `a` reads (its wake link), `b` writes. With `gated`, both go
// through a ServerGate (the server faults); `a`'s connection is the one kill_client("a") closes.
struct Clients {
  explicit Clients(bool gated = false, std::uint64_t timeout_ms = 1000)
      : gate(gated ? std::make_unique<ServerGate>(scheduler, redis) : nullptr),
        link_a(a, server, Rng(1), one_ms(timeout_ms), connection("a")),
        link_b(b, server, Rng(2), one_ms(timeout_ms), connection("b")) {}
  GateConnection connection(const std::string& name) {
    if (!gate) return {};
    return {gate.get(), gate->connect(name, false)};
  }
  // `cmd` sent on `link` by a task of `rt` at `at_ms`.
  void send_at(std::uint64_t at_ms, SimRedisLink& link, SimRuntime& rt, redis::Command cmd,
               std::vector<Outcome>* out) {
    scheduler.call_at(at_ms, [&link, &rt, cmd = std::move(cmd), out]() mutable {
      rt.spawn("w", call(link, rt, std::move(cmd), out));
    });
  }

  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  std::unique_ptr<ServerGate> gate;
  SimRuntime a{scheduler, "a"}, b{scheduler, "b"};
  SimRedisLink link_a;
  SimRedisLink link_b;
};

const char kOneEntry[] = R"(reply:[["bell", [["5-1", ["f", "v"]]]]])";

TEST(RuntimeBlocking, APlainXaddFromAnotherLinkWakesTheRead) {
  Clients s;
  std::vector<Outcome> out_a, out_b;
  // Sent at 0, blocked at 1 (nothing after 0-0 on either stream).
  s.send_at(0, s.link_a, s.a,
            {"XREAD", "COUNT", "1", "BLOCK", "5000", "STREAMS", "idle", "bell", "0-0", "0-0"},
            &out_a);
  s.send_at(100, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);
  s.scheduler.run_until(99);
  EXPECT_TRUE(out_a.empty());
  EXPECT_EQ(s.redis.blocked_count(), 1u);
  s.scheduler.run_until(10'000);
  // Served as the XADD ran (101), back one reply latency later; only the stream that got it.
  ASSERT_EQ(out_a.size(), 1u);
  EXPECT_EQ(out_a[0].at_ms, 102u);
  EXPECT_EQ(out_a[0].text, kOneEntry);
  EXPECT_EQ(texts(out_b), (std::vector<std::string>{"reply:\"5-1\""}));
  EXPECT_EQ(s.redis.blocked_count(), 0u);
}

TEST(RuntimeBlocking, AScriptThatXaddsWakesTheReadOnceItHasRun) {
  Clients s;
  std::vector<Outcome> out_a, out_b;
  // Two entries on bell, then one on idle: Redis 7.0 serves the reader on the stream that got an
  // entry first, with that stream's entries only.
  const std::string script =
      "redis.call('XADD', KEYS[1], '7-1', 'f', 'a') redis.call('XADD', KEYS[2], '7-1', 'f', 'i') "
      "redis.call('XADD', KEYS[1], '7-2', 'f', 'b') return 1";
  const redis::Reply sha = s.redis.execute({"SCRIPT", "LOAD", script});
  ASSERT_EQ(sha.kind, redis::Reply::Kind::bulk);
  // No COUNT: a read served after each XADD would get one entry; Redis serves after the script.
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "idle", "bell", "0-0", "0-0"},
            &out_a);
  s.send_at(100, s.link_b, s.b, {"EVALSHA", sha.str, "2", "bell", "idle"}, &out_b);
  // And EVAL wakes the next read the same way.
  s.send_at(200, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "7-2"}, &out_a);
  s.send_at(
      300, s.link_b, s.b,
      {"EVAL", "return redis.call('XADD', KEYS[1], 'MAXLEN', '1', '*', 'f', 'c')", "1", "bell"},
      &out_b);
  s.scheduler.run_until(10'000);
  ASSERT_EQ(out_a.size(), 2u);
  EXPECT_EQ(out_a[0].text, R"(reply:[["bell", [["7-1", ["f", "a"]], ["7-2", ["f", "b"]]]]])");
  EXPECT_EQ(out_a[0].at_ms, 102u);
  // The script's XADD * took the server's time (301) as its id.
  EXPECT_EQ(out_a[1].text, R"(reply:[["bell", [["301-0", ["f", "c"]]]]])");
  EXPECT_EQ(out_a[1].at_ms, 302u);
  EXPECT_EQ(texts(out_b), (std::vector<std::string>{"reply:(integer) 1", "reply:\"301-0\""}));
}

TEST(RuntimeBlocking, AnXaddToAnUnwatchedStreamDoesNotWakeIt) {
  Clients s;
  std::vector<Outcome> out_a, out_b;
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "500", "STREAMS", "bell", "0-0"}, &out_a);
  s.send_at(100, s.link_b, s.b, {"XADD", "other", "5-1", "f", "v"}, &out_b);
  s.send_at(150, s.link_b, s.b, {"SET", "bell2", "x"}, &out_b);
  s.scheduler.run_until(10'000);
  // Blocked at 1, timed out at 501, back at 502: nil, as Redis's null array on a timeout.
  EXPECT_EQ(texts(out_a), (std::vector<std::string>{"reply:(nil)"}));
  EXPECT_EQ(out_a[0].at_ms, 502u);
  EXPECT_EQ(s.redis.blocked_count(), 0u);
}

TEST(RuntimeBlocking, DataThereOnArrivalRepliesAtOnce) {
  Clients s;
  std::vector<Outcome> out_a;
  ASSERT_EQ(redis::to_string(s.redis.execute({"XADD", "bell", "5-1", "f", "v"})), "\"5-1\"");
  s.send_at(0, s.link_a, s.a,
            {"XREAD", "COUNT", "1", "BLOCK", "5000", "STREAMS", "idle", "bell", "0-0", "0-0"},
            &out_a);
  s.scheduler.run_until(10'000);
  ASSERT_EQ(out_a.size(), 1u);
  EXPECT_EQ(out_a[0].at_ms, 2u);
  EXPECT_EQ(out_a[0].text, kOneEntry);
  EXPECT_EQ(s.redis.blocked_count(), 0u);
}

TEST(RuntimeBlocking, ATimeoutAnswersNilBlockMsAfterItBlockedOnTheServer) {
  Clients s;
  std::vector<Outcome> out_a;
  // Sent at 40; request and reply latencies of 1 ms: blocked at 41, nil at 341, back at 342.
  s.send_at(40, s.link_a, s.a, {"XREAD", "BLOCK", "300", "STREAMS", "bell", "0-0"}, &out_a);
  s.scheduler.run_until(340);
  EXPECT_TRUE(out_a.empty());
  EXPECT_EQ(s.redis.blocked_count(), 1u);
  s.scheduler.run_until(341);
  EXPECT_EQ(s.redis.blocked_count(), 0u);  // the server timed it out
  s.scheduler.run_until(10'000);
  EXPECT_EQ(texts(out_a), (std::vector<std::string>{"reply:(nil)"}));
  EXPECT_EQ(out_a[0].at_ms, 342u);
  // A later XADD finds nobody to serve.
  EXPECT_EQ(redis::to_string(s.redis.execute({"XADD", "bell", "5-1", "f", "v"})), "\"5-1\"");
}

TEST(RuntimeBlocking, ALaterCommandOnTheSameLinkWaitsBehindTheBlockedRead) {
  Clients s;
  std::vector<Outcome> out_a, out_b;
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "0-0"}, &out_a);
  s.send_at(10, s.link_a, s.a, {"SET", "x", "1"}, &out_a);
  s.send_at(50, s.link_b, s.b, {"GET", "x"}, &out_b);  // the SET has not run
  s.send_at(200, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);
  s.send_at(300, s.link_b, s.b, {"GET", "x"}, &out_b);  // now it has
  s.scheduler.run_until(10'000);
  ASSERT_EQ(out_a.size(), 2u);
  EXPECT_EQ(out_a[0].text, kOneEntry);
  EXPECT_EQ(out_a[1].text, "reply:OK");
  // The XREAD served at 201, the SET run right after it: both back at 202, in order.
  EXPECT_EQ(out_a[0].at_ms, 202u);
  EXPECT_EQ(out_a[1].at_ms, 202u);
  EXPECT_EQ(texts(out_b),
            (std::vector<std::string>{"reply:(nil)", "reply:\"5-1\"", "reply:\"1\""}));
}

TEST(RuntimeBlocking, TheServerClosingTheConnectionEndsTheBlockWithClosed) {
  Clients s(true);
  std::vector<Outcome> out_a, out_b;
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "0-0"}, &out_a);
  s.send_at(10, s.link_a, s.a, {"SET", "x", "1"}, &out_a);  // behind it
  s.scheduler.call_at(100, [&] { EXPECT_TRUE(s.gate->kill_client("a")); });
  s.send_at(200, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);
  s.scheduler.run_until(150);
  EXPECT_EQ(s.redis.blocked_count(), 0u);  // Redis freed the client
  s.scheduler.run_until(10'000);
  // Both learn it one reply latency after the kill; no late reply follows.
  EXPECT_EQ(texts(out_a), (std::vector<std::string>{"error:closed", "error:closed"}));
  EXPECT_EQ(out_a[0].at_ms, 101u);
  EXPECT_EQ(out_a[1].at_ms, 101u);
  EXPECT_FALSE(s.redis.key_exists("x"));  // dropped with the connection, never run
  // The client reconnects: its next read blocks again and is served.
  s.send_at(10'000, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "5-1"}, &out_a);
  s.send_at(10'100, s.link_b, s.b, {"XADD", "bell", "6-1", "f", "v"}, &out_b);
  s.scheduler.run_until(20'000);
  ASSERT_EQ(out_a.size(), 3u);
  EXPECT_EQ(out_a[2].at_ms, 10'102u);
  EXPECT_NE(out_a[2].text.find("6-1"), std::string::npos);
}

TEST(RuntimeBlocking, ACrashedClientsBlockIsFreedAndItsReplyDropped) {
  Clients s(true);
  std::vector<Outcome> out_a, out_b;
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "0-0"}, &out_a);
  s.scheduler.call_at(100, [&] {
    s.a.crash();
    s.gate->client_gone("a");
  });
  s.send_at(200, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);
  s.scheduler.run_until(150);
  EXPECT_EQ(s.redis.blocked_count(), 0u);
  s.scheduler.run_until(10'000);
  EXPECT_TRUE(out_a.empty());
  EXPECT_EQ(texts(out_b), (std::vector<std::string>{"reply:\"5-1\""}));
}

TEST(RuntimeBlocking, AWakeConnectionIsFreedWithItsClientButNotKilledInItsPlace) {
  Clients s(true);
  std::vector<Outcome> out_wake, out_a, out_b;
  // a's second connection, as the world gives an engine its wake link.
  SimRedisLink wake(s.a, s.gate->server(), Rng(5), one_ms(),
                    {s.gate.get(), s.gate->connect("a/wake", false)});
  s.send_at(0, wake, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "0-0"}, &out_wake);
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "0-0"}, &out_a);
  // CLIENT KILL of client a closes its main connection, not the wake link.
  s.scheduler.call_at(100, [&] { EXPECT_TRUE(s.gate->kill_client("a")); });
  s.scheduler.run_until(150);
  EXPECT_EQ(texts(out_a), (std::vector<std::string>{"error:closed"}));
  EXPECT_TRUE(out_wake.empty());
  EXPECT_EQ(s.redis.blocked_count(), 1u);
  // Its crash frees both.
  s.scheduler.call_at(200, [&] {
    s.a.crash();
    s.gate->client_gone("a");
  });
  s.send_at(300, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);
  s.scheduler.run_until(250);
  EXPECT_EQ(s.redis.blocked_count(), 0u);
  s.scheduler.run_until(10'000);
  EXPECT_TRUE(out_wake.empty());
}

TEST(RuntimeBlocking, TheClientTimeoutDoesNotFireDuringALongBlock) {
  Clients s(false, 100);  // 100 ms per command
  std::vector<Outcome> out_a, out_b;
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "0-0"}, &out_a);
  s.send_at(3000, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);
  s.scheduler.run_until(10'000);
  ASSERT_EQ(out_a.size(), 1u);
  EXPECT_EQ(out_a[0].text, kOneEntry);
  EXPECT_EQ(out_a[0].at_ms, 3002u);
  // Its wait is 100 + 5000 ms: a read the server never answers times out then, not at 100.
  std::vector<Outcome> lost;
  SimRedisLink inner(s.a, s.server, Rng(3), one_ms(100));
  FaultyLink faulty(inner, s.a, Rng(4), LinkFaultRates{0, 1'000'000, 0, 0, 1, 1, 100}, nullptr,
                    "a");
  s.scheduler.call_at(20'000, [&] {
    s.a.spawn("w", call(faulty, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "5-1"}, &lost));
  });
  s.scheduler.run_until(40'000);
  EXPECT_EQ(texts(lost), (std::vector<std::string>{"error:timeout"}));
  EXPECT_EQ(lost[0].at_ms, 25'100u);
}

TEST(RuntimeBlocking, APauseHoldsWritesButNotTimeouts) {
  Clients s(true);
  std::vector<Outcome> out_a, out_b, out_c;
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "300", "STREAMS", "bell", "0-0"}, &out_a);
  s.scheduler.call_at(100, [&] { EXPECT_TRUE(s.gate->pause_clients(1000)); });
  s.send_at(200, s.link_b, s.b, {"XADD", "bell", "5-1", "f", "v"}, &out_b);  // held to 1100
  s.scheduler.run_until(10'000);
  // Timed out during the pause at 301 (Redis times blocked clients out while paused).
  EXPECT_EQ(texts(out_a), (std::vector<std::string>{"reply:(nil)"}));
  EXPECT_EQ(out_a[0].at_ms, 302u);
  EXPECT_EQ(texts(out_b), (std::vector<std::string>{"reply:\"5-1\""}));
  EXPECT_EQ(out_b[0].at_ms, 1101u);
}

TEST(RuntimeBlocking, ADeletedOrRetypedStreamLeavesTheReadBlocked) {
  Clients s;
  std::vector<Outcome> out_a, out_b;
  ASSERT_EQ(redis::to_string(s.redis.execute({"XADD", "bell", "5-1", "f", "v"})), "\"5-1\"");
  s.send_at(0, s.link_a, s.a, {"XREAD", "BLOCK", "5000", "STREAMS", "bell", "5-1"}, &out_a);
  s.send_at(100, s.link_b, s.b, {"DEL", "bell"}, &out_b);
  s.send_at(200, s.link_b, s.b, {"SET", "bell", "x"}, &out_b);
  s.send_at(300, s.link_b, s.b, {"DEL", "bell"}, &out_b);
  // A new stream whose entry is not after 5-1 does not serve it either; one after does.
  s.send_at(400, s.link_b, s.b, {"XADD", "bell", "3-1", "f", "v"}, &out_b);
  s.send_at(500, s.link_b, s.b, {"XADD", "bell", "6-1", "f", "v"}, &out_b);
  s.scheduler.run_until(10'000);
  ASSERT_EQ(out_a.size(), 1u);
  EXPECT_EQ(out_a[0].at_ms, 502u);
  EXPECT_EQ(out_a[0].text, R"(reply:[["bell", [["6-1", ["f", "v"]]]]])");
}

// A small campaign: three readers and two writers on random latencies; the whole sequence of
// (time, reply) for a seed.
std::vector<std::string> campaign(std::uint64_t seed) {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  ServerGate gate{scheduler, redis};
  Rng rng = Rng(seed).derive("campaign");
  std::vector<std::unique_ptr<SimRuntime>> runtimes;
  std::vector<std::unique_ptr<SimRedisLink>> links;
  for (int i = 0; i < 5; ++i) {
    const std::string name = "c" + std::to_string(i);
    runtimes.push_back(std::make_unique<SimRuntime>(scheduler, name));
    links.push_back(std::make_unique<SimRedisLink>(
        *runtimes.back(), server, rng.derive(name), SimLinkOptions{0, 3, 0, 3, 1000},
        GateConnection{&gate, gate.connect(name, false)}));
  }
  std::vector<Outcome> out;
  for (int k = 0; k < 60; ++k) {
    const auto at = rng.uniform(0, 2000);
    const auto i = static_cast<std::size_t>(rng.below(5));
    const std::string stream = "s" + std::to_string(rng.below(3));
    redis::Command cmd;
    if (i < 3) {
      cmd = {"XREAD",   "COUNT", "1",  "BLOCK", std::to_string(rng.uniform(1, 300)),
             "STREAMS", stream,  "s9", "0-0",   "0-0"};
    } else {
      cmd = {"XADD", stream, "MAXLEN", "1", "*", "f", std::to_string(k)};
    }
    scheduler.call_at(at, [&, i, cmd = std::move(cmd)]() mutable {
      runtimes[i]->spawn("w", call(*links[i], *runtimes[i], std::move(cmd), &out));
    });
  }
  scheduler.call_at(900, [&] { gate.kill_client("c1"); });
  scheduler.run_until(10'000);
  std::vector<std::string> seen;
  for (const auto& o : out) seen.push_back(std::to_string(o.at_ms) + " " + o.text);
  return seen;
}

TEST(RuntimeBlocking, TheSameSeedGivesTheSameRepliesAtTheSameTimes) {
  const std::vector<std::string> first = campaign(7);
  EXPECT_EQ(first.size(), 60u);
  EXPECT_EQ(first, campaign(7));
  EXPECT_NE(first, campaign(8));
  // Some reads were woken with entries, some timed out.
  std::size_t woken = 0, nil = 0;
  for (const auto& line : first) {
    if (line.find("\"f\"") != std::string::npos && line.find("[[") != std::string::npos) {
      ++woken;
    }
    if (line.find("(nil)") != std::string::npos) ++nil;
  }
  EXPECT_GT(woken, 0u);
  EXPECT_GT(nil, 0u);
}

}  // namespace
}  // namespace seqby::sim
