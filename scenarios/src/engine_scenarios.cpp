// The engine scenarios of the ADR's acceptance list ("Mapping each guarantee to the test"), on the
// simulator: two engine instances, one handler group, interleaved events for client-A and
// client-B, the very Lua scripts real Redis runs. Each scenario acts on the World at the moment
// it needs (a crash or a stall of whoever owns client-A), then asserts in the ADR's words and
// also requires the history checker to find every property holding. run_redis stays empty.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "seqby/properties/checker.h"
#include "seqby/redis/redis_broker.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios {
namespace {

constexpr const char* kA = "client-A";
constexpr const char* kB = "client-B";

class Checks {
 public:
  explicit Checks(ScenarioContext& ctx) : out_(ctx.out) {}
  bool expect(bool held, const std::string& what, const std::string& outcome) {
    out_ << (held ? "ok  " : "FAIL ") << what << ": " << outcome << "\n";
    if (!held) result_.failures.push_back(what + ": " + outcome);
    return held;
  }
  ScenarioResult result() { return std::move(result_); }

 private:
  std::ostream& out_;
  ScenarioResult result_;
};

// Two instances, client-A and client-B, `per_key` events each, interleaved A1 B1 A2 B2 ...
sim::SimCase two_key_case(std::uint64_t seed, const std::string& name, std::int64_t per_key,
                          std::uint64_t gap_ms, std::uint64_t duration_ms) {
  sim::SimCase c;
  c.seed = seed;
  c.scenario = name;
  c.category = "order";
  c.group = "billing";
  c.instance_count = 2;
  c.keys = {kA, kB};
  c.engine.discovery_interval_ms = 500;
  c.engine.poll_interval_ms = 20;
  c.engine.retry_backoff_ms = 50;
  std::uint64_t at = 100;
  for (std::int64_t seq = 1; seq <= per_key; ++seq) {
    for (const char* key : {kA, kB}) {
      sim::CaseEvent e;
      e.at_ms = at;
      e.key = key;
      e.seq = seq;
      e.behaviour.duration_ms = duration_ms;
      c.events.push_back(e);
      at += gap_ms;
    }
  }
  c.run_ms = at + 2000;
  c.liveness_ms = 60'000;
  return c;
}

struct Outcome {
  std::vector<HistoryRecord> history;
  properties::CheckReport report;
  std::map<std::string, std::vector<std::string>> published;  // key -> entry ids in order
  std::map<std::string, std::vector<std::string>> effects;    // key -> effects list (entry ids)
  std::map<std::string, std::int64_t> dlq_length;
  bool liveness_reached = false;
};

// Runs the world to the end (liveness phase, graceful stop) and collects what scenarios assert.
Outcome finish(sim::World& world) {
  const sim::SimCase& c = world.sim_case();
  world.run_active();
  world.run_liveness();
  world.stop_engines();
  Outcome o;
  o.liveness_reached = world.stats().liveness_reached;
  for (const auto& key : c.keys) {
    const PartitionRef p{c.category, key};
    // The sink keeps field seq -> effect (the event id); seq order is commit order.
    const redis::Command hgetall{"HGETALL", redis::effects_hash_name(p, c.group)};
    const redis::Reply hash = world.redis().execute(hgetall);
    std::map<std::int64_t, std::string> by_seq;
    for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
      by_seq[std::stoll(hash.elements[i].str)] = hash.elements[i + 1].str;
    }
    for (const auto& [seq, effect] : by_seq) o.effects[key].push_back(effect);
    const redis::Command xlen{"XLEN", p.dlq()};
    o.dlq_length[key] = world.redis().execute(xlen).integer;
  }
  o.history = world.take_history();
  for (const auto& r : o.history) {
    if (r.op == HistoryOp::publish) o.published[r.key].push_back(r.event_id);
  }
  o.report = check_run_history(c, o.history);
  return o;
}

void expect_checker(Checks& checks, const Outcome& o) {
  std::string violated;
  for (const auto& f : o.report.violations) {
    violated += std::string(violated.empty() ? "" : "; ") + properties::property_name(f.property) +
                (f.key.empty() ? "" : " " + f.key) + ": " + f.explanation;
  }
  checks.expect(o.report.ok(), "history checker",
                o.report.ok() ? "order, fence, exclusion, no_loss, poison_halt, parallel hold (" +
                                    std::to_string(o.report.counters.records) + " records)"
                              : violated);
}

