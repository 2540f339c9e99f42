// `seqby chaos`: seeded fault campaigns on real processes (DESIGN.md sections 5, 7, 8; issue 13).
// One seed draws a workload (keys, events per key, handler delays, transient failures and poison
// events, as the `record`
// handler of `seqby worker` understands them) and a nemesis schedule: moments drawn at random
// over the run, never chosen as safe. A run starts real `seqby worker` processes (each reaching
// Redis through its own fault proxy), publishes the workload while the nemeses strike, heals
// (every nemesis stops, stopped workers continue, killed ones restart), requires progress within
// a bound (the liveness phase) and judges: the history with the simulator's checker, and, as a
// second opinion, the effect sinks themselves (per key: committed seqs 1..n in publish order).
// The plan is a pure function of the seed and the parameters; what real processes then do is not
// (so a rerun of a seed strikes at the same moments, not at the same instructions).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/core/result.h"

namespace seqby::scenarios {

class RedisScenarioDriver;

// The nemeses, each named and counted like the simulator's fault kinds (DESIGN section 5).
enum class Nemesis : std::uint8_t {
  kill,            // SIGKILL a worker; a new worker (new owner id) takes its slot later
  stop,            // SIGSTOP a worker past the lease TTL, then SIGCONT
  client_kill,     // CLIENT KILL every connection of one worker
  client_pause,    // CLIENT PAUSE ALL past the lease TTL
  server_restart,  // SIGKILL the redis-server chaos started, restart it (AOF, fsync always)
  script_flush,    // SCRIPT FLUSH: the next EVALSHA of every client meets NOSCRIPT
  proxy,           // one worker's fault proxy delays, drops or resets its connections
  // On a cluster only (seqby chaos --cluster):
  slot_migration,  // one key's slot moves to another master, key by key (MOVED, ASK, TRYAGAIN)
  failover,        // one key's master loses its role: CLUSTER FAILOVER on its replica, or SIGKILL
                   // (its replica, in sync or held back to lag, is promoted; the killed node
                   // rejoins as a replica later)
};
inline constexpr std::size_t kNemesisCount = 9;

const char* nemesis_name(Nemesis kind);
// Whether `kind` runs on a cluster (`seqby chaos --cluster`) or on one server, and why not when
// it does not ("" when it does).
const char* nemesis_unavailable(Nemesis kind, bool cluster);
// False when `name` names no nemesis.
bool parse_nemesis(std::string_view name, Nemesis* out);
// Every nemesis, in name order (the order of summaries and of the `faults` object of --json).
std::span<const Nemesis> nemeses_by_name();

class NemesisCounters {
 public:
  void add(Nemesis kind, std::uint64_t n = 1) { counts_[static_cast<std::size_t>(kind)] += n; }
  std::uint64_t count(Nemesis kind) const { return counts_[static_cast<std::size_t>(kind)]; }
  void merge(const NemesisCounters& other);

