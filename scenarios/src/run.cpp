// run_case and check_determinism: one World run, judged.
#include "seqby/scenarios/run.h"

#include <chrono>

#include "seqby/properties/history_io.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios {

using properties::Property;

properties::CheckReport check_run_history(const sim::SimCase& c,
                                          const std::vector<HistoryRecord>& history,
                                          const RunOptions& options,
                                          properties::ReachedCounts* reached) {
  properties::CheckOptions check;
  check.skip = options.skip;
  check.reached = options.count_reached ? reached : nullptr;
  if (c.instance_count < 2 || c.keys.size() < 2) check.skip.push_back(Property::parallel);
  return properties::check_history(history, check);
}

RunResult run_case(const sim::SimCase& c, const RunOptions& options) {
  RunResult out;
  out.seed = c.seed;
  // Wall time around the run only: nothing inside the World reads it.
  const auto wall_start = std::chrono::steady_clock::now();
  {
    sim::WorldOptions world_options;
    world_options.key_layout = options.key_layout;
    world_options.cluster_shards = options.cluster_shards;
    world_options.lossy_failover_beside_replacement = options.lossy_failover_beside_replacement;
    sim::World world(c, world_options);
    world.run();
    out.history = world.take_history();
    const sim::WorldStats stats = world.stats();
    out.faults = world.faults();
    out.events_published = stats.events_published;
    out.slot_migrations = stats.slot_migrations;
    out.failovers = stats.failovers;
    out.lossy_failovers = stats.lossy_failovers;
    out.redirections = stats.redirections;
    out.events_committed = stats.events_committed;
    out.sim_ms = stats.sim_ms;
    out.scheduler_steps = stats.scheduler_steps;
    out.redis_commands = stats.redis_commands;
    out.restarts = stats.restarts;
    out.liveness_reached = stats.liveness_reached;
  }
  out.report = check_run_history(c, out.history, options, &out.reached);
  if (options.compute_history_sha256) out.history_sha256 = properties::history_sha256(out.history);
  const auto wall = std::chrono::steady_clock::now() - wall_start;
  out.wall_us = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(wall).count());
  out.wall_ms = out.wall_us / 1000;
  out.passed = out.report.ok();
  out.summary = render_run_text(c, out);
  return out;
}

DeterminismResult check_determinism(const sim::SimCase& c) {
  DeterminismResult d;
  const RunResult first = run_case(c);
  const RunResult second = run_case(c);
  d.sha256_first = first.history_sha256;
  d.sha256_second = second.history_sha256;
  d.same = d.sha256_first == d.sha256_second;
  if (auto diff = properties::first_difference(first.history, second.history)) {
    d.same = false;
    d.position = diff->position;
    d.first_line = diff->left;
    d.second_line = diff->right;
  }
  return d;
}

std::string render_run_text(const sim::SimCase& c, const RunResult& r) {
  std::string out;
  out += "case: " + sim::describe_case(c) + "\n";
  out += "run: " + std::string(r.passed ? "passed" : "FAILED") + ", events published " +
         std::to_string(r.events_published) + ", committed " + std::to_string(r.events_committed) +
         ", history records " + std::to_string(r.history.size()) + ", sim_ms " +
         std::to_string(r.sim_ms) + ", wall_ms " + std::to_string(r.wall_ms) + ", steps " +
         std::to_string(r.scheduler_steps) + ", redis commands " +
         std::to_string(r.redis_commands) + ", restarts " + std::to_string(r.restarts) +
         (r.liveness_reached ? "" : ", liveness phase ran out") + "\n";
  out += "faults: " + r.faults.to_string() + "\n";
  out += "history_sha256: " + (r.history_sha256.empty() ? "not computed" : r.history_sha256) + "\n";
  out += properties::render_report_text(r.report, &r.history);
  return out;
}

}  // namespace seqby::scenarios
