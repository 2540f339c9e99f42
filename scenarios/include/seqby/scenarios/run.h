// Simulated runs and campaigns: run_case() turns one SimCase into a World run, judges its history
// with the checker (properties/checker.h) and reports; run_campaign() does that for a range of
// seeds on `jobs` threads (each seed its own World: nothing is shared between threads but the
// result collection), and saves each failing case so that `seqby replay` re-runs it exactly.
// Wall time is measured around runs, never inside one: a run's outcome never depends on it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/core/keyspace.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/reached.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/sim_case.h"
#include "seqby/sim/sim_redis.h"

namespace seqby::scenarios {

struct RunOptions {
  std::vector<properties::Property> skip;  // besides those the run header skips
  // False: RunResult::history_sha256 stays empty (and the summary's hash line says so). For
  // campaigns of many seeds, which never print it; hashing is a tenth of a run's time.
  bool compute_history_sha256 = true;
  // The key layout of every broker, and cluster mode of the simulated server with
  // KeyLayout::cluster (sim::WorldOptions::key_layout; `seqby sim --key-layout cluster`).
  KeyLayout key_layout = KeyLayout::flat;
  // > 0 with KeyLayout::cluster: a simulated cluster of this many shards reached through the
  // ClusterLink, slots migrating mid-run from 2 shards on (sim::WorldOptions::cluster_shards;
  // `seqby sim --key-layout cluster --cluster-shards N`).
  std::uint32_t cluster_shards = 0;
  // sim::WorldOptions::lossy_failover_beside_replacement (the test that shows the documented
  // hole of one owner id in two processes across a lossy failover).
  bool lossy_failover_beside_replacement = false;
  // Whether RunResult::reached is counted (properties::count_reached, in the checker's pass over
  // its own history index): a campaign's "reached" line.
  bool count_reached = false;
};

struct RunResult {
  std::uint64_t seed = 0;
  std::vector<HistoryRecord> history;
  std::string history_sha256;  // empty when RunOptions::compute_history_sha256 is false
  properties::CheckReport report;
  sim::FaultCounters faults;
  std::uint64_t events_published = 0;
  std::uint64_t slot_migrations = 0;         // finished (RunOptions::cluster_shards)
  std::uint64_t failovers = 0;               // replicas promoted (RunOptions::cluster_shards)
  std::uint64_t lossy_failovers = 0;         // of them, after a lag and their master's death
  sim::SimRedis::Redirections redirections;  // the simulated cluster's MOVED, ASK, ...
  std::uint64_t events_committed = 0;        // accepted by the effect sink
  std::uint64_t sim_ms = 0;
  std::uint64_t wall_ms = 0;
  std::uint64_t wall_us = 0;
  std::uint64_t scheduler_steps = 0;
  std::uint64_t redis_commands = 0;
  std::uint64_t restarts = 0;
  bool liveness_reached = false;
  properties::ReachedCounts reached;  // with RunOptions::count_reached; else all zero
  bool passed = false;                // every judged property held
  std::string summary;                // readable, several lines
};

RunResult run_case(const sim::SimCase& c, const RunOptions& options = {});

// Judges `history` the way run_case does (the run header's skips, plus parallel when the case
// has fewer than two instances or keys); with RunOptions::count_reached, also counts what the
// run reached into `*reached` in the same pass.
properties::CheckReport check_run_history(const sim::SimCase& c,
                                          const std::vector<HistoryRecord>& history,
                                          const RunOptions& options = {},
                                          properties::ReachedCounts* reached = nullptr);

struct DeterminismResult {
  bool same = false;
  std::string sha256_first;
  std::string sha256_second;
  std::optional<std::uint64_t> position;  // of the first differing record
  std::string first_line;                 // its canonical line in each run
  std::string second_line;
};
// Runs `c` twice and compares the histories.
DeterminismResult check_determinism(const sim::SimCase& c);

struct CampaignViolation {
  std::string property;
  std::string key;
  std::uint64_t seed = 0;
  std::string explanation;
};

// One finished seed, for progress reports.
struct SeedOutcome {
  std::uint64_t seed = 0;
  bool passed = false;
  std::uint64_t done = 0;  // seeds finished so far (this one included)
  std::uint64_t total = 0;
};

struct CampaignOptions {
  std::uint64_t seed_first = 1;
  std::uint64_t seed_last = 1;  // inclusive
  unsigned jobs = 1;
  // The case of each seed; generate_case(seed, default template) when empty.
  std::function<sim::SimCase(std::uint64_t seed)> make_case;
  // "" : do not save; else DIR/seed-N.json, DIR/seed-N.jsonl and its timeline DIR/seed-N.html
  std::string save_failures_dir;
  bool check_determinism = false;  // run each seed twice; a difference fails the seed
  RunOptions run;
  std::function<void(const SeedOutcome&)> progress;  // called under a lock, in finishing order
  // Appended to each failing seed's "rerun: seqby sim --seed N" line, so the line reproduces the
  // same case: e.g. " --variant no_fence" or " --scenario FILE".
  std::string rerun_args;
};

struct CampaignResult {
  std::uint64_t runs = 0;
  std::uint64_t failed = 0;
  std::vector<std::uint64_t> failed_seeds;  // ascending
  std::uint64_t events_published = 0;
  std::uint64_t events_committed = 0;
  std::uint64_t sim_ms = 0;   // summed over runs
  std::uint64_t wall_ms = 0;  // of the whole campaign
  std::uint64_t scheduler_steps = 0;
  std::uint64_t redis_commands = 0;
  std::uint32_t cluster_shards = 0;          // RunOptions::cluster_shards of the campaign
  std::uint64_t slot_migrations = 0;         // summed over runs
  std::uint64_t failovers = 0;               // summed over runs
  std::uint64_t lossy_failovers = 0;         // summed over runs
  std::uint64_t publishes_lost = 0;          // in lossy failovers, as the checker counted them
  std::uint64_t records_undone = 0;          // the same, every write undone (publishes included)
  std::uint64_t commits_lost = 0;            // the same, commits undone whose entries were acked
  std::uint64_t keys_unindexed = 0;          // the same, keys the index's failover took out again
  std::uint64_t keys_put_back = 0;           // the same, units their holder put back (reindex)
  sim::SimRedis::Redirections redirections;  // summed over runs
  sim::FaultCounters faults;
  properties::ReachedCounts reached;          // situations the runs reached (properties/reached.h)
  std::vector<CampaignViolation> violations;  // by seed, then as the checker lists them
  std::map<std::string, std::uint64_t> properties_checked;  // property -> runs that judged it
  std::map<std::uint64_t, std::string> saved_cases;         // seed -> case file path
  std::map<std::uint64_t, std::string> saved_timelines;     // seed -> its timeline page
  std::map<std::uint64_t, std::uint64_t> seed_wall_us;      // seed -> wall time of its run(s)
  std::map<std::uint64_t, std::string>
      determinism_failures;    // seed -> where its histories differed
  std::string history_sha256;  // set when the campaign is one seed
  unsigned jobs = 1;
  std::string rerun_args;  // from CampaignOptions
};

CampaignResult run_campaign(const CampaignOptions& options);

// Readable summary: runs, events, faults fired per kind (and kinds that never fired), properties
// checked, wall and simulated time; on failure each violation and the replay commands.
std::string render_campaign_text(const CampaignResult& result);
// One violation's line: "violation: seed N PROPERTY key K: EXPLANATION\n".
std::string render_violation(const CampaignViolation& violation);
// A failing seed's lines that reproduce it: "replay: seqby replay CASE" (when the case was saved)
// and "rerun:  seqby sim --seed N ..." (each ending in a newline).
std::string render_seed_replay(const CampaignResult& result, std::uint64_t seed);
// One JSON object with the fields of DESIGN.md section 8.
std::string render_campaign_json(const CampaignResult& result);

// A one-run summary (used by `seqby replay` and the scenarios).
std::string render_run_text(const sim::SimCase& c, const RunResult& result);

}  // namespace seqby::scenarios
