// What the engine scenario files (engine_scenarios.cpp, ops_scenarios.cpp) share: the checker's
// verdict as an assertion, a key's commit seqs, and the two forms of a scenario.
#include "engine_backend.h"

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

std::vector<std::int64_t> commits_of(const Outcome& o, const std::string& key) {
  std::vector<std::int64_t> out;
  for (const auto& r : o.history) {
    if (r.op == HistoryOp::commit && r.key == key) out.push_back(r.seq);
  }
  return out;
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