// Accepted commit seqs of `key`, in history order.
std::vector<std::int64_t> commits_of(const Outcome& o, const std::string& key) {
  std::vector<std::int64_t> out;
  for (const auto& r : o.history) {
    if (r.op == HistoryOp::commit && r.key == key) out.push_back(r.seq);
  }
  return out;
}

std::vector<std::int64_t> one_to(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = 1; i <= n; ++i) out.push_back(i);
  return out;
}

void expect_applied_in_order(Checks& checks, const Outcome& o, const std::string& key,
                             std::int64_t n, const std::string& what) {
  const bool effects_ok = o.effects.count(key) != 0 && o.published.count(key) != 0 &&
                          o.effects.at(key) == o.published.at(key);
  const bool commits_ok = commits_of(o, key) == one_to(n);
  checks.expect(effects_ok && commits_ok, what,
                effects_ok && commits_ok
                    ? key + " applied 1.." + std::to_string(n) + " in published order"
                    : key + " applied " + std::to_string(o.effects.count(key) ? o.effects.at(key).size() : 0) +
                          " effects, commits in history order do not equal 1.." + std::to_string(n));
}

// Executions (enter..exit, or ..crash of the node) of one key that overlap in history order,
// among executions of DIFFERENT events. Returns the number of overlapping pairs.
struct Execution {
  std::string node;
  std::string event;
  std::uint64_t generation = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = ~0ull;
};
std::vector<Execution> executions(const Outcome& o, const std::string& key) {
  std::vector<Execution> out;
  std::map<std::string, std::size_t> open;  // node -> index
  for (const auto& r : o.history) {
    if (r.op == HistoryOp::fault && !r.node.empty() && r.detail.rfind("crash", 0) == 0) {
      auto it = open.find(r.node);
      if (it != open.end()) out[it->second].end = r.index;
      open.erase(r.node);
    }
    if (r.key != key) continue;
    if (r.op == HistoryOp::enter) {
      open[r.node] = out.size();
      out.push_back(Execution{r.node, r.event_id, r.generation, r.index});
    } else if (r.op == HistoryOp::exit) {
      auto it = open.find(r.node);
      if (it != open.end()) out[it->second].end = r.index;
      open.erase(r.node);
    }
  }
  return out;
}

std::uint64_t overlapping_pairs(const std::vector<Execution>& a, const std::vector<Execution>& b,
                                bool different_events) {
  std::uint64_t n = 0;
  for (const auto& x : a) {
    for (const auto& y : b) {
      if (&x == &y) continue;
      if (different_events && x.event == y.event) continue;
      if (x.begin < y.end && y.begin < x.end) ++n;
    }
  }
  return n;
}

// --- the scenarios --------------------------------------------------------------------------

