// The ADR's acceptance item "Process manager serializes per instance" (decision 2), written once
// and run on either backend (engine_backend.h). A process manager correlated by order id
// subscribes to the order and payment categories; order and payment events for two correlation
// values are published interleaved. One instance owns a correlation value at a time through one
// lease spanning order:X and payment:X, so no two events of X are ever in the handler at once,
// while the two correlation values progress in parallel. A crash of X1's owner and a stall of
// X2's owner during process-manager work lose nothing and keep each stream's order.
#include <map>
#include <optional>
#include <set>

#include "engine_backend.h"
#include "seqby/core/check.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {
namespace {

using engine::Checks;
using engine::EngineBackend;
using engine::Outcome;

constexpr const char* kPm = "fulfil";
constexpr const char* kOrder = "order";
constexpr const char* kPayment = "payment";
constexpr const char* kX1 = "order-1";
constexpr const char* kX2 = "order-2";
constexpr std::int64_t kPerStream = 8;

// Two instances of process manager `fulfil` over order and payment; for seq 1..kPerStream the
// events order:X1, payment:X1, order:X2, payment:X2 are published `gap_ms` apart.
sim::SimCase pm_case(std::uint64_t seed) {
  sim::SimCase c = engine::two_instance_case(seed, "pm_per_instance", kPm, {kX1, kX2});
  c.category = "";
  c.pm_categories = {kOrder, kPayment};
  std::uint64_t at = 100;
  for (std::int64_t seq = 1; seq <= kPerStream; ++seq) {
    for (const char* key : {kX1, kX2}) {
      for (const char* category : {kOrder, kPayment}) {
        sim::CaseEvent e;
        e.at_ms = at;
        e.category = category;
        e.key = key;
        e.seq = seq;
        e.behaviour.duration_ms = 40;
        c.events.push_back(e);
        at += 25;
      }
    }
  }
  c.run_ms = at + 2000;
  return c;
}

sim::EventBehaviour& behaviour_of(sim::SimCase& c, const std::string& category,
                                  const std::string& key, std::int64_t seq) {
  for (auto& e : c.events) {
    if (e.category == category && e.key == key && e.seq == seq) return e.behaviour;
  }
  SEQBY_CHECK(false);
  return c.events.front().behaviour;
}

std::string stream(const std::string& category, const std::string& key) {
  return category + ":" + key;
}

// Each of X's streams applied 1..kPerStream in published order: its effects are its published
// entry ids, and its accepted commits in history order are 1, 2, ...
void expect_streams_in_order(Checks& checks, const Outcome& o, const std::string& key) {
  for (const char* category : {kOrder, kPayment}) {
    const std::string name = stream(category, key);
    const auto effects = o.effects.find(name);
    const auto published = o.published.find(name);
    const bool effects_ok = effects != o.effects.end() && published != o.published.end() &&
                            published->second.size() == kPerStream &&
                            effects->second == published->second;
    std::vector<std::int64_t> expected;
    for (std::int64_t seq = 1; seq <= kPerStream; ++seq) expected.push_back(seq);
    const bool commits_ok = engine::commits_of(o, key, category) == expected;
    const std::size_t applied = effects == o.effects.end() ? 0 : effects->second.size();
    checks.expect(effects_ok && commits_ok, "per-category order, nothing lost",
                  effects_ok && commits_ok
                      ? name + " applied 1.." + std::to_string(kPerStream) + " in published order"
                      : name + " applied " + std::to_string(applied) +
                            " effects; commits in history order are not 1.." +
                            std::to_string(kPerStream));
  }
}

// The executions of X under the generations that were current when they ran: a generation's
// executions up to its first refused (fenced) step. A stalled owner's execution that outlived its
// lease is the ADR's admitted residue and is judged by the checker (stale_overlap), not here.
std::vector<engine::Execution> current_executions(const Outcome& o, const std::string& key) {
  std::set<std::pair<std::string, std::uint64_t>> stale;  // (node, generation) found stale
  std::map<std::string, std::uint64_t> stale_from;        // node:generation -> index
  for (const auto& r : o.history) {
    if (r.key != key) continue;
    if (r.op == HistoryOp::read_fenced || r.op == HistoryOp::ack_fenced ||
        r.op == HistoryOp::commit_fenced || r.op == HistoryOp::lose) {
      if (stale.insert({r.node, r.generation}).second) {
        stale_from[r.node + ":" + std::to_string(r.generation)] = r.index;
      }
    }
  }
  std::vector<engine::Execution> out;
  for (const auto& e : engine::executions(o, key)) {
    auto it = stale_from.find(e.node + ":" + std::to_string(e.generation));
    // An execution still open when its generation was found stale outlived its lease.
    if (it != stale_from.end() && e.end > it->second) continue;
    out.push_back(e);
  }
  return out;
}

ScenarioResult pm_per_instance(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  sim::SimCase c = pm_case(ctx.seed);
  // The events struck are slow, so the moment is easy to meet.
  behaviour_of(c, kPayment, kX1, 3).slow_ms = 300;
  behaviour_of(c, kOrder, kX2, 5).slow_ms = 2 * b.lease_ttl_ms(c);
  if (!b.start(c, checks)) return checks.result();

  // One marker for the correlation value, whichever category's event is inside.
  engine::expect_inprogress_marker(checks, b, kX1, 2, kPayment);

  // Crash X1's owner inside payment:X1 seq 3; a new instance comes up after 1.5 s.
  std::string crashed;
  const std::optional<std::string> x1_owner = b.wait_inside(kX1, 3, kPayment);
  if (checks.expect(x1_owner.has_value(), "crash during process-manager work",
                    x1_owner ? *x1_owner + " crashed inside payment:" + std::string(kX1) + " seq 3"
                             : "nobody seen inside payment:" + std::string(kX1) + " seq 3")) {
    crashed = *x1_owner;
    b.crash(crashed, 1500);
  }
  // Stall X2's owner inside order:X2 seq 5 past its lease, then let it run on.
  std::string stalled;
  const std::optional<std::string> x2_owner = b.wait_inside(kX2, 5, kOrder);
  if (checks.expect(x2_owner.has_value(), "stall during process-manager work",
                    x2_owner ? *x2_owner + " stopped inside order:" + std::string(kX2) + " seq 5"
                             : "nobody seen inside order:" + std::string(kX2) + " seq 5")) {
    stalled = *x2_owner;
    const std::string taker = b.stall(stalled, kX2);
    if (!taker.empty())
      checks.note(taker + " held " + kX2 + "'s lease while " + stalled + " was stopped");
  }
  const Outcome o = b.finish(checks);

  // No two events of one correlation value in the handler at once, across categories and
  // instances (executions under a current lease; the checker judges the rest).
  for (const char* key : {kX1, kX2}) {
    const auto runs = current_executions(o, key);
    std::set<std::string> nodes, categories;
    for (const auto& e : runs) {
      nodes.insert(e.node);
      categories.insert(e.category);
    }
    const std::uint64_t overlaps = engine::overlapping_pairs(runs, runs, true);
    checks.expect(overlaps == 0 && categories.size() == 2 && nodes.size() >= 2,
                  "process manager serializes per instance",
                  std::string(key) + ": " + std::to_string(runs.size()) + " executions over " +
                      std::to_string(categories.size()) + " categories on " +
                      std::to_string(nodes.size()) + " engine incarnations, " +
                      std::to_string(overlaps) + " overlapping pairs of different events");
  }
  // Different correlation values progress in parallel.
  const std::uint64_t parallel =
      engine::overlapping_pairs(engine::executions(o, kX1), engine::executions(o, kX2), false);
  checks.expect(parallel > 0, "correlation values progress in parallel",
                std::string(kX1) + " and " + kX2 + " processing windows overlap " +
                    std::to_string(parallel) + " times");

  // The crashed owner's correlation value: taken over, its pending entries reclaimed.
  std::uint64_t crash_index = 0;
  for (const auto& r : o.history) {
    if (properties::is_crash_of(r, crashed)) crash_index = r.index;
  }
  std::string claimer;
  std::string reclaimed;
  for (const auto& r : o.history) {
    if (crashed.empty() || r.index <= crash_index || r.key != kX1) continue;
    if (r.op == HistoryOp::acquire && claimer.empty() && r.node != crashed) claimer = r.node;
    if (r.op == HistoryOp::reclaim && r.node == claimer && r.detail != "count=0" &&
        reclaimed.empty()) {
      reclaimed = r.category + ":" + r.key + " " + r.detail;
    }
  }
  checks.expect(!claimer.empty() && !reclaimed.empty(), "crash reclaim across the streams",
                claimer.empty()
                    ? "nobody acquired " + std::string(kX1) + " after the crash"
                    : claimer + " acquired " + kX1 + " after " + crashed +
                          " crashed and reclaimed " + (reclaimed.empty() ? "nothing" : reclaimed));

  // The stalled owner: fenced out on resuming, and it never enters another event of X2.
  std::string slow_id;
  const auto slow = o.published.find(stream(kOrder, kX2));
  if (slow != o.published.end() && slow->second.size() >= 5) slow_id = slow->second[4];
  // By generation, not by history position: on real Redis a record may reach the history
  // stream after the records of what followed it.
  std::uint64_t stale_generation = 0;
  std::uint64_t slow_enter_index = 0;
  for (const auto& r : o.history) {
    if (!stalled.empty() && r.key == kX2 && r.node == stalled && r.op == HistoryOp::enter &&
        r.category == kOrder && r.event_id == slow_id) {
      stale_generation = r.generation;
      slow_enter_index = r.index;
    }
  }
  bool taken = false;
  bool refused = false;
  bool entered_next = false;
  for (const auto& r : o.history) {
    if (stale_generation == 0 || r.key != kX2) continue;
    if (r.op == HistoryOp::acquire && r.node != stalled && r.generation > stale_generation) {
      taken = true;
    }
    if (r.node != stalled || r.generation != stale_generation) continue;
    if (r.op == HistoryOp::read_fenced || r.op == HistoryOp::ack_fenced ||
        r.op == HistoryOp::commit_fenced) {
      refused = true;
    }
    if (r.op == HistoryOp::enter && r.index > slow_enter_index) entered_next = true;
  }
  checks.expect(taken && refused && !entered_next, "stall fencing across the streams",
                !taken     ? "nobody took " + std::string(kX2) + " from the stalled " + stalled
                : !refused ? "no fenced refusal of " + stalled + " recorded"
                : entered_next
                    ? stalled + " entered another event of " + kX2 + " under its stale generation"
                    : stalled + "'s fenced steps under generation " +
                          std::to_string(stale_generation) +
                          " were refused; it entered no further event of " + kX2);

  expect_streams_in_order(checks, o, kX1);
  expect_streams_in_order(checks, o, kX2);
  const properties::PropertyStatus& pm = o.report.status(properties::Property::pm_exclusion);
  checks.expect(pm.checked, "pm_exclusion judged",
                pm.checked ? "the checker judged pm_exclusion over " + std::string(kPm) + " (" +
                                 std::to_string(o.report.counters.pm_stale_overlaps) +
                                 " stale overlaps, the admitted residue)"
                           : "not judged: " + pm.note);
  engine::expect_checker(checks, o);
  return checks.result();
}

}  // namespace

std::vector<Scenario> pm_scenarios() {
  return {engine::both_forms(
      "pm_per_instance",
      "Process manager serializes per instance: no two events of one correlation value in the "
      "handler at once across order and payment, values in parallel, crash and stall lose nothing",
      pm_per_instance)};
}

}  // namespace seqby::scenarios
