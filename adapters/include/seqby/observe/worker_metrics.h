// The metrics and health of one `seqby worker` (issue 15 item 3), in a prometheus-cpp registry.
// Events come from where they already happen, without a hook in core: every history record the
// engine makes passes through MetricsHistorySink (acquire, renew, lose, read, enter/exit, ack,
// commit, halt, ...); the commands link passes through MetricsLink (replies, and the discovery's
// index reads that tell when the first discovery cycle is done); the connection events of every
// link are handed to on_connection_event(); what only the engine and its parts know (units held,
// halted, skipped index members, refused commands) is sampled on the loop by sample_figures(),
// and per-partition pending and lag by sample_lag(), which reads XINFO GROUPS (bounded:
// kLagStreamsMax streams). It guarantees that counting never changes what it forwards; it does
// not make figures exact across restarts (counters start at 0 with the process).
// Threads: every on_* and sample_* call runs on the worker's loop; scrape(), healthz() and
// readyz() on the HTTP server's threads (prometheus-cpp's metrics are thread-safe; the health
// state is atomics).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/redis_link.h"
#include "seqby/core/history.h"
#include "seqby/core/keyspace.h"
#include "seqby/core/runtime.h"
#include "seqby/hiredis/hiredis_link.h"

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace seqby::redis {

struct WorkerMetricsOptions {
  std::vector<std::string> categories;  // the categories served (one, or a process manager's)
  std::string group;                    // the handler group, or the process manager's name
  bool process_manager = false;
  // How the streams sampled for pending and lag are named (C:K, or C:{K} on a cluster).
  KeyLayout key_layout = KeyLayout::flat;
  // The loop answered within this long, or /healthz says it does not.
  std::uint64_t loop_silence_max_ms = 10'000;
};

// What sample_figures() reads from the engine and its parts (cumulative counts as they are).
struct WorkerFigures {
  std::uint64_t units_owned = 0;   // partitions held, or a process manager's correlation values
  std::uint64_t units_halted = 0;  // held units with a halted stream
  std::uint64_t index_members_skipped = 0;         // Engine::index_members_skipped()
  std::vector<std::uint64_t> heartbeat_rounds_ms;  // Engine::heartbeat_rounds_ms()
  std::uint64_t no_partition_units = 0;            // RedisBroker::no_partition_units()
  // ReportingLink::refusals() by link name ("commands", "wake", ...).
  std::map<std::string, std::uint64_t> command_refusals;
  bool exec = false;  // the figures below are an ExecHandler's
  std::uint64_t exec_starts = 0;
  std::uint64_t exec_faults = 0;
  bool cluster = false;  // the figures below are a cluster link's (ClusterLink::Stats)
  std::uint64_t cluster_moved = 0;
  std::uint64_t cluster_asked = 0;
  std::uint64_t cluster_tryagain = 0;
  std::uint64_t cluster_map_refreshes = 0;
  std::uint64_t cluster_failovers_seen = 0;
};

// The answer of a health endpoint: 200 or 503, and a line saying why.
struct HealthAnswer {
  int status = 503;
  std::string body;
};

// The index key a discovery read names ("" for any other command): SMEMBERS C:__partitions__ on
// one server, SUNION C:__partitions__ {C:__partitions__}:__reaping__ with the cluster layout
// (RedisBroker::partitions), whose index is its first key.
std::string discovery_index_read(const Command& command);

class WorkerMetrics {
 public:
  // At most this many partition streams get pending and lag gauges: the first by (key,
  // category) of the units held; how many were left out is itself a gauge.
  static constexpr std::size_t kLagStreamsMax = 100;
  // Handler runs entered and not yet exited that are timed at once (beyond, not timed).
  static constexpr std::size_t kInFlightMax = 65'536;

  explicit WorkerMetrics(WorkerMetricsOptions options);
  ~WorkerMetrics();
  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  // A history record, at `now_us` on a monotonic clock (times the handler from enter to exit).
  void on_record(const HistoryRecord& record, std::uint64_t now_us);
  // A connection event of link `link` ("commands", "wake", "wake#1", ...).
  // `one_node_of_many`: the event is one cluster node's; it counts, but whether the link is
  // connected is left to the replies (on_command_done): one master lost is not Redis unreachable.
  void on_connection_event(const std::string& link, const HiredisLink::ConnectionEvent& event,
                           bool one_node_of_many = false);
  // A command of the commands link was sent / came back (`answered`: a reply, error replies
  // included; false: timeout or closed). `index_key`: the index a discovery read names
  // (discovery_index_read), else "".
  void on_command_sent(const Command& command);
  void on_command_done(const std::string& index_key, bool answered, bool array_reply);
  // The loop's figures, and that the loop answers (at `now_ms`, the worker's monotonic clock).
  void sample_figures(const WorkerFigures& figures, std::uint64_t now_ms);
  // Per-stream pending and lag (-1: Redis did not say); streams not listed lose their gauges.
  struct StreamLag {
    PartitionRef stream;
    std::int64_t pending = -1;
    std::int64_t lag = -1;
  };
  void sample_lag(const std::vector<StreamLag>& streams, std::uint64_t streams_omitted);
  // The worker stops: not ready any more.
  void stopping();

  // The streams sample_lag should read for the units held (sorted keys): at most kLagStreamsMax,
  // and how many were left out.
  std::vector<PartitionRef> lag_streams(const std::vector<std::string>& unit_keys,
                                        std::uint64_t* omitted) const;
  const WorkerMetricsOptions& options() const { return options_; }

  // Any thread. The Prometheus text exposition of every metric.
  std::string scrape() const;
  // Any thread. `now_ms` on the clock sample_figures() was given.
  HealthAnswer healthz(std::uint64_t now_ms) const;
  HealthAnswer readyz() const;
  bool discovered() const { return discovered_.load(); }
  // Loop thread. The samplers (sample_worker_figures, sample_worker_lag) count themselves here.
  void sampler_started() { ++samplers_running_; }
  void sampler_ended() { --samplers_running_; }
  bool samplers_ended() const { return samplers_running_ == 0; }

 private:
  struct Families;
  prometheus::Counter& by_category(std::map<std::string, prometheus::Counter*>& cache,
                                   prometheus::Family<prometheus::Counter>& family,
                                   const std::string& category);
  // The counter of `family` labelled {label: value}, found once per op and kept in `cache` (a
  // label lookup builds a label map and hashes it: twice a renewed lease before, 10,000 leases
  // a second at 10,000 partitions).
  prometheus::Counter& by_op(std::array<prometheus::Counter*, kHistoryOpCount>& cache, HistoryOp op,
                             prometheus::Family<prometheus::Counter>& family, const char* label,
                             const char* value);
  void add_link(const std::string& link);
  void add_to(prometheus::Counter& counter, std::uint64_t now_total, std::uint64_t* seen);

  const WorkerMetricsOptions options_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<Families> f_;
  // Loop thread only.
  std::map<std::string, prometheus::Counter*> handled_, failed_;
  std::array<prometheus::Counter*, kHistoryOpCount> records_by_op_{}, leases_by_op_{},
      fenced_by_op_{};
  std::map<std::string, prometheus::Histogram*> duration_;
  std::map<std::string, std::uint64_t> entered_us_;  // "category\nkey\nevent id" -> enter time
  std::map<std::string, std::uint64_t> refusals_seen_;
  std::uint64_t skipped_seen_ = 0, no_partition_seen_ = 0, exec_starts_seen_ = 0,
                exec_faults_seen_ = 0;
  std::map<std::string, std::uint64_t> redirections_seen_;  // by kind
  std::uint64_t map_refreshes_seen_ = 0, failovers_seen_ = 0;
  std::uint32_t samplers_running_ = 0;
  std::vector<std::string> index_names_;  // of options_.categories, in order
  std::vector<bool> index_answered_;      // this discovery cycle's index reads answered
  std::set<std::string> links_;
  prometheus::Gauge* commands_gauge_ = nullptr;  // seqby_redis_connected{link="commands"}
  std::map<std::string, bool> ever_connected_, down_;
  std::map<std::string, std::pair<prometheus::Gauge*, prometheus::Gauge*>> lag_gauges_;
  // Any thread.
  std::atomic<bool> commands_connected_{false};
  std::atomic<bool> discovered_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> loop_seen_ms_{0};
  std::atomic<bool> loop_seen_{false};
};

// A history sink that hands every record to `metrics` and forwards it to `inner` unchanged.
class MetricsHistorySink final : public HistorySink {
 public:
  // REQUIRES: `inner` and `metrics` outlive the sink; `now_us` is monotonic.
  MetricsHistorySink(HistorySink& inner, WorkerMetrics& metrics,
                     std::function<std::uint64_t()> now_us);
  void record(HistoryRecord record) override;

 private:
  HistorySink& inner_;
  WorkerMetrics& metrics_;
  std::function<std::uint64_t()> now_us_;
};

// A link that forwards every command to `inner` and tells `metrics` what was sent and whether it
// was answered (the commands link: connectivity and the discovery's index reads).
class MetricsLink final : public RedisLink {
 public:
  // REQUIRES: `inner` and `metrics` outlive the link.
  MetricsLink(RedisLink& inner, WorkerMetrics& metrics);
  Task<Result<Reply>> execute(Command command) override;
  Task<Result<ReplicatedReply>> execute_replicated(Command command, std::uint32_t replicas,
                                                   std::uint64_t timeout_ms) override;

 private:
  RedisLink& inner_;
  WorkerMetrics& metrics_;
};

// Two loops to spawn on the worker's runtime, each until `stop`. Every `interval_ms`:
// sample_figures(figures(), now), which also tells /healthz the loop answers; and the pending
// count and lag of the streams of the units held (`held_keys()`, sorted; lag_streams() bounds
// them), read with XINFO GROUPS through `link` (kept apart, so that a slow Redis never makes the
// loop look silent). REQUIRES: `metrics`, `link` and `stop` outlive the tasks.
Task<void> sample_worker_figures(Runtime& runtime, WorkerMetrics& metrics,
                                 std::function<WorkerFigures()> figures,
                                 const std::atomic<bool>& stop, std::uint64_t interval_ms);
Task<void> sample_worker_lag(Runtime& runtime, RedisLink& link, WorkerMetrics& metrics,
                             std::function<std::vector<std::string>()> held_keys,
                             const std::atomic<bool>& stop, std::uint64_t interval_ms);

}  // namespace seqby::redis
