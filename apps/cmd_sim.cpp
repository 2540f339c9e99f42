// seqby sim: a seeded simulation campaign (DESIGN.md sections 2, 5, 8). The options are parsed
// here; the campaign itself is scenarios::sim_main (scenarios/src/sim_commands.cpp).
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::apps {
namespace {

struct SimOptions {
  std::uint64_t seed = 0;
  std::string seeds;  // A..B
  std::string scenario;
  std::string variant = "correct";
  unsigned jobs = 1;
  bool json = false;
  std::string save_failures_dir;
  bool check_determinism = false;
  bool process_manager = false;
  std::string junit;
  std::string shard;
  std::string key_layout = "flat";
  std::uint32_t cluster_shards = 0;
};

}  // namespace

void add_sim_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim", "Run a seeded simulation campaign and check every property of every run");
  auto* seed = cmd->add_option("--seed", options->seed, "Run this one seed")->type_name("N");
  auto* seeds = cmd->add_option("--seeds", options->seeds, "Run seeds A..B (inclusive)")
                    ->type_name("A..B")
                    ->check(seed_range_validator());
  seed->excludes(seeds);
  cmd->add_option("--scenario", options->scenario,
                  "A scenario file (JSON) or a scenario name (seqby scenario list)")
      ->type_name("FILE|NAME");
  cmd->add_option("--variant", options->variant,
                  "Engine variant: correct (default) or a known-broken design")
      ->type_name("NAME")
      ->capture_default_str();
  cmd->add_flag("--process-manager", options->process_manager,
                "Generate process-manager cases: a process manager over order and payment, keys "
                "as correlation values");
  cmd->add_option("--jobs", options->jobs, "Run this many seeds in parallel")
      ->type_name("N")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print one JSON summary object on stdout");
  cmd->add_option("--save-failures", options->save_failures_dir,
                  "Save each failing run as a case file in DIR")
      ->type_name("DIR");
  cmd->add_flag("--check-determinism", options->check_determinism,
                "Run each seed twice and compare history hashes");
  cmd->add_option("--junit", options->junit,
                  "Also write a JUnit XML report to FILE: one test case per seed")
      ->type_name("FILE");
  cmd->add_option("--shard", options->shard,
                  "Run only part I of N equal, contiguous parts of the seed range (1 <= I <= N)")
      ->type_name("I/N");
  auto* key_layout =
      cmd->add_option("--key-layout", options->key_layout,
                      "Key names: flat (the ADR's, default; a --scenario case file's own) or "
                      "cluster (hash-tagged C:{K}, on a simulated server that refuses a script or "
                      "command across hash slots)")
          ->type_name("LAYOUT");
  auto* cluster_shards =
      cmd->add_option("--cluster-shards", options->cluster_shards,
                      "With --key-layout cluster: simulate a Redis Cluster of N shards reached "
                      "through the cluster link, slots migrating mid-run from 2 shards on (MOVED, "
                      "ASK, TRYAGAIN)")
          ->type_name("N");
  cmd->callback([&exit_code, options, seed, key_layout, cluster_shards] {
    scenarios::SimArgs args;
    if (seed->count() > 0) args.seed = options->seed;
    args.seeds = options->seeds;
    args.scenario = options->scenario;
    args.process_manager = options->process_manager;
    args.variant = options->variant;
    args.jobs = options->jobs;
    args.json = options->json;
    args.save_failures_dir = options->save_failures_dir;
    args.check_determinism = options->check_determinism;
    args.junit_path = options->junit;
    args.shard = options->shard;
    if (key_layout->count() > 0) args.key_layout = options->key_layout;
    if (cluster_shards->count() > 0) args.cluster_shards = options->cluster_shards;
    args.progress = isatty(STDERR_FILENO) != 0;
    exit_code = scenarios::sim_main(args, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
