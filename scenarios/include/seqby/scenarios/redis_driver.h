// The real-Redis scenario driver: real `seqby worker` processes against one redis-server, a
// publisher, faults by signal (SIGKILL a crash, SIGSTOP then SIGCONT a stall, SIGTERM a graceful
// stop) and the run's history read back from its Redis history stream. Each driver owns a fresh
// category (named from the pid, a counter and the scenario) and history stream, so runs on one
// server never meet, and deletes every key under them when destroyed. Every wait polls Redis and
// is bounded: a wait that runs out returns false (the caller reports it), never hangs. It asserts
// nothing itself; scenarios and tests judge what it returns.
// With WorkerSettings::pm_categories the workers are process manager `group` over those
// categories (named under the driver's own: category_named()); a key is then a correlation value,
// its lease and in-progress marker are the process manager's, and the history stream opens with
// a run header naming the process manager and its categories (so the checker judges
// pm_exclusion, and no_loss on every stream it subscribes).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seqby/core/engine_options.h"
#include "seqby/core/history.h"
#include "seqby/core/json_flat.h"
#include "seqby/core/keyspace.h"
#include "seqby/core/result.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/runtime/subprocess.h"

namespace seqby::scenarios {

// The engine settings of the workers a driver starts: every worker flag of kEngineLimitFields
// (engine_options.h) is passed from the limits here, which are the table's defaults except the
// driver's short leases (runs stay quick): lease_ttl_ms 1000, heartbeat_interval_ms 250,
// discovery_interval_ms 250.
struct WorkerSettings : EngineLimits {
  WorkerSettings() {
    lease_ttl_ms = 1000;
    heartbeat_interval_ms = 250;
    discovery_interval_ms = 250;
  }
  std::string group = "billing";
  std::string sequential_by = "client_id";
  // Non-empty: every worker is the process manager `group` over these categories
  // (--process-manager, one --category each; sequential_by is then not passed).
  std::vector<std::string> pm_categories;
  // The workers' decision journal (--journal-maxlen; seqby/hiredis/journal.h): on in every
  // driver run, so the history is what the scripts journaled, exactly. 0 runs them with the
  // appended history stream instead.
  std::uint64_t journal_maxlen = redis::kTestJournalMaxlen;
  // Non-empty: every worker runs this KNOWN-BROKEN variant (`seqby worker --unsafe-variant`),
  // to prove the real-Redis harness catches it. Empty: the design.
  std::string unsafe_variant;
  // The durability option (--wait-replicas N --wait-timeout-ms T) of the workers and of the
  // driver's publish: 0 off.
  std::uint32_t wait_replicas = 0;
  std::uint64_t wait_timeout_ms = 1000;
  // How long publish() sends a publish again that may not have run (0: never; the caller checks
  // landed() itself, as chaos does between its ticks).
  std::uint64_t publish_retry_ms = 10000;
  // Passed after the others as they are (e.g. {"--poll-interval-ms", "5"}).
  std::vector<std::string> extra_flags;
  // The driver's URL is one node of a Redis Cluster: the workers run with `--cluster
  // --key-layout cluster`, and the driver spells the cluster layout's names, sends each command
  // to its slot's master (ClusterLink) and reads the journals of every master.
  bool cluster = false;
};

// The flags that put a seqby command (worker, publish, admin) on the server `settings` name:
// {"--cluster", "--key-layout", "cluster"} on a cluster, none on one server.
std::vector<std::string> server_flags(const WorkerSettings& settings);

// One `seqby worker` child process, its stderr in a log file. It is SIGKILLed when the parent
// thread dies (PR_SET_PDEATHSIG) or when the object goes while it still runs.
class WorkerProcess {
 public:
  // Starts `binary worker --redis url ... --owner-id owner`, with `--history-stream
  // history_stream` when settings has no journal and history_stream is not empty. started()
  // tells whether fork worked.
  WorkerProcess(const std::string& binary, const std::string& url, const std::string& category,
                const std::string& history_stream, const std::string& owner,
                const WorkerSettings& settings, const std::string& log_path);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  bool started() const { return process_.pid() > 0; }
  bool running() const { return process_.running(); }
  // Reaps the worker when it has exited by itself: true and its exit status in *status (-1: it
  // did not exit normally), false while it runs.
  bool exited(int* status);
  pid_t pid() const { return process_.pid(); }
  const std::string& owner() const { return owner_; }