ScenarioResult per_key_order(ScenarioContext& ctx) {
  Checks checks(ctx);
  sim::World world(two_key_case(ctx.seed, "per_key_order", 20, 7, 5));
  world.start();
  const Outcome o = finish(world);
  expect_applied_in_order(checks, o, kA, 20, "per-key order");
  expect_applied_in_order(checks, o, kB, 20, "per-key order");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult no_concurrent_entry(ScenarioContext& ctx) {
  Checks checks(ctx);
  // Long handlers and a crash and restart of each instance in turn move both keys between
  // instances while events are in flight.
  sim::SimCase c = two_key_case(ctx.seed, "no_concurrent_entry", 30, 100, 60);
  c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::crash, 1000, 0, 1500, 0, 0});
  c.schedule.faults.push_back(sim::TimedFault{sim::FaultKind::crash, 5000, 1, 1000, 0, 0});
  sim::World world(c);
  world.start();
  const Outcome o = finish(world);
  for (const char* key : {kA, kB}) {
    const auto runs = executions(o, key);
    std::set<std::string> nodes;
    for (const auto& e : runs) nodes.insert(e.node);
    const std::uint64_t overlaps = overlapping_pairs(runs, runs, true);
    checks.expect(overlaps == 0 && nodes.size() >= 2, "no concurrent entry",
                  std::string(key) + ": " + std::to_string(runs.size()) + " executions on " +
                      std::to_string(nodes.size()) + " engine incarnations, " + std::to_string(overlaps) +
                      " overlapping pairs of different events (the history marker is cross-instance)");
  }
  expect_applied_in_order(checks, o, kA, 30, "per-key order");
  expect_applied_in_order(checks, o, kB, 30, "per-key order");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult cross_key_parallelism(ScenarioContext& ctx) {
  Checks checks(ctx);
  sim::World world(two_key_case(ctx.seed, "cross_key_parallelism", 20, 5, 30));
  world.start();
  const Outcome o = finish(world);
  const auto a = executions(o, kA);
  const auto b = executions(o, kB);
  const std::uint64_t overlaps = overlapping_pairs(a, b, false);
  std::set<std::string> a_nodes, b_nodes;
  for (const auto& e : a) a_nodes.insert(e.node);
  for (const auto& e : b) b_nodes.insert(e.node);
  checks.expect(overlaps > 0, "cross-key parallelism",
                "client-A and client-B processing windows overlap " + std::to_string(overlaps) +
                    " times (client-A on " + std::to_string(a_nodes.size()) +
                    " instance(s), client-B on " + std::to_string(b_nodes.size()) + ")");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult poison_halt(ScenarioContext& ctx) {
  Checks checks(ctx);
  sim::SimCase c = two_key_case(ctx.seed, "poison_halt", 12, 10, 5);
  const std::int64_t poison_seq = 3;
  for (auto& e : c.events) {
    if (e.key == kA && e.seq == poison_seq) e.behaviour.poison = true;
  }
  c.liveness_ms = 10'000;
  sim::World world(c);
  world.start();
  const Outcome o = finish(world);
  std::string poison_id;
  if (o.published.count(kA) && o.published.at(kA).size() >= poison_seq) {
    poison_id = o.published.at(kA)[poison_seq - 1];
  }
  bool halted = false;
  for (const auto& r : o.history) halted = halted || (r.op == HistoryOp::halt && r.key == kA && r.event_id == poison_id);
  const auto a_commits = commits_of(o, kA);
  const bool nothing_after =
      std::none_of(a_commits.begin(), a_commits.end(), [](std::int64_t s) { return s >= poison_seq; });
  checks.expect(halted, "halt on poison", "client-A halted on its head " + poison_id + " (seq 3)");
  checks.expect(nothing_after && a_commits == one_to(poison_seq - 1), "halt is partition-scoped",
                "client-A applied " + std::to_string(a_commits.size()) +
                    " events, none past the poison head");
  checks.expect(o.dlq_length.at(kA) == 0 && o.dlq_length.at(kB) == 0, "no auto-DLQ",
                "XLEN order:client-A:dlq = " + std::to_string(o.dlq_length.at(kA)));
  expect_applied_in_order(checks, o, kB, 12, "client-B keeps flowing");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult crash_failover(ScenarioContext& ctx) {
  Checks checks(ctx);
  sim::SimCase c = two_key_case(ctx.seed, "crash_failover", 20, 20, 30);
  sim::World world(c);
  world.start();
  // Kill the instance that owns client-A while it is inside one of client-A's events.
  std::int64_t seq = 0;
  const bool caught = world.run_until(
      [&] { return world.inside(kA, &seq).has_value() && seq >= 5; }, c.run_ms);
  std::string victim;
  std::string victim_event;
  if (checks.expect(caught, "crash mid-stream", caught ? "owner of client-A is inside seq " + std::to_string(seq)
                                                        : "owner of client-A never seen inside an event")) {
    const std::uint32_t instance = *world.inside(kA);
    victim = world.owner_id(instance);
    world.inject(sim::TimedFault{sim::FaultKind::crash, world.now_ms(), instance, 3000, 0, 0});
  }
  const Outcome o = finish(world);
  // Another instance claims client-A, reclaims the dead owner's pending entries, resumes in order.
  std::uint64_t crash_index = 0;
  for (const auto& r : o.history) {
    if (r.op == HistoryOp::fault && r.node == victim && r.detail.rfind("crash", 0) == 0) crash_index = r.index;
  }
  std::string claimer;
  std::string reclaimed;
  for (const auto& r : o.history) {
    if (r.index <= crash_index || r.key != kA) continue;
    if (r.op == HistoryOp::acquire && claimer.empty() && r.node != victim) claimer = r.node;
    if (r.op == HistoryOp::reclaim && r.node == claimer && r.detail != "count=0" && reclaimed.empty()) {
      reclaimed = r.detail;
    }
  }
  checks.expect(!claimer.empty() && !victim.empty(), "another instance claims",
                claimer.empty() ? "nobody acquired client-A after the crash"
                                : claimer + " acquired client-A after " + victim + " crashed");
  checks.expect(!reclaimed.empty(), "reclaims pending entries",
                reclaimed.empty() ? "no reclaim with a count > 0" : claimer + " reclaimed " + reclaimed);
  expect_applied_in_order(checks, o, kA, 20, "no loss, order preserved");
  expect_applied_in_order(checks, o, kB, 20, "no loss, order preserved");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult stall_failover(ScenarioContext& ctx) {
  Checks checks(ctx);
  sim::SimCase c = two_key_case(ctx.seed, "stall_failover", 20, 20, 10);
  // client-A's 5th event runs past the lease; when its owner is inside it, the heartbeat freezes.
  const std::int64_t slow_seq = 5;
  for (auto& e : c.events) {
    if (e.key == kA && e.seq == slow_seq) e.behaviour.slow_ms = 2 * c.engine.lease_ttl_ms;
  }
  sim::World world(c);
  world.start();
  std::int64_t seq = 0;
  const bool caught =
      world.run_until([&] { return world.inside(kA, &seq).has_value() && seq == slow_seq; }, c.run_ms);
  std::string stale;
  std::uint64_t stale_generation = 0;
  if (checks.expect(caught, "stall the owner past its lease",
                    caught ? "owner of client-A inside seq 5" : "owner never inside client-A seq 5")) {
    const std::uint32_t instance = *world.inside(kA);
    stale = world.owner_id(instance);
    world.inject(sim::TimedFault{sim::FaultKind::heartbeat_stall, world.now_ms(), instance,
                                 3 * c.engine.lease_ttl_ms, 0, 0});
  }
  const Outcome o = finish(world);
  std::string slow_id;
  if (o.published.count(kA) && o.published.at(kA).size() >= slow_seq) slow_id = o.published.at(kA)[slow_seq - 1];
  std::string taker;
  bool refused = false;
  bool entered_next = false;
  for (const auto& r : o.history) {
    if (r.key != kA) continue;
    if (r.node == stale && r.op == HistoryOp::enter && r.event_id == slow_id) stale_generation = r.generation;
    if (r.op == HistoryOp::acquire && r.node != stale && stale_generation > 0 && taker.empty()) taker = r.node;
    if (r.node != stale || r.generation != stale_generation || stale_generation == 0) continue;
    if (r.op == HistoryOp::read_fenced || r.op == HistoryOp::ack_fenced || r.op == HistoryOp::commit_fenced) {
      refused = true;
    }
    if (r.op == HistoryOp::enter && r.event_id != slow_id) entered_next = entered_next || !taker.empty();
  }
  checks.expect(!taker.empty(), "second instance takes the partition",
                taker.empty() ? "nobody took client-A" : taker + " acquired client-A while " + stale + " was stale");
  checks.expect(refused, "the fence holds",
                refused ? "the resumed stale owner's fenced read/ack/commit was rejected (generation " +
                              std::to_string(stale_generation) + ")"
                        : "no fenced rejection of the stale owner recorded");
  checks.expect(!entered_next, "stale owner never reaches client-A's next event",
                entered_next ? stale + " entered another client-A event under its stale generation"
                             : stale + " entered no client-A event after seq 5 under generation " +
                                   std::to_string(stale_generation));
  expect_applied_in_order(checks, o, kA, 20, "committed order intact");
  expect_checker(checks, o);
  return checks.result();
}

}  // namespace

std::vector<Scenario> engine_scenarios() {
  return {
      {"per_key_order",
       "Strict per-key order: for each key the handler applies its events in published order",
       per_key_order, {}},
      {"no_concurrent_entry",
       "No concurrent entry: two different events of one key never overlap in the handler, "
       "across instances",
       no_concurrent_entry, {}},
      {"cross_key_parallelism",
       "Cross-key parallelism preserved: client-A and client-B are in their handlers at the same "
       "time",
       cross_key_parallelism, {}},
      {"poison_halt",
       "Halt on poison is partition-scoped: client-A stops at its poison head, nothing goes to "
       "the DLQ, client-B completes",
       poison_halt, {}},
      {"crash_failover",
       "Crash failover: another instance claims the partition, reclaims the dead owner's pending "
       "entries, no loss, order preserved",
       crash_failover, {}},
      {"stall_failover",
       "Stall failover: the resumed stale owner's fenced read/ack is rejected and it never "
       "reaches the next event",
       stall_failover, {}},
  };
}

}  // namespace seqby::scenarios
