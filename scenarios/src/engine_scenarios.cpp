// The engine scenarios of the ADR's acceptance list ("Mapping each guarantee to the test"), each
// written once and run on either backend (engine_backend.h): on the simulator (two engine
// instances in a World, the very Lua scripts real Redis runs) or on a real redis-server (two
// `seqby worker` processes). A scenario is its plan (two keys, client-A and client-B, events
// interleaved, some slow or poison), the fault it strikes (a crash or a stall of whoever owns
// client-A, at the moment that owner is inside a given event) and its assertions, in the ADR's
// words, plus the history checker finding every property holding.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "engine_backend.h"
#include "seqby/core/check.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {
namespace {

using engine::both_forms;
using engine::Checks;
using engine::commits_of;
using engine::EngineBackend;
using engine::executions;
using engine::expect_checker;
using engine::expect_inprogress_marker;
using engine::Outcome;
using engine::overlapping_pairs;

constexpr const char* kA = "client-A";
constexpr const char* kB = "client-B";

// Two instances, client-A and client-B, `per_key` events each, interleaved A1 B1 A2 B2 ...
// (`gap_ms` apart on the simulator; real Redis publishes them up front).
sim::SimCase two_key_case(std::uint64_t seed, const std::string& name, std::int64_t per_key,
                          std::uint64_t gap_ms, std::uint64_t duration_ms) {
  sim::SimCase c = engine::two_instance_case(seed, name, "billing", {kA, kB});
  c.category = "order";
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
  return c;
}

sim::EventBehaviour& behaviour_of(sim::SimCase& c, const std::string& key, std::int64_t seq) {
  for (auto& e : c.events) {
    if (e.key == key && e.seq == seq) return e.behaviour;
  }
  SEQBY_CHECK(false);
  return c.events.front().behaviour;
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
                    : key + " applied " +
                          std::to_string(o.effects.count(key) ? o.effects.at(key).size() : 0) +
                          " effects, commits in history order do not equal 1.." +
                          std::to_string(n));
}

// --- the scenarios --------------------------------------------------------------------------