  // SIGTERM, then waits at most `wait_max_ms` for the exit; returns the exit status, or -1 when
  // it did not exit normally (after the bound it is SIGKILLed).
  int terminate(std::uint64_t wait_max_ms = 15000);
  void kill_now();      // SIGKILL and reap
  void stop_now();      // SIGSTOP
  void continue_now();  // SIGCONT
  std::string log() const;

 private:
  std::string owner_;
  std::string log_path_;
  redis::Subprocess process_;
};

struct CommandRun {
  int exit_code = -1;  // -1: did not exit normally or was killed at the bound
  int signal = 0;      // the signal that ended it (SIGKILL at the bound), 0 when it exited
  std::string out;
  std::string err;
};

// Runs `binary args...` with stdin from /dev/null, waits at most `wait_max_ms`.
CommandRun run_command(const std::string& binary, const std::vector<std::string>& args,
                       std::uint64_t wait_max_ms = 30000);

// What one published event carries besides client_id and seq.
struct PublishSpec {
  std::string key;
  std::int64_t seq = 0;
  std::uint64_t delay_ms = 0;         // the record handler sleeps this long inside the event
  bool poison = false;                // the record handler always fails on it
  std::string category = {};          // the stream is category:key; "" is the driver's category()
  std::uint32_t fail_deliveries = 0;  // the record handler fails its first deliveries (transient)
};

class RedisScenarioDriver {
 public:
  // REQUIRES: `label` is letters, digits and '_' only (it becomes part of the category).
  RedisScenarioDriver(std::string redis_url, std::string seqby_binary, const std::string& label,
                      WorkerSettings settings = {});
  // Kills the workers still running and deletes every key of the category and the history.
  ~RedisScenarioDriver();
  RedisScenarioDriver(const RedisScenarioDriver&) = delete;
  RedisScenarioDriver& operator=(const RedisScenarioDriver&) = delete;

  // The server answers PING and the binary is executable; else the reason.
  Status ready();

  const std::string& url() const { return url_; }
  const std::string& category() const { return category_; }
  // The category `name` of this run, "C:name" under the driver's category C (so that it is
  // deleted with it): where a process-manager run's categories live.
  std::string category_named(const std::string& name) const { return category_ + ":" + name; }
  const std::string& group() const { return settings_.group; }
  bool process_manager() const { return !settings_.pm_categories.empty(); }
  // Where the workers announce themselves: C:__members__:G, or __pm__:G:__members__:G.
  std::string members_set() const;
  const std::string& history_stream() const { return history_stream_; }
  const WorkerSettings& settings() const { return settings_; }
  // For the workers started from now on.
  void set_settings(const WorkerSettings& settings) { settings_ = settings; }
  const std::string& seqby_binary() const { return binary_; }
  std::uint64_t wait_max_ms() const { return wait_max_ms_; }

  // Runs one command on the server (on a cluster: on the master of its keys' slot); transport
  // failures and error replies come back as nil replies and are counted in transport_errors().
  redis::Reply run(const redis::Command& command);
  // Partition `key` of `category` ("" is category()) spelled in the layout the workers use.
  PartitionRef partition(const std::string& key, const std::string& category = "") const;
  KeyLayout key_layout() const { return settings_.cluster ? KeyLayout::cluster : KeyLayout::flat; }
  std::uint64_t transport_errors() const { return transport_errors_; }