 private:
  std::array<std::uint64_t, kNemesisCount> counts_{};
};

// What a campaign runs; every run of it draws its plan from its seed and these.
struct ChaosParams {
  std::uint64_t duration_ms = 30000;  // the fault phase of one run (publishing and nemeses)
  std::uint32_t workers = 3;
  std::uint32_t keys = 8;  // partition keys (correlation values with process_manager)
  std::array<bool, kNemesisCount> nemeses{};  // enabled kinds
  bool process_manager = false;  // the workers are one process manager over two categories
  std::string variant;           // "" or a known-broken variant the workers run
  std::uint64_t lease_ttl_ms = 1000;
  std::uint64_t liveness_bound_ms = 30000;  // after healing, every committable event commits
  // The durability option for workers and publisher (--wait-replicas; on a cluster): 0 off.
  std::uint32_t wait_replicas = 0;
  // The workers' --step-batch-max (docs/ARCHITECTURE.md "Steps of many partitions in one
  // script"): 1, a script per step.
  std::uint32_t step_batch_max = 1;
};

// One published event of the plan.
struct PlannedEvent {
  std::uint64_t at_ms = 0;            // from the start of the fault phase
  std::uint32_t category = 0;         // index into the run's categories (one, or two for a PM)
  std::uint32_t key = 0;              // index of the key
  std::int64_t seq = 0;               // 1, 2, ... per category and key, in publish order
  std::uint64_t delay_ms = 0;         // the record handler sleeps this long inside it
  bool poison = false;                // the record handler always fails on it
  std::uint32_t fail_deliveries = 0;  // a transient failure: its first deliveries fail
};

// One strike of the plan. Its target and parameters are drawn with it.
struct Strike {
  std::uint64_t at_ms = 0;
  Nemesis kind = Nemesis::kill;
  std::uint32_t target = 0;       // worker slot (kill, stop, client_kill, proxy)
  std::uint64_t duration_ms = 0;  // stop, pause, server down time, proxy fault; kill: restart
  std::uint32_t proxy_mode = 0;   // 0 delay, 1 drop, 2 reset
  std::uint64_t proxy_delay_ms = 0;
  std::uint32_t lane = 0;  // slot_migration, failover: the lane (category, key) whose slot
  // slot_migration: which other master; failover: 0 CLUSTER FAILOVER on the replica, 1 SIGKILL
  // of the master, 2 SIGKILL after holding the replica back for duration_ms (it lags)
  std::uint32_t mode = 0;
};

struct ChaosPlan {
  std::uint64_t seed = 0;
  std::uint32_t categories = 1;
  std::vector<PlannedEvent> events;  // by at_ms
  std::vector<Strike> strikes;       // by at_ms
};

// The plan of `seed`: named sub-streams of the seed ("workload", "nemesis/<name>"), so enabling
// a nemesis does not move the others' moments. Every enabled nemesis strikes at least once.
ChaosPlan draw_chaos_plan(const ChaosParams& params, std::uint64_t seed);

// The history a run is judged on, and whether it is exact (every decision's record, in the
// order Redis decided): only an exact history's checker verdict fails a run.
struct ChaosHistory {
  std::vector<HistoryRecord> records;
  bool exact = false;
  std::string source;  // where it was read from, for the summary
};
// THE place where a chaos run's history comes from. Today: the workers' history stream, which
// they append after Redis answered (so a SIGKILL or SIGSTOP loses or misplaces records, and the
// checker's verdict is advisory). The decision journal (issue 13 item 1) replaces it here.
Result<ChaosHistory> collect_history(RedisScenarioDriver& driver);

struct ChaosViolation {
  std::string property;
  std::string key;
  std::uint64_t seed = 0;
  std::string explanation;
};

struct ChaosRunResult {
  std::uint64_t seed = 0;
  bool passed = false;
  bool setup_failed = false;  // the run could not start (no server, workers would not start)
  bool bad_input = false;     // a worker refused its arguments (exit 2), e.g. an unknown variant
  std::string setup_error;
  std::uint64_t events_published = 0;
  std::uint64_t events_committed = 0;  // accepted by the effect sinks (sum of last seqs)
  NemesisCounters fired;
  std::uint64_t worker_starts = 0;
  std::uint64_t worker_restarts = 0;          // after a kill or an unexpected exit
  std::vector<std::string> unexpected_exits;  // "owner exited N: last log line"
  bool liveness_reached = false;
  std::uint64_t liveness_ms = 0;  // from healing to the last committable commit
  // Acknowledged publishes a failover lost (their entry is gone from the promoted replica), each
  // "category:key seq N"; explained by docs/ARCHITECTURE.md "What a failover keeps" without the
  // durability option, a violation with it.
  std::vector<std::string> lost_publishes;
  // The checker's no_loss findings about the events published after a lost publish on its lane
  // (the numbered sink waits for the lost seq forever), "category:key: explanation".
  std::vector<std::string> explained_findings;
  std::uint64_t run_ms = 0;
  std::vector<ChaosViolation> violations;           // fail the run
  std::vector<ChaosViolation> advisory_violations;  // the checker's on an inexact history
  std::map<std::string, bool> properties_checked;   // property -> judged (counts a run)
  ChaosHistory history;
  std::string history_sha256;
  std::string logs;         // every worker's log, for saved failures
  std::string params_json;  // the run's parameters and plan, for saved failures
};

// Where a run's redis-server comes from: a given URL, or a private one chaos starts.
struct ChaosServerChoice {
  std::string redis_url;  // "" : start a private redis-server
  bool cluster = false;   // start a private Redis Cluster (3 masters, 3 replicas) instead
};

ChaosRunResult run_chaos_seed(const ChaosParams& params, const ChaosServerChoice& server,
                              const std::string& seqby_binary, std::uint64_t seed,
                              std::ostream& log);

// `seqby chaos`, after its options were parsed: prints the summary (or --json) on `out`,
// problems on `err`; returns 0 every run held, 1 a run failed, 2 bad usage or bad input.
struct ChaosArgs {
  std::string redis_url;
  std::optional<std::uint64_t> seed;
  std::string seeds;  // A..B
  std::uint64_t duration_s = 30;
  std::uint32_t workers = 3;
  std::uint32_t keys = 8;
  std::string nemesis = "all";  // comma-separated names, or "all"
  std::string variant;
  bool json = false;
  std::string save_failures_dir;
  bool process_manager = false;
  std::string seqby_binary;  // the binary workers run (`seqby worker`)
  bool progress = false;
  std::string junit_path;            // --junit FILE: a JUnit XML report, one test case per seed
  bool cluster = false;              // --cluster: a private Redis Cluster, its nemeses
  std::uint32_t wait_replicas = 0;   // --wait-replicas N (with --cluster)
  std::uint32_t step_batch_max = 1;  // --step-batch-max N: the workers'
};
int chaos_main(const ChaosArgs& args, std::ostream& out, std::ostream& err);

}  // namespace seqby::scenarios
