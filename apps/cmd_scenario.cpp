// seqby scenario: list the named scenarios of DESIGN.md section 7, or run one on the simulator
// (default) or against a real redis-server (--redis: real `seqby worker` processes started from
// this very executable, faults by SIGKILL and SIGSTOP/SIGCONT, the same checker). Exit status:
// 0 every assertion held, 1 one failed (an unreachable server included), 2 an unknown scenario
// name or a scenario without a real-Redis form.
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/ops_reap_race.h"

namespace seqby::apps {
namespace {

struct ScenarioOptions {
  std::string name;
  std::string redis_url;
  std::uint64_t seed = 1;
  std::string seeds;  // A..B: cold_partition_reaping's reap race campaign on the simulator
};

// The reap race campaign over a seed range (cold_partition_reaping --seeds A..B).
int run_reap_race(const ScenarioOptions& options) {
  SeedRange range;
  if (options.name != "cold_partition_reaping" || !options.redis_url.empty() ||
      !parse_seed_range(options.seeds, &range)) {
    std::cerr << "seqby scenario run: --seeds A..B runs only cold_partition_reaping's reap race "
                 "campaign, on the simulator\n";
    return kExitUsage;
  }
  const scenarios::ReapRaceResult r = scenarios::run_reap_race(range.first, range.last, 2);
  std::cout << scenarios::render_reap_race(r);
  const bool passed = r.failed_seeds.empty() && r.generation_reuses == 0 && r.reaps > 0;
  std::cout << "scenario cold_partition_reaping (sim, seeds " << options.seeds
            << "): " << (passed ? "passed" : "failed") << "\n";
  return passed ? kExitOk : kExitFailed;
}

// The path of this very executable (real-Redis scenarios spawn `seqby worker` processes).
std::string self_path() {
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return "seqby";
  return std::string(path, static_cast<std::size_t>(length));
}

std::string known_names() {
  std::string names;
  for (const auto& scenario : scenarios::all_scenarios()) {
    if (!names.empty()) names += ", ";
    names += scenario.name;
  }
  return names;
}

int list_scenarios() {
  for (const auto& scenario : scenarios::all_scenarios()) {
    std::cout << scenario.name << "  " << scenario.summary << "\n";
  }
  return kExitOk;
}

int run_scenario(const ScenarioOptions& options) {
  if (!options.seeds.empty()) return run_reap_race(options);
  const scenarios::Scenario* scenario = scenarios::find_scenario(options.name);
  if (scenario == nullptr) {
    std::cerr << "seqby scenario run: unknown scenario '" << options.name
              << "'; known scenarios: " << known_names() << "\n";
    return kExitUsage;
  }
  const bool on_redis = !options.redis_url.empty();
  if (on_redis && !scenario->run_redis) {
    std::cerr << "seqby scenario run: " << scenario->name
              << " has no real-Redis form yet; run it on the simulator (without --redis)\n";
    return kExitUsage;
  }
  scenarios::ScenarioContext context{std::cout, options.redis_url, options.seed, self_path()};
  const scenarios::ScenarioResult result =
      on_redis ? scenario->run_redis(context) : scenario->run_sim(context);
  for (const auto& failure : result.failures) {
    std::cout << "FAILED: " << failure << "\n";
  }
  const std::string where = on_redis ? "redis" : "sim, seed " + std::to_string(options.seed);
  std::cout << "scenario " << scenario->name << " (" << where
            << "): " << (result.passed() ? "passed" : "failed") << "\n";
  return result.passed() ? kExitOk : kExitFailed;
}

}  // namespace

void add_scenario_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ScenarioOptions>();
  CLI::App* cmd = app.add_subcommand(
      "scenario", "List the ADR's acceptance scenarios, or run one on the simulator or real Redis");
  cmd->require_subcommand(1);

  CLI::App* list = cmd->add_subcommand("list", "List every scenario with what it asserts");
  list->callback([&exit_code] { exit_code = list_scenarios(); });

  CLI::App* run = cmd->add_subcommand("run", "Run one scenario; exit 0 passed, 1 failed");
  run->add_option("NAME", options->name, "The scenario (seqby scenario list)")->required();
  run->add_option("--redis", options->redis_url,
                  "Run against this redis-server with real worker processes")
      ->type_name("URL")
      ->check(redis_url_validator());
  run->add_option("--seed", options->seed, "The simulator seed (ignored with --redis)")
      ->type_name("N")
      ->capture_default_str();
  run->add_option("--seeds", options->seeds,
                  "cold_partition_reaping only: the reap race campaign over seeds A..B")
      ->type_name("A..B");
  run->callback([&exit_code, options] { exit_code = run_scenario(*options); });
}

}  // namespace seqby::apps
