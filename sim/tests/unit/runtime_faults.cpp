// Fault kinds by name, counters in name order, swarm settings and schedules drawn from a seed
// (same seed, same draw), and the injector applying a schedule to a world of runtimes.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "seqby/sim/faults.h"
#include "seqby/sim/faulty_link.h"

namespace seqby::sim {
namespace {

TEST(RuntimeFaults, EveryKindRoundTripsThroughItsName) {
  ASSERT_EQ(all_fault_kinds().size(), kFaultKindCount);
  for (FaultKind kind : all_fault_kinds()) {
    FaultKind parsed{};
    ASSERT_TRUE(parse_fault_kind(fault_kind_name(kind), &parsed)) << fault_kind_name(kind);
    EXPECT_EQ(parsed, kind);
  }
  FaultKind ignored{};
  EXPECT_FALSE(parse_fault_kind("meteor", &ignored));
}

TEST(RuntimeFaults, CountersPrintEveryKindInNameOrder) {
  FaultCounters c;
  c.add(FaultKind::crash, 2);
  c.add(FaultKind::reply_lost);
  EXPECT_EQ(c.to_string(),
            "client_kill=0 client_pause=0 clock_skew=0 connection_reset=0 crash=2 "
            "handler_poison=0 handler_transient=0 heartbeat_stall=0 latency=0 "
            "redis_clock_jump=0 reply_lost=1 request_lost=0 script_flush=0 server_restart=0 "
            "server_restart_empty=0 slow_handler=0 stall=0 stall_replace=0");
  const auto by_name = c.by_name();
  EXPECT_EQ(by_name.size(), kFaultKindCount);
  EXPECT_EQ(by_name.at("crash"), 2u);
  EXPECT_EQ(c.total(), 3u);
}

TEST(RuntimeFaults, SwarmConfigIsAFunctionOfTheSeedAndDescribesEverySetting) {
  const SwarmConfig a = SwarmConfig::draw(99);
  EXPECT_EQ(a.settings, SwarmConfig::draw(99).settings);
  int differing = 0;
  for (std::uint64_t seed = 1; seed <= 20; seed++) {
    differing += SwarmConfig::draw(seed).settings != a.settings ? 1 : 0;
  }
  EXPECT_GT(differing, 15);
  const std::string text = a.describe();
  for (FaultKind kind : all_fault_kinds()) {
    EXPECT_NE(text.find(std::string(fault_kind_name(kind)) + (a.enabled(kind) ? " on" : " off")),
              std::string::npos)
        << text;
  }
  EXPECT_EQ(SwarmConfig::none().rate_ppm(FaultKind::crash), 0u);
}

SwarmConfig everything_on() {
  SwarmConfig c;
  for (FaultKind kind : all_fault_kinds()) c.set(kind, true, 200'000);
  return c;
}

TEST(RuntimeFaults, ScheduleIsDeterministicSortedAndWithinBounds) {
  const SwarmConfig config = everything_on();
  const FaultSchedule s = draw_fault_schedule(Rng(5), config, 3, 1000, 61'000);
  EXPECT_EQ(s, draw_fault_schedule(Rng(5), config, 3, 1000, 61'000));
  EXPECT_NE(s, draw_fault_schedule(Rng(6), config, 3, 1000, 61'000));
  ASSERT_FALSE(s.faults.empty());
  for (std::size_t i = 0; i < s.faults.size(); i++) {
    const TimedFault& f = s.faults[i];
    EXPECT_EQ(fault_driver(f.kind), FaultDriver::schedule);
    EXPECT_GE(f.at_ms, 1000u);
    EXPECT_LT(f.at_ms, 61'000u);
    EXPECT_LT(f.target, 3u);
    if (i > 0) {
      EXPECT_LE(s.faults[i - 1].at_ms, f.at_ms);
    }
  }
  SwarmConfig no_crash = config;
  no_crash.set(FaultKind::crash, false, 0);
  const FaultSchedule without = draw_fault_schedule(Rng(5), no_crash, 3, 1000, 61'000);
  // Switching one kind off removes exactly its faults: the others do not move.
  std::vector<TimedFault> expected;
  for (const TimedFault& f : s.faults) {
    if (f.kind != FaultKind::crash) expected.push_back(f);
  }
  EXPECT_EQ(without.faults, expected);
}

TEST(RuntimeFaults, ServerKindsStrikeTheServerWithinTheirBoundsAndTheEmptyRestartIsNeverDrawn) {
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    EXPECT_FALSE(SwarmConfig::draw(seed).enabled(FaultKind::server_restart_empty)) << seed;
  }
  const SwarmConfig config = everything_on();
  const FaultSchedule s = draw_fault_schedule(Rng(5), config, 3, 0, 60'000);
  std::map<FaultKind, int> seen;
  for (const TimedFault& f : s.faults) {
    ++seen[f.kind];
    if (!fault_targets_instance(f.kind)) {
      EXPECT_EQ(f.target, 0u) << describe(f);
    }
    if (f.kind == FaultKind::client_pause) {
      EXPECT_GE(f.duration_ms, config.bounds.client_pause_ms_min);
      EXPECT_LE(f.duration_ms, config.bounds.client_pause_ms_max);
    }
    if (f.kind == FaultKind::server_restart) {
      EXPECT_GE(f.duration_ms, config.bounds.server_down_ms_min);
      EXPECT_LE(f.duration_ms, config.bounds.server_down_ms_max);
    }
  }
  for (FaultKind kind :
       {FaultKind::server_restart, FaultKind::server_restart_empty, FaultKind::script_flush,
        FaultKind::client_pause, FaultKind::client_kill}) {
    EXPECT_GT(seen[kind], 0) << fault_kind_name(kind);
  }
  EXPECT_TRUE(fault_targets_instance(FaultKind::client_kill));
  EXPECT_FALSE(fault_targets_instance(FaultKind::client_pause));
  // A server kind switched on adds its own faults and moves none of the others.
  SwarmConfig older = config;
  for (FaultKind kind :
       {FaultKind::server_restart, FaultKind::server_restart_empty, FaultKind::script_flush,
        FaultKind::client_pause, FaultKind::client_kill}) {
    older.set(kind, false, 0);
  }
  std::vector<TimedFault> expected;
  for (const TimedFault& f : s.faults) {
    if (f.kind < FaultKind::server_restart || f.kind == FaultKind::stall_replace) {
      expected.push_back(f);  // stall_replace, an instance kind, came after the server kinds
    }
  }
  EXPECT_EQ(draw_fault_schedule(Rng(5), older, 3, 0, 60'000).faults, expected);
}

TEST(RuntimeFaults, HandlerFaultsAreStablePerEvent) {
  SwarmConfig config = everything_on();
  const Rng run(17);
  int any = 0;
  for (int i = 0; i < 100; i++) {
    const std::string id = "orders:k1:" + std::to_string(i);
    const HandlerFaults a = draw_handler_faults(run, config, id);
    const HandlerFaults b = draw_handler_faults(run, config, id);
    EXPECT_EQ(a.poison, b.poison);
    EXPECT_EQ(a.transient_failures, b.transient_failures);
    EXPECT_EQ(a.slow_ms, b.slow_ms);
    any += a.any() ? 1 : 0;
  }
  EXPECT_GT(any, 0);
  EXPECT_FALSE(draw_handler_faults(run, SwarmConfig::none(), "orders:k1:1").any());
}

class CollectingSink final : public HistorySink {
 public:
  void record(HistoryRecord r) override { records.push_back(std::move(r)); }
  std::vector<HistoryRecord> records;
};

Task<void> tick_forever(Runtime& rt, std::vector<std::string>* log, std::string name) {
  for (int i = 0; i < 1000; i++) {
    co_await rt.sleep_ms(100);
    log->push_back(name + "@" + std::to_string(rt.clock().now_ms()));
  }
}

TEST(RuntimeFaults, InjectorAppliesTheScheduleAndRecordsEachFault) {
  Scheduler s;
  ServerClock server_clock(s);
  SimRuntime a(s, "a"), b(s, "b");
  CollectingSink sink;
  FaultRecorder recorder(s.clock(), &sink);
  std::vector<std::string> hooks, log;
  FaultInjector injector(
      s, {&a, &b}, server_clock, &recorder,
      FaultHooks{[&](std::uint32_t i) { hooks.push_back("crash " + std::to_string(i)); },
                 [&](std::uint32_t i) {
                   hooks.push_back("restart " + std::to_string(i));
                   b.spawn("worker", tick_forever(b, &log, "b2"));
                 }});
  a.spawn(std::string(kHeartbeatTaskName), tick_forever(a, &log, "a-hb"));
  b.spawn("worker", tick_forever(b, &log, "b"));

  FaultSchedule schedule;
  schedule.faults = {
      TimedFault{FaultKind::crash, 150, 1, 300, 0, 0},
      TimedFault{FaultKind::heartbeat_stall, 250, 0, 200, 0, 0},
      TimedFault{FaultKind::crash, 300, 1, 0, 0, 0},  // b is down: nothing happens
      TimedFault{FaultKind::redis_clock_jump, 400, 0, 0, 7000, 0},
      TimedFault{FaultKind::clock_skew, 500, 0, 0, 1000, 0},
  };
  injector.apply(schedule);
  s.run_until(600);

  EXPECT_EQ(hooks, (std::vector<std::string>{"crash 1", "restart 1"}));
  EXPECT_EQ(log, (std::vector<std::string>{"a-hb@100", "b@100", "a-hb@200", "a-hb@450", "a-hb@1550",
                                           "b2@550"}));
  EXPECT_EQ(server_clock.now_ms(), 7600u);
  EXPECT_EQ(recorder.counters().count(FaultKind::crash), 1u);
  std::vector<std::string> details;
  for (const auto& r : sink.records) {
    EXPECT_EQ(r.op, HistoryOp::fault);
    details.push_back(std::to_string(r.time_ms) + " " + r.node + " " + r.detail);
  }
  EXPECT_EQ(details,
            (std::vector<std::string>{
                "150 b crash downtime_ms=300", "250 a heartbeat_stall duration_ms=200",
                "400  redis_clock_jump jump_ms=7000", "500 a clock_skew jump_ms=1000 rate_ppm=0"}));
}

TEST(RuntimeFaults, StopRestartsDownInstancesAndCancelsQueuedFaults) {
  Scheduler s;
  ServerClock server_clock(s);
  SimRuntime a(s, "a");
  std::vector<std::string> hooks;
  FaultInjector injector(s, {&a}, server_clock, nullptr,
                         FaultHooks{[&](std::uint32_t) { hooks.push_back("crash"); },
                                    [&](std::uint32_t) { hooks.push_back("restart"); }});
  FaultSchedule schedule;
  schedule.faults = {TimedFault{FaultKind::crash, 10, 0, 0, 0, 0},
                     TimedFault{FaultKind::stall, 50, 0, 100, 0, 0}};
  injector.apply(schedule);
  s.run_until(20);
  EXPECT_TRUE(injector.is_down(0));
  injector.stop();
  EXPECT_FALSE(injector.is_down(0));
  s.run_until(100);
  EXPECT_FALSE(a.stalled());
  EXPECT_EQ(hooks, (std::vector<std::string>{"crash", "restart"}));
}

// Logs what the injector asks of the server; down for a while after a restart.
class FakeServerTarget final : public ServerFaultTarget {
 public:
  explicit FakeServerTarget(Scheduler& s) : s_(s) {}
  bool restart(bool keep_data, std::uint64_t down_ms) override {
    if (s_.now_ms() < down_until_) return false;
    down_until_ = s_.now_ms() + down_ms;
    log.push_back(keep_data ? "restart" : "restart_empty");
    return true;
  }
  bool flush_scripts() override { return up("flush"); }
  bool pause_clients(std::uint64_t ms) override { return up("pause " + std::to_string(ms)); }
  bool kill_client(std::string_view c) override { return up("kill " + std::string(c)); }
  void client_gone(std::string_view c) override { log.push_back("gone " + std::string(c)); }
  std::vector<std::string> log;

 private:
  bool up(std::string what) {
    if (s_.now_ms() < down_until_) return false;
    log.push_back(std::move(what));
    return true;
  }
  Scheduler& s_;
  std::uint64_t down_until_ = 0;
};

TEST(RuntimeFaults, InjectorSendsServerFaultsToTheServerAndCountsOnlyThoseThatTookEffect) {
  Scheduler s;
  ServerClock server_clock(s);
  SimRuntime a(s, "a"), b(s, "b");
  CollectingSink sink;
  FaultRecorder recorder(s.clock(), &sink);
  FakeServerTarget server(s);
  FaultInjector injector(s, {&a, &b}, server_clock, &recorder, FaultHooks{});
  injector.set_server(&server);
  FaultSchedule schedule;
  schedule.faults = {
      TimedFault{FaultKind::client_kill, 10, 1, 0, 0, 0},
      TimedFault{FaultKind::server_restart, 20, 0, 100, 0, 0},
      TimedFault{FaultKind::client_pause, 50, 0, 4000, 0, 0},  // down: no effect
      TimedFault{FaultKind::crash, 200, 0, 0, 0, 0},
      TimedFault{FaultKind::client_kill, 210, 0, 0, 0, 0},  // a is down: nothing to kill
      TimedFault{FaultKind::script_flush, 220, 0, 0, 0, 0},
      TimedFault{FaultKind::client_pause, 230, 0, 4000, 0, 0},
  };
  injector.apply(schedule);
  s.run_until(1000);
  EXPECT_EQ(server.log,
            (std::vector<std::string>{"kill b", "restart", "gone a", "flush", "pause 4000"}));
  EXPECT_EQ(recorder.counters().count(FaultKind::client_kill), 1u);
  EXPECT_EQ(recorder.counters().count(FaultKind::client_pause), 1u);
  std::vector<std::string> details;
  for (const auto& r : sink.records) details.push_back(r.node + " " + r.detail);
  EXPECT_EQ(details,
            (std::vector<std::string>{"b client_kill", " server_restart downtime_ms=100 data=kept",
                                      "a crash downtime_ms=0", " script_flush",
                                      " client_pause duration_ms=4000"}));
}

TEST(RuntimeFaults, LinkRatesFollowTheSwarm) {
  SwarmConfig c;
  c.set(FaultKind::reply_lost, true, 1234);
  c.set(FaultKind::request_lost, false, 999);
  const LinkFaultRates r = link_fault_rates(c, 750);
  EXPECT_EQ(r.reply_lost_ppm, 1234u);
  EXPECT_EQ(r.request_lost_ppm, 0u);
  EXPECT_EQ(r.timeout_ms, 750u);
}

}  // namespace
}  // namespace seqby::sim
