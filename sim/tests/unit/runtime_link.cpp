// SimRedisLink and FaultyLink: commands run on the server after their request latency and
// survive a client crash; a lost request never runs and a lost reply did run, both end in a
// timeout after timeout_ms; a reset ends in Errc::closed; every firing is reported.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "seqby/sim/faulty_link.h"
#include "seqby/sim/sim_link.h"

namespace seqby::sim {
namespace {

// A tiny server: SET/GET/INCR, remembering when each command ran.
class FakeServer final : public SimServer {
 public:
  explicit FakeServer(Clock& clock) : clock_(clock) {}
  redis::Reply execute(const redis::Command& c) override {
    ran.push_back(c[0] + (c.size() > 1 ? " " + c[1] : "") + "@" + std::to_string(clock_.now_ms()));
    if (c[0] == "SET") {
      data[c[1]] = c[2];
      return redis::Reply::status("OK");
    }
    if (c[0] == "GET") {
      auto it = data.find(c[1]);
      return it == data.end() ? redis::Reply::nil() : redis::Reply::bulk(it->second);
    }
    if (c[0] == "INCR") {
      const auto v = std::stoll(data.count(c[1]) ? data[c[1]] : "0") + 1;
      data[c[1]] = std::to_string(v);
      return redis::Reply::of_int(v);
    }
    return redis::Reply::error("ERR unknown command");
  }
  std::map<std::string, std::string> data;
  std::vector<std::string> ran;

 private:
  Clock& clock_;
};

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

SimLinkOptions fixed_latency(std::uint64_t each_way_ms, std::uint64_t timeout_ms) {
  return SimLinkOptions{each_way_ms, each_way_ms, each_way_ms, each_way_ms, timeout_ms};
}

struct World {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  FakeServer server{server_clock};
  SimRuntime client{scheduler, "a"};
};

TEST(RuntimeLink, CommandRunsAfterRequestLatencyAndReplyComesBackAfterReplyLatency) {
  World w;
  SimRedisLink link(w.client, w.server, Rng(1).derive("link/a"), fixed_latency(3, 1000));
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"SET", "k", "v"}, &out));
  w.client.spawn("worker", call(link, w.client, {"GET", "k"}, &out));
  w.scheduler.run_until(100);
  EXPECT_EQ(w.server.ran, (std::vector<std::string>{"SET k@3", "GET k@3"}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].at_ms, 6u);
  EXPECT_EQ(out[1].text, "reply:\"v\"");
}

TEST(RuntimeLink, SlowReplyTimesOutButTheCommandRan) {
  World w;
  SimRedisLink link(w.client, w.server, Rng(1), fixed_latency(30, 50));
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"INCR", "n"}, &out));
  w.scheduler.run_until(1000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "error:timeout");
  EXPECT_EQ(out[0].at_ms, 50u);
  EXPECT_EQ(w.server.data["n"], "1");
}

TEST(RuntimeLink, CommandInFlightStillRunsWhenTheClientCrashes) {
  World w;
  SimRedisLink link(w.client, w.server, Rng(1), fixed_latency(10, 1000));
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"INCR", "n"}, &out));
  w.scheduler.call_at(5, [&] { w.client.crash(); });
  w.scheduler.run_until(1000);
  EXPECT_EQ(w.server.data["n"], "1");  // server-side: it happened
  EXPECT_TRUE(out.empty());            // the caller is gone: nobody resumed
}

class Recorder final : public FaultObserver {
 public:
  void on_fault(FaultKind kind, std::string_view node, std::string_view detail) override {
    seen.push_back(std::string(fault_kind_name(kind)) + " " + std::string(node) + " " +
                   std::string(detail));
  }
  std::vector<std::string> seen;
};

LinkFaultRates only(FaultKind kind, std::uint64_t timeout_ms) {
  LinkFaultRates r;
  r.timeout_ms = timeout_ms;
  if (kind == FaultKind::request_lost) r.request_lost_ppm = 1'000'000;
  if (kind == FaultKind::reply_lost) r.reply_lost_ppm = 1'000'000;
  if (kind == FaultKind::connection_reset) r.connection_reset_ppm = 1'000'000;
  if (kind == FaultKind::latency) r.latency_ppm = 1'000'000;
  return r;
}

TEST(RuntimeLink, RequestLostNeverRunsAndTimesOut) {
  World w;
  SimRedisLink inner(w.client, w.server, Rng(1), fixed_latency(2, 200));
  Recorder rec;
  FaultyLink link(inner, w.client, Rng(2), only(FaultKind::request_lost, 200), &rec, "a");
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"INCR", "n"}, &out));
  w.scheduler.run_until(1000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "error:timeout");
  EXPECT_EQ(out[0].at_ms, 200u);
  EXPECT_TRUE(w.server.ran.empty());
  EXPECT_EQ(rec.seen, (std::vector<std::string>{"request_lost a command=INCR"}));
  EXPECT_EQ(link.counters().count(FaultKind::request_lost), 1u);
}

