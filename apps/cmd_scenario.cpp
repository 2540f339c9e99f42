// seqby scenario: list the named scenarios of DESIGN.md section 7, or run one on the simulator
// (default) or against a real redis-server (--redis: real `seqby worker` processes started from
// this very executable, faults by SIGKILL and SIGSTOP/SIGCONT, the same checker). Exit status:
// 0 every assertion held, 1 one failed (an unreachable server included), 2 an unknown scenario
// name or a scenario without a real-Redis form.
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/junit.h"
#include "seqby/scenarios/ops_reap_race.h"

namespace seqby::apps {
namespace {

struct ScenarioOptions {
  std::string name;
  std::string redis_url;
  std::uint64_t seed = 1;
  std::string seeds;  // A..B: cold_partition_reaping's reap race campaign on the simulator
  std::string junit;  // --junit FILE
  std::string key_layout = "flat";  // --key-layout: the reap race campaign's brokers' layout
  bool cluster = false;             // --cluster: --redis is a node of a Redis Cluster
};

// --junit: the run as one test case "NAME (WHERE)", its failed assertions as the failure. false
// (said on stderr) when the file could not be written.
bool write_scenario_junit(const ScenarioOptions& options, const std::string& where,
                          const std::vector<std::string>& failures, double seconds) {
  if (options.junit.empty()) return true;
  scenarios::JunitSuite suite;
  suite.name = "seqby scenario run " + options.name;
  suite.classname = "seqby.scenario";
  suite.seconds = seconds;
  scenarios::JunitCase c{options.name + " (" + where + ")", seconds, !failures.empty(), "", ""};
  for (const std::string& failure : failures) {
    if (c.message.empty()) c.message = failure;
    c.details += "FAILED: " + failure + "\n";
  }
  suite.cases.push_back(std::move(c));
  const Status written = scenarios::write_junit(options.junit, suite);
  if (!written.ok()) std::cerr << "seqby scenario run: " << written.error().message << "\n";
  return written.ok();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The reap race campaign over a seed range (cold_partition_reaping --seeds A..B).
int run_reap_race(const ScenarioOptions& options) {
  SeedRange range;
  if (options.name != "cold_partition_reaping" || !options.redis_url.empty() ||
      !parse_seed_range(options.seeds, &range)) {
    std::cerr << "seqby scenario run: --seeds A..B runs only cold_partition_reaping's reap race "
                 "campaign, on the simulator\n";
    return kExitUsage;
  }
  const std::optional<KeyLayout> layout = parse_key_layout(options.key_layout);
  if (!layout.has_value()) {
    std::cerr << "seqby scenario run: --key-layout '" << options.key_layout
              << "': unknown layout (known: flat, cluster)\n";
    return kExitUsage;
  }
  const auto start = std::chrono::steady_clock::now();
  const scenarios::ReapRaceResult r = scenarios::run_reap_race(range.first, range.last, 2, *layout);
  std::cout << scenarios::render_reap_race(r);
  const bool passed = r.failed_seeds.empty() && r.generation_reuses == 0 && r.reaps > 0;
  std::cout << "scenario cold_partition_reaping (sim, seeds " << options.seeds
            << "): " << (passed ? "passed" : "failed") << "\n";
  std::vector<std::string> failures = r.failures;
  if (!passed && failures.empty()) {
    failures.push_back(r.reaps == 0 ? "no reap happened" : "a (key, generation) acquired twice");
  }
  if (!write_scenario_junit(options, "sim, seeds " + options.seeds, failures,
                            seconds_since(start))) {
    return kExitUsage;
  }
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
  if (!options.junit.empty()) {
    const Status writable = scenarios::check_junit_path(options.junit);
    if (!writable.ok()) {
      std::cerr << "seqby scenario run: " << writable.error().message << "\n";
      return kExitUsage;
    }
  }
  if (!options.seeds.empty()) return run_reap_race(options);
  const scenarios::Scenario* scenario = scenarios::find_scenario(options.name);
  if (scenario == nullptr) {
    std::cerr << "seqby scenario run: unknown scenario '" << options.name
              << "'; known scenarios: " << known_names() << "\n";
    return kExitUsage;
  }
  const bool on_redis = !options.redis_url.empty();
  if (options.cluster && !on_redis) {
    std::cerr << "seqby scenario run: --cluster applies only with --redis\n";
    return kExitUsage;
  }
  if (on_redis && !scenario->run_redis) {
    std::cerr << "seqby scenario run: " << scenario->name
              << " has no real-Redis form yet; run it on the simulator (without --redis)\n";
    return kExitUsage;
  }
  const auto start = std::chrono::steady_clock::now();
  scenarios::ScenarioContext context{std::cout, options.redis_url, options.seed, self_path(),
                                     options.cluster};
  const scenarios::ScenarioResult result =
      on_redis ? scenario->run_redis(context) : scenario->run_sim(context);
  for (const auto& failure : result.failures) {
    std::cout << "FAILED: " << failure << "\n";
  }
  const std::string where = on_redis ? "redis" : "sim, seed " + std::to_string(options.seed);
  std::cout << "scenario " << scenario->name << " (" << where
            << "): " << (result.passed() ? "passed" : "failed") << "\n";
  if (!write_scenario_junit(options, where, result.failures, seconds_since(start))) {
    return kExitUsage;
  }
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
  run->add_flag("--cluster", options->cluster,
                "With --redis: it is one node of a Redis Cluster; the workers run with --cluster "
                "--key-layout cluster and the scenario reads every master");
  run->add_option("--seed", options->seed, "The simulator seed (ignored with --redis)")
      ->type_name("N")
      ->capture_default_str();
  run->add_option("--seeds", options->seeds,
                  "cold_partition_reaping only: the reap race campaign over seeds A..B")
      ->type_name("A..B");
  run->add_option("--key-layout", options->key_layout,
                  "With --seeds: the brokers' key layout, flat or cluster (the simulated server "
                  "then refuses a script or command across hash slots)")
      ->type_name("LAYOUT");
  run->add_option("--junit", options->junit,
                  "Also write a JUnit XML report to FILE: the scenario as one test case")
      ->type_name("FILE");
  run->callback([&exit_code, options] { exit_code = run_scenario(*options); });
}

}  // namespace seqby::apps
