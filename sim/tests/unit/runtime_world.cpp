// A whole simulated world wired the way an integrator wires it: scheduler, server clock, SimRedis,
// a ServerGate for the server faults, N SimRuntimes, each with a SimRedisLink (a connection
// through the gate) wrapped in a FaultyLink, a fault schedule drawn from
// the seed, and a run loop. Asserts what a run depends on: the server clock jump expires keys
// early, and the same seed replays the same run (trace hash, fault counts, final data).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "seqby/sim/faults.h"
#include "seqby/sim/faulty_link.h"
#include "seqby/sim/server_gate.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"

namespace seqby::sim {
namespace {

struct Instance {
  std::unique_ptr<SimRuntime> runtime;
  std::unique_ptr<SimRedisLink> link;
  std::unique_ptr<FaultyLink> faulty;
};

Task<void> counter_loop(Runtime& rt, redis::RedisLink& link, std::string key) {
  for (int i = 0; i < 200; i++) {
    redis::Command incr{"INCR", key};
    (void)co_await link.execute(std::move(incr));
    co_await rt.sleep_ms(10);
  }
}

struct RunSummary {
  std::uint64_t trace_hash = 0;
  std::string data;  // final counters on the server
  std::string counters;
  std::string schedule;
  friend bool operator==(const RunSummary&, const RunSummary&) = default;
};

RunSummary run_world(std::uint64_t seed) {
  const Rng root(seed);
  Scheduler scheduler;
  ServerClock server_clock(scheduler);
  SimRedis redis(server_clock);
  ServerAdapter<SimRedis> server(redis);
  ServerGate gate(scheduler, redis);
  FaultRecorder recorder(scheduler.clock(), nullptr);

  SwarmBounds bounds;
  bounds.enable_ppm = 1'000'000;  // every kind on: this test wants faults to fire
  bounds.schedule_rate_ppm_max = 300'000;
  bounds.link_rate_ppm_max = 100'000;
  const SwarmConfig swarm = SwarmConfig::draw(seed, bounds);

  std::vector<Instance> instances(3);
  auto start = [&](std::uint32_t i) {
    Instance& in = instances[i];
    const std::string name = "i" + std::to_string(i);
    const Rng rng =
        root.derive("instance/" + name + "/" + std::to_string(in.runtime->crash_count()));
    in.link =
        std::make_unique<SimRedisLink>(*in.runtime, server, rng.derive("link"), SimLinkOptions{},
                                       GateConnection{&gate, gate.connect(name, false)});
    in.faulty = std::make_unique<FaultyLink>(*in.link, *in.runtime, rng.derive("faults"),
                                             link_fault_rates(swarm, 1000), &recorder, name);
    in.runtime->spawn("worker", counter_loop(*in.runtime, *in.faulty, "count:" + name));
    in.runtime->spawn(std::string(kHeartbeatTaskName),
                      counter_loop(*in.runtime, *in.faulty, "beat:" + name));
  };
  std::vector<SimRuntime*> runtimes;
  for (std::uint32_t i = 0; i < instances.size(); i++) {
    instances[i].runtime = std::make_unique<SimRuntime>(scheduler, "i" + std::to_string(i));
    runtimes.push_back(instances[i].runtime.get());
  }
  for (std::uint32_t i = 0; i < instances.size(); i++) start(i);

  const FaultSchedule schedule = draw_fault_schedule(root, swarm, 3, 0, 2000);
  FaultInjector injector(scheduler, runtimes, server_clock, &recorder,
                         FaultHooks{[&](std::uint32_t i) {
                                      instances[i].faulty.reset();  // frames are gone already
                                      instances[i].link.reset();
                                    },
                                    start});
  injector.set_server(&gate);
  injector.apply(schedule);
  scheduler.run_until(2000);
  injector.stop();  // liveness phase: no more faults, everyone back
  for (auto& in : instances) in.faulty->set_enabled(false);
  const RunStop stop = scheduler.run_until(60'000);
  EXPECT_EQ(stop, RunStop::reached);

  RunSummary s;
  s.trace_hash = scheduler.trace_hash();
  s.counters = recorder.counters().to_string();
  s.schedule = schedule.describe();
  for (int i = 0; i < 3; i++) {
    const redis::Command get{"GET", "count:i" + std::to_string(i)};
    s.data += redis::to_string(redis.execute(get)) + " ";
  }
  return s;
}

TEST(RuntimeWorld, SameSeedReplaysTheSameRun) {
  const RunSummary a = run_world(2024);
  EXPECT_EQ(a, run_world(2024));
  EXPECT_NE(a.trace_hash, run_world(2025).trace_hash);
  EXPECT_NE(a.schedule, "") << "the swarm drew no schedule-driven fault";
  EXPECT_NE(a.counters.find("request_lost="), std::string::npos);
}

Task<void> set_then_get(Runtime& rt, redis::RedisLink& link, std::vector<std::string>* out) {
  redis::Command set{"SET", "lease", "a:1", "NX", "PX", "10000"};
  out->push_back(redis::to_string((co_await link.execute(std::move(set))).value()));
  co_await rt.sleep_ms(200);
  redis::Command get{"GET", "lease"};
  out->push_back(redis::to_string((co_await link.execute(std::move(get))).value()));
}

TEST(RuntimeWorld, RedisClockJumpExpiresALeaseEarly) {
  Scheduler scheduler;
  ServerClock server_clock(scheduler);
  SimRedis redis(server_clock);
  ServerAdapter<SimRedis> server(redis);
  SimRuntime a(scheduler, "a");
  SimRedisLink link(a, server, Rng(1));
  FaultInjector injector(scheduler, {&a}, server_clock, nullptr, {});
  FaultSchedule schedule;
  schedule.faults = {TimedFault{FaultKind::redis_clock_jump, 100, 0, 0, 20'000, 0}};
  injector.apply(schedule);
  std::vector<std::string> out;
  a.spawn("worker", set_then_get(a, link, &out));
  scheduler.run_until(1000);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "OK");
  EXPECT_EQ(out[1], "(nil)");
}

}  // namespace
}  // namespace seqby::sim