ScenarioResult per_key_order(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  if (!b.start(two_key_case(ctx.seed, "per_key_order", 20, 7, 5), checks)) return checks.result();
  const Outcome o = b.finish(checks);
  expect_applied_in_order(checks, o, kA, 20, "per-key order");
  expect_applied_in_order(checks, o, kB, 20, "per-key order");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult no_concurrent_entry(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  // Long handlers and a crash and restart of client-A's owner, then of client-B's, move both
  // keys between instances while events are in flight. The struck events and the one whose
  // in-progress marker is read are slow, so the moment is easy to meet.
  sim::SimCase c = two_key_case(ctx.seed, "no_concurrent_entry", 30, 100, 60);
  behaviour_of(c, kA, 3).slow_ms = 300;
  behaviour_of(c, kA, 5).slow_ms = 400;
  behaviour_of(c, kB, 25).slow_ms = 400;
  if (!b.start(c, checks)) return checks.result();
  expect_inprogress_marker(checks, b, kA, 3);
  const struct {
    const char* key;
    std::int64_t seq;
    std::uint64_t restart_after_ms;
  } strikes[] = {{kA, 5, 1500}, {kB, 25, 1000}};
  for (const auto& strike : strikes) {
    const std::optional<std::string> owner = b.wait_inside(strike.key, strike.seq);
    if (checks.expect(owner.has_value(), "crash an owner mid-event",
                      owner
                          ? *owner + " inside " + strike.key + " seq " + std::to_string(strike.seq)
                          : std::string("nobody seen inside ") + strike.key)) {
      b.crash(*owner, strike.restart_after_ms);
    }
  }
  const Outcome o = b.finish(checks);
  for (const char* key : {kA, kB}) {
    const auto runs = executions(o, key);
    std::set<std::string> nodes;
    for (const auto& e : runs) nodes.insert(e.node);
    const std::uint64_t overlaps = overlapping_pairs(runs, runs, true);
    checks.expect(
        overlaps == 0 && nodes.size() >= 2, "no concurrent entry",
        std::string(key) + ": " + std::to_string(runs.size()) + " executions on " +
            std::to_string(nodes.size()) + " engine incarnations, " + std::to_string(overlaps) +
            " overlapping pairs of different events (the history marker is cross-instance)");
  }
  expect_applied_in_order(checks, o, kA, 30, "per-key order");
  expect_applied_in_order(checks, o, kB, 30, "per-key order");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult cross_key_parallelism(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  if (!b.start(two_key_case(ctx.seed, "cross_key_parallelism", 20, 5, 30), checks)) {
    return checks.result();
  }
  const Outcome o = b.finish(checks);
  const auto a = executions(o, kA);
  const auto bs = executions(o, kB);
  const std::uint64_t overlaps = overlapping_pairs(a, bs, false);
  std::set<std::string> a_nodes, b_nodes;
  for (const auto& e : a) a_nodes.insert(e.node);
  for (const auto& e : bs) b_nodes.insert(e.node);
  checks.expect(overlaps > 0, "cross-key parallelism",
                "client-A and client-B processing windows overlap " + std::to_string(overlaps) +
                    " times (client-A on " + std::to_string(a_nodes.size()) +
                    " instance(s), client-B on " + std::to_string(b_nodes.size()) + ")");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult poison_halt(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  sim::SimCase c = two_key_case(ctx.seed, "poison_halt", 12, 10, 30);
  const std::int64_t poison_seq = 3;
  behaviour_of(c, kA, poison_seq).poison = true;
  c.liveness_ms = 10'000;
  if (!b.start(c, checks)) return checks.result();
  const Outcome o = b.finish(checks);
  std::string poison_id;
  if (o.published.count(kA) && o.published.at(kA).size() >= poison_seq) {
    poison_id = o.published.at(kA)[poison_seq - 1];
  }
  bool halted = false;
  for (const auto& r : o.history)
    halted = halted || (r.op == HistoryOp::halt && r.key == kA && r.event_id == poison_id);
  const auto a_commits = commits_of(o, kA);
  const bool nothing_after = std::none_of(a_commits.begin(), a_commits.end(),
                                          [](std::int64_t s) { return s >= poison_seq; });
  checks.expect(halted, "halt on poison", "client-A halted on its head " + poison_id + " (seq 3)");
  checks.expect(nothing_after && a_commits == one_to(poison_seq - 1), "halt is partition-scoped",
                "client-A applied " + std::to_string(a_commits.size()) +
                    " events, none past the poison head");
  const std::int64_t dlq_a = o.dlq_length.count(kA) ? o.dlq_length.at(kA) : -1;
  const std::int64_t dlq_b = o.dlq_length.count(kB) ? o.dlq_length.at(kB) : -1;
  checks.expect(dlq_a == 0 && dlq_b == 0, "no auto-DLQ",
                "XLEN " + o.dlq_name_of_first_key + " = " + std::to_string(dlq_a));
  expect_applied_in_order(checks, o, kB, 12, "client-B keeps flowing");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult crash_failover(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  sim::SimCase c = two_key_case(ctx.seed, "crash_failover", 20, 20, 30);
  // Kill the instance that owns client-A while it is inside client-A's (slow) 5th event.
  const std::int64_t strike_seq = 5;
  behaviour_of(c, kA, strike_seq).slow_ms = 300;
  if (!b.start(c, checks)) return checks.result();
  const std::optional<std::string> owner = b.wait_inside(kA, strike_seq);
  std::string victim;
  if (checks.expect(
          owner.has_value(), "crash mid-stream",
          owner ? "owner of client-A " + *owner + " is inside seq " + std::to_string(strike_seq)
                : "owner of client-A never seen inside an event")) {
    victim = *owner;
    b.crash(victim, 3000);
  }
  const Outcome o = b.finish(checks);
  // Another instance claims client-A, reclaims the dead owner's pending entries, resumes in order.
  std::uint64_t crash_index = 0;
  for (const auto& r : o.history) {
    if (properties::is_crash_of(r, victim)) crash_index = r.index;
  }
  std::string claimer;
  std::string reclaimed;
  for (const auto& r : o.history) {
    if (r.index <= crash_index || r.key != kA) continue;
    if (r.op == HistoryOp::acquire && claimer.empty() && r.node != victim) claimer = r.node;
    if (r.op == HistoryOp::reclaim && r.node == claimer && r.detail != "count=0" &&
        reclaimed.empty()) {
      reclaimed = r.detail;
    }
  }
  checks.expect(!claimer.empty() && !victim.empty(), "another instance claims",
                claimer.empty() ? "nobody acquired client-A after the crash"
                                : claimer + " acquired client-A after " + victim + " crashed");
  checks.expect(
      !reclaimed.empty(), "reclaims pending entries",
      reclaimed.empty() ? "no reclaim with a count > 0" : claimer + " reclaimed " + reclaimed);
  expect_applied_in_order(checks, o, kA, 20, "no loss, order preserved");
  expect_applied_in_order(checks, o, kB, 20, "no loss, order preserved");
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult stall_failover(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  sim::SimCase c = two_key_case(ctx.seed, "stall_failover", 20, 20, 10);
  // client-A's 5th event runs past the lease; when its owner is inside it, the owner stalls.
  const std::int64_t slow_seq = 5;
  behaviour_of(c, kA, slow_seq).slow_ms = 2 * b.lease_ttl_ms(c);
  if (!b.start(c, checks)) return checks.result();
  const std::optional<std::string> owner = b.wait_inside(kA, slow_seq);
  std::string stale;
  if (checks.expect(owner.has_value(), "stall the owner past its lease",
                    owner ? "owner of client-A " + *owner + " inside seq 5"
                          : "owner never inside client-A seq 5")) {
    stale = *owner;
    const std::string taker = b.stall(stale, kA);
    if (!taker.empty())
      checks.note(taker + " held client-A's lease while " + stale + " was stopped");
  }
  const Outcome o = b.finish(checks);
  std::string slow_id;
  if (o.published.count(kA) && o.published.at(kA).size() >= slow_seq)
    slow_id = o.published.at(kA)[slow_seq - 1];
  std::uint64_t stale_generation = 0;
  std::string taker;
  bool refused = false;
  bool entered_next = false;
  for (const auto& r : o.history) {
    if (r.key != kA) continue;
    if (r.node == stale && r.op == HistoryOp::enter && r.event_id == slow_id)
      stale_generation = r.generation;
    if (r.op == HistoryOp::acquire && r.node != stale && stale_generation > 0 && taker.empty())
      taker = r.node;
    if (r.node != stale || r.generation != stale_generation || stale_generation == 0) continue;
    if (r.op == HistoryOp::read_fenced || r.op == HistoryOp::ack_fenced ||
        r.op == HistoryOp::commit_fenced) {
      refused = true;
    }
    if (r.op == HistoryOp::enter && r.event_id != slow_id)
      entered_next = entered_next || !taker.empty();
  }
  checks.expect(!taker.empty(), "second instance takes the partition",
                taker.empty() ? "nobody took client-A"
                              : taker + " acquired client-A while " + stale + " was stale");
  checks.expect(refused, "the fence holds",
                refused
                    ? "the resumed stale owner's fenced read/ack/commit was rejected (generation " +
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
      both_forms("per_key_order",
                 "Strict per-key order: for each key the handler applies its events in published "
                 "order",
                 per_key_order),
      both_forms("no_concurrent_entry",
                 "No concurrent entry: two different events of one key never overlap in the "
                 "handler, across instances",
                 no_concurrent_entry),
      both_forms("cross_key_parallelism",
                 "Cross-key parallelism preserved: client-A and client-B are in their handlers at "
                 "the same time",
                 cross_key_parallelism),
      both_forms("poison_halt",
                 "Halt on poison is partition-scoped: client-A stops at its poison head, nothing "
                 "goes to the DLQ, client-B completes",
                 poison_halt),
      both_forms("crash_failover",
                 "Crash failover: another instance claims the partition, reclaims the dead owner's "
                 "pending entries, no loss, order preserved",
                 crash_failover),
      both_forms("stall_failover",
                 "Stall failover: the resumed stale owner's fenced read/ack is rejected and it "
                 "never reaches the next event",
                 stall_failover),
  };
}

}  // namespace seqby::scenarios