TEST(RuntimeLink, ReplyLostRanOnTheServerAndTimesOut) {
  World w;
  SimRedisLink inner(w.client, w.server, Rng(1), fixed_latency(2, 200));
  Recorder rec;
  FaultyLink link(inner, w.client, Rng(2), only(FaultKind::reply_lost, 200), &rec, "a");
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"INCR", "n"}, &out));
  w.scheduler.run_until(1000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "error:timeout");
  EXPECT_EQ(out[0].at_ms, 200u);
  EXPECT_EQ(w.server.ran, (std::vector<std::string>{"INCR n@2"}));
  EXPECT_EQ(w.server.data["n"], "1");
  EXPECT_EQ(rec.seen, (std::vector<std::string>{"reply_lost a command=INCR"}));
}

Task<void> incr_many(redis::RedisLink& link, Runtime& rt, int count, std::vector<Outcome>* out) {
  for (int i = 0; i < count; i++) {
    // g++ 12 cannot keep a braced list's backing array alive across a co_await in the same
    // expression ("array used as initializer"): build the command first.
    redis::Command command{"INCR", "n"};
    co_await call(link, rt, std::move(command), out);
  }
}

TEST(RuntimeLink, ConnectionResetReturnsClosedBeforeOrAfterExecution) {
  World w;
  SimRedisLink inner(w.client, w.server, Rng(1), fixed_latency(2, 200));
  Recorder rec;
  FaultyLink link(inner, w.client, Rng(5), only(FaultKind::connection_reset, 200), &rec, "a");
  std::vector<Outcome> out;
  w.client.spawn("worker", incr_many(link, w.client, 40, &out));
  w.scheduler.run_until(100'000);
  ASSERT_EQ(out.size(), 40u);
  int after = 0;
  for (const auto& o : out) EXPECT_EQ(o.text, "error:closed");
  for (const auto& s : rec.seen) after += s.ends_with("when=after") ? 1 : 0;
  EXPECT_EQ(rec.seen.size(), 40u);
  EXPECT_GT(after, 0);
  EXPECT_LT(after, 40);
  EXPECT_EQ(w.server.data["n"], std::to_string(after));  // exactly the resets after execution ran
}

TEST(RuntimeLink, LatencyDelaysTheReplyAndDisabledLinkInjectsNothing) {
  World w;
  SimRedisLink inner(w.client, w.server, Rng(1), fixed_latency(1, 10'000));
  Recorder rec;
  LinkFaultRates rates = only(FaultKind::latency, 10'000);
  rates.latency_ms_min = rates.latency_ms_max = 40;
  FaultyLink link(inner, w.client, Rng(3), rates, &rec, "a");
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"SET", "k", "v"}, &out));
  w.scheduler.run_until(1000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "reply:OK");
  EXPECT_TRUE(out[0].at_ms == 42u || out[0].at_ms == 82u) << out[0].at_ms;
  ASSERT_EQ(rec.seen.size(), 1u);

  link.set_enabled(false);
  out.clear();
  w.client.spawn("worker", call(link, w.client, {"GET", "k"}, &out));
  w.scheduler.run_until(2000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].at_ms, 1002u);
  EXPECT_EQ(rec.seen.size(), 1u);
}

TEST(RuntimeLink, StalledClientGetsItsReplyWhenTheStallEnds) {
  World w;
  SimRedisLink link(w.client, w.server, Rng(1), fixed_latency(5, 1000));
  std::vector<Outcome> out;
  w.client.spawn("worker", call(link, w.client, {"SET", "k", "v"}, &out));
  w.scheduler.call_at(1, [&] { w.client.stall_until(300); });
  w.scheduler.run_until(1000);
  EXPECT_EQ(w.server.ran, (std::vector<std::string>{"SET k@5"}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text, "reply:OK");  // it arrived in time; the process saw it late
  EXPECT_EQ(out[0].at_ms, 300u);
}

TEST(RuntimeLink, ServerClockJumpsForwardOnly) {
  Scheduler s;
  ServerClock clock(s);
  s.run_until(100);
  clock.jump_forward(5000);
  EXPECT_EQ(clock.now_ms(), 5100u);
  EXPECT_EQ(clock.offset_ms(), 5000u);
}

}  // namespace
}  // namespace seqby::sim
