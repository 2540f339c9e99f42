// What the engine scenario files (engine_scenarios.cpp, ops_scenarios.cpp, pm_scenarios.cpp)
// share: the checker's verdict as an assertion, a key's commit seqs, its handler executions (read
// from the checker's HistoryIndex), the in-progress marker check, and the two forms of a scenario.
#include "engine_backend.h"
#include "seqby/properties/history_index.h"

namespace seqby::scenarios::engine {

void expect_checker(Checks& checks, const Outcome& o) {
  std::string violated;
  for (const auto& f : o.report.violations) {
    violated += std::string(violated.empty() ? "" : "; ") + properties::property_name(f.property) +
                (f.key.empty() ? "" : " " + f.key) + ": " + f.explanation;
  }
  checks.expect(o.report.ok(), "history checker",
                o.report.ok() ? "every judged property holds (" +
                                    std::to_string(o.report.counters.records) + " records)"
                              : violated);
}

sim::SimCase two_instance_case(std::uint64_t seed, const std::string& name,
                               const std::string& group, std::vector<std::string> keys) {
  sim::SimCase c;
  c.seed = seed;
  c.scenario = name;
  c.group = group;
  c.instance_count = 2;
  c.keys = std::move(keys);
  c.engine.discovery_interval_ms = 500;
  c.engine.poll_interval_ms = 20;
  c.engine.retry_backoff_ms = 50;
  c.liveness_ms = 60'000;
  return c;
}

std::vector<std::int64_t> commits_of(const Outcome& o, const std::string& key,
                                     const std::string& category) {
  std::vector<std::int64_t> out;
  for (const auto& r : o.history) {
    if (r.op != HistoryOp::commit || r.key != key) continue;
    if (category.empty() || r.category == category) out.push_back(r.seq);
  }
  return out;
}

std::vector<Execution> executions(const Outcome& o, const std::string& key) {
  const properties::HistoryIndex index = properties::HistoryIndex::build(o.history);
  std::vector<Execution> out;
  for (const properties::IndexedExecution& e : index.executions()) {
    if (index.units()[e.unit].key != key) continue;
    const HistoryRecord& enter = index.record(e.enter);
    out.push_back(Execution{enter.node, enter.category, enter.event_id, enter.generation,
                            enter.index,
                            e.end == properties::kNoPosition ? ~0ull : index.record(e.end).index});
  }
  return out;
}

std::uint64_t overlapping_pairs(const std::vector<Execution>& a, const std::vector<Execution>& b,
                                bool different_events) {
  std::uint64_t n = 0;
  for (const auto& x : a) {
    for (const auto& y : b) {
      if (&x == &y) continue;
      if (different_events && x.event == y.event && x.category == y.category) continue;
      if (x.begin < y.end && y.begin < x.end) ++n;
    }
  }
  return n;
}

void expect_inprogress_marker(Checks& checks, EngineBackend& b, const std::string& key,
                              std::int64_t seq, const std::string& category) {
  const std::string event =
      (category.empty() ? "" : category + ":") + key + " seq " + std::to_string(seq);
  const std::optional<std::string> owner = b.wait_inside(key, seq, category);
  const std::string id = b.event_id(key, seq, category);
  if (!checks.expect(owner.has_value(), "in-progress marker",
                     owner ? event + " inside " + *owner : "no instance seen inside " + event)) {
    return;
  }
  const std::string lease = b.lease_owner(key);
  if (b.has_inprogress_marker()) {
    const std::optional<std::string> marker = b.marker_seen_inside();
    const std::string expected = b.marker_value(*owner, key, seq, category);
    checks.expect(marker == expected && lease == *owner, "in-progress marker names owner and event",
                  "marker " + marker.value_or("(none)") + ", lease held by " + lease +
                      ", expected " + expected);
  } else {
    checks.expect(lease == *owner, "in-progress owner holds the lease",
                  *owner + " inside " + event + ", lease held by " + lease +
                      " (simulator: no Redis marker key)");
  }
  const bool done = b.wait_done(key, seq, category);
  const std::optional<std::string> after = b.inprogress_marker(key);
  const std::string named = b.marker_value("", key, seq, category);  // ":EVENT_ID" or ":C:ID"
  const bool moved = !after || !after->ends_with(named);
  checks.expect(done && moved, "in-progress marker released once the event is done",
                done ? event + " committed; marker now " + after.value_or("(none)")
                     : event + " never finished");
}

Scenario both_forms(const char* name, const char* summary, EngineScenarioFn fn) {
  return Scenario{name, summary,
                  [fn](ScenarioContext& ctx) {
                    auto backend = make_sim_backend(ctx.seed);
                    return fn(ctx, *backend);
                  },
                  [fn, name](ScenarioContext& ctx) {
                    auto backend = make_redis_backend(ctx, name);
                    return fn(ctx, *backend);
                  }};
}

}  // namespace seqby::scenarios::engine
