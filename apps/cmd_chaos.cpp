// seqby chaos: a seeded fault campaign on real processes (DESIGN.md section 8, issue 13). The
// options are parsed here; the campaign itself is scenarios::chaos_main
// (scenarios/src/chaos_commands.cpp).
#include <limits.h>
#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "options.h"
#include "seqby/scenarios/chaos.h"

namespace seqby::apps {
namespace {

// The path of this very executable: the workers are `seqby worker` processes of it.
std::string self_path() {
  char path[PATH_MAX];
  const ssize_t length = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0) return "";
  return std::string(path, static_cast<std::size_t>(length));
}

}  // namespace

void add_chaos_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<scenarios::ChaosArgs>();
  auto seed_value = std::make_shared<std::uint64_t>(0);
  CLI::App* cmd = app.add_subcommand(
      "chaos",
      "Run a seeded fault campaign on real processes: seqby workers against a redis-server while "
      "nemeses strike at drawn moments, then heal, require progress and judge");
  cmd->add_option("--redis", args->redis_url,
                  "Use this server (default: a private redis-server on a free loopback port, "
                  "AOF fsync always; server_restart needs it)")
      ->type_name("URL")
      ->check(redis_url_validator());
  auto* seed = cmd->add_option("--seed", *seed_value, "Run this one seed")->type_name("N");
  auto* seeds = cmd->add_option("--seeds", args->seeds, "Run seeds A..B (inclusive), one by one")
                    ->type_name("A..B")
                    ->check(seed_range_validator());
  seed->excludes(seeds);
  cmd->add_option("--duration-s", args->duration_s, "The fault phase of each run, in seconds")
      ->type_name("S")
      ->capture_default_str();
  cmd->add_option("--workers", args->workers, "Worker processes per run")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--keys", args->keys, "Partition keys (correlation values) per run")
      ->type_name("K")
      ->capture_default_str();
  cmd->add_option("--nemesis", args->nemesis,
                  "Comma-separated nemeses: kill, stop, client_kill, client_pause, "
                  "server_restart, script_flush, proxy; with --cluster slot_migration and "
                  "failover instead of server_restart and proxy; or all")
      ->type_name("LIST")
      ->capture_default_str();
  cmd->add_option("--variant", args->variant,
                  "Run the workers with seqby worker --unsafe-variant NAME (a known-broken "
                  "design, to prove the campaign catches it)")
      ->type_name("NAME");
  cmd->add_flag("--json", args->json, "Print one JSON summary object on stdout");
  cmd->add_option("--save-failures", args->save_failures_dir,
                  "Save each failing run's history (JSON lines), parameters and worker logs in "
                  "DIR (default seqby-failures)")
      ->type_name("DIR");
  cmd->add_flag("--process-manager", args->process_manager,
                "The workers are one process manager over two categories; keys are correlation "
                "values");
  cmd->add_flag("--cluster", args->cluster,
                "Run on a private Redis Cluster (3 masters, 3 replicas) chaos starts itself: the "
                "workers run with --cluster --key-layout cluster, and the journals of every "
                "master are judged");
  cmd->add_option("--wait-replicas", args->wait_replicas,
                  "With --cluster: workers and publisher wait for N replicas after every durable "
                  "write (the durability option); a publish a failover then loses is a violation")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--step-batch-max", args->step_batch_max,
                  "The workers' --step-batch-max: steps of different partitions one script "
                  "carries at most (1: a script per step)")
      ->type_name("N")
      ->capture_default_str();
  cmd->add_option("--junit", args->junit_path,
                  "Also write a JUnit XML report to FILE: one test case per seed")
      ->type_name("FILE");
  cmd->callback([&exit_code, args, seed, seed_value] {
    scenarios::ChaosArgs a = *args;
    if (seed->count() > 0) a.seed = *seed_value;
    a.seqby_binary = self_path();
    a.progress = isatty(STDERR_FILENO) != 0;
    exit_code = scenarios::chaos_main(a, std::cout, std::cerr);
  });
}

}  // namespace seqby::apps