  // Starts a worker with owner id `owner`; nullptr when fork failed. The first process-manager
  // worker first appends the run header "run pm=G:C1+C2..." (its categories) to the history.
  // `worker_url`, when not empty, is where this worker connects instead of url() (a proxy).
  WorkerProcess* start_worker(const std::string& owner, const std::string& worker_url = "");
  WorkerProcess* worker(const std::string& owner);
  std::vector<WorkerProcess*> running_workers();
  // SIGKILLs `owner` and appends a crash fault record ("crash sigkill") to the history.
  void crash(const std::string& owner);
  // SIGSTOPs `owner` and appends a stall fault record; resume() SIGCONTs it.
  void stall(const std::string& owner);
  void resume(const std::string& owner);
  // SIGTERMs every running worker; the owners that did not exit 0, with their status.
  std::vector<std::string> stop_all();
  // Every worker's log, each under a "--- owner ---" line.
  std::string logs() const;

  // Publishes each event and its publish record atomically (the publish script journaling it,
  // or publish_recorded without a journal), in order; the entry ids. A publish that may or may
  // not have run (Errc::timeout, Errc::closed: a connection lost, a master killed mid-failover)
  // or that a cluster refused for now (redis::not_run_yet: CLUSTERDOWN while a failover is under
  // way) is sent again only after landed() said it did not land, for at most
  // WorkerSettings::publish_retry_ms; Errc from the first failure it gives up on.
  Result<std::vector<std::string>> publish(const std::vector<PublishSpec>& events);
  // Whether a publish of `event` whose reply was lost landed: the id of its stream's last entry
  // when that entry carries event.seq (the driver is the only writer of its streams), nullopt
  // when it does not, an error when Redis did not answer.
  Result<std::optional<std::string>> landed(const PublishSpec& event);

  // Polls `done` every 10 ms for at most wait_max_ms (or `limit_ms` when not 0).
  bool wait_until(const std::function<bool()>& done, std::uint64_t limit_ms = 0);

  // The seq the effect sink of stream `category`:`key` last accepted (0: none); `category` ""
  // is category().
  std::int64_t last_seq(const std::string& key, const std::string& category = "");
  // The committed effects of stream `category`:`key` (the entry ids), in seq order.
  std::vector<std::string> effects(const std::string& key, const std::string& category = "");
  std::int64_t dlq_length(const std::string& key, const std::string& category = "");
  // The lease key of `key`: C:K:__lease__, or a process manager's __pm__:G:K:__lease__.
  std::string lease_key(const std::string& key) const;
  // The owner id holding `key`'s lease ("" when nobody).
  std::string lease_owner(const std::string& key);
  // The in-progress marker of `key` (the record handler's, worker.h), "OWNER:EVENT_ID", when set.
  std::optional<std::string> inprogress_marker(const std::string& key);
  // Every key of the category, sorted (SCAN MATCH C:*).
  std::vector<std::string> category_keys();

  // The run's history: the decision journal of its categories (and process manager), merged
  // (read_journal), or without a journal the history stream.
  Result<std::vector<HistoryRecord>> read_history();
  // Appends a record no script decides (a run header, a fault struck, a foreign publisher's
  // publish) beside the decisions: a journal note, or a history stream entry. An operator's skip
  // or dlq is not appended with a journal: `seqby admin` journals it itself.
  void append_history(const HistoryRecord& record);
  bool journal() const { return settings_.journal_maxlen > 0; }

 private:
  std::string url_;
  std::string binary_;
  WorkerSettings settings_;
  std::string category_;
  std::string history_stream_;
  std::string log_prefix_;
  std::uint64_t wait_max_ms_ = 30000;
  std::optional<redis::RedisConfig> config_;
  std::unique_ptr<redis::BlockingRedis> redis_;  // the server, or the cluster node of the URL
  // On a cluster (settings().cluster): every command through a ClusterLink on its own runtime.
  std::unique_ptr<redis::RealRuntime> cluster_runtime_;
  std::unique_ptr<redis::ClusterLink> cluster_link_;
  Result<redis::Reply> execute(const redis::Command& command);
  // The node connections to SCAN: every master of a cluster, else the one server.
  std::vector<std::unique_ptr<redis::BlockingRedis>> scan_nodes();
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
  std::vector<std::string> published_keys_;  // sorted: a process manager's keys to delete
  bool pm_header_written_ = false;
  std::uint64_t transport_errors_ = 0;
};

}  // namespace seqby::scenarios
