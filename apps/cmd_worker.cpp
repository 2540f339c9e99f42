// seqby worker: one real engine instance against a redis-server (DESIGN.md sections 4, 7, 8):
// a RealRuntime loop on the main thread, a HiredisLink, a RedisBroker, a history stream in Redis
// and a built-in test handler. SIGTERM or SIGINT stops it gracefully (leases released, history
// flushed), exit 0. Log lines on stderr are key=value.
// With --process-manager it is the process manager named by --group (ADR decision 2) over every
// --category given: it owns correlation values (one lease per value across those categories)
// instead of partitions. A bad combination of options exits 2 naming the option, before any
// connection is made.
// --unsafe-variant NAME runs a KNOWN-BROKEN engine variant (seqby/testing/variant.h) instead of
// the design, for testing the real-Redis harness only (does it catch the variant?); it is never
// the default, and the worker says so loudly on stderr when it starts (event=unsafe_variant).
// Its connections say on stderr what they cannot reach and that they retry (event=
// redis_unreachable, once per backoff step), and every command Redis refuses (event=
// redis_command_refused: an ACL's NOPERM inside a script, ...); a refusal of its credentials or
// permissions in the handshake (with --cluster: on any node, or CLUSTER SLOTS refused by every
// node asked), which retrying cannot fix, ends it with exit status 3.
// --metrics-addr HOST:PORT serves /metrics (Prometheus text), /healthz and /readyz
// (seqby/observe/metrics_server.h); --log-format json writes each log line as a JSON object
// (seqby/observe/log_format.h). A bad address, or one nothing can listen on, exits 2 before
// anything starts.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "options.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/hiredis/link_report.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/hiredis/worker.h"
#include "seqby/observe/log_format.h"
#include "seqby/observe/metrics_server.h"
#include "seqby/observe/worker_metrics.h"
#include "seqby/runtime/exec_handler.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/testing/record_handler.h"
#include "seqby/testing/variant.h"

namespace seqby::apps {
namespace {

struct WorkerOptions {
  std::string redis_url;
  std::vector<std::string> categories;  // one; several only for a process manager
  std::string group;
  std::string sequential_by;  // a field; for a process manager "" or "true"
  bool process_manager = false;
  std::string handler = "record";
  std::string exec;                    // non-empty: the events go to child processes running it
  std::uint32_t exec_concurrency = 0;  // 0: not given (1 with --exec)
  std::string owner_id;
  EngineLimits limits;  // the worker flags of kEngineLimitFields, at the table's defaults
  // "" (the default): no history stream. A harness run (seqby chaos, scenario run --redis)
  // names one; a production worker keeps none (docs/ARCHITECTURE.md "The worker's history").
  std::string history_stream;
  std::uint64_t journal_maxlen = 0;           // 0: no decision journal (the history stream instead)
  std::optional<std::string> unsafe_variant;  // a KNOWN-BROKEN variant's name; none: the design
  std::string metrics_addr;                   // HOST:PORT of /metrics, /healthz, /readyz; "": none
  std::string log_format = "text";            // text | json
  std::string key_layout = "flat";            // flat | cluster (RedisBrokerOptions::key_layout)
  Durability durability;                      // --wait-replicas, --wait-timeout-ms
  bool cluster = false;  // --cluster: --redis is a seed node of a Redis Cluster
};

// How often the loop samples its figures (and tells /healthz it answers), and reads pending and
// lag of the streams it holds.
constexpr std::uint64_t kFiguresSampleMs = 500;
constexpr std::uint64_t kLagSampleMs = 2000;
// How long a stopping worker waits for its samplers to end.
constexpr std::uint32_t kSamplersEndWaitMs = 5000;

// --- the worker's Redis connections, reported (issue 15 item 0) -------------------------------

// Redis refused the worker's credentials or permissions (redis::refusal_is_final): retrying
// cannot fix it, so the worker stops and exits with this status.
constexpr int kExitRedisRefused = 3;

// The worker's connections (commands, the lease link, the blocking wake reads), each behind a
// ReportingLink, with their connection reports; every line goes to stderr.
class ReportedLinks {
 public:
  // `metrics`, when not null, hears every connection event too.
  // `cluster`: the commands go over a ClusterLink seeded by `config` (--cluster), each node's
  // connection reported as "commands" with that node's address, and there are no wake links.
  ReportedLinks(redis::RealRuntime& runtime, const redis::RedisConfig& config,
                const redis::LogWriter& log, redis::WorkerMetrics* metrics, bool cluster)
      : runtime_(runtime),
        config_(config),
        log_(log),
        metrics_(metrics),
        single_(cluster ? nullptr : std::make_unique<redis::HiredisLink>(runtime, config)),
        slots_(cluster ? std::make_unique<redis::HiredisClusterLink>(runtime, config) : nullptr),
        commands_report_(runtime.clock(), "commands", redis::redacted_url(config), logger(log)),
        commands_reported_(single_ ? static_cast<redis::RedisLink&>(*single_) : *slots_,
                           runtime.clock(), "commands", logger(log)) {
    if (slots_) {
      slots_->set_connection_observer(
          [this](const std::string& address, const redis::HiredisLink::ConnectionEvent& e) {
            node_report(address).on_event(e);
            if (metrics_ != nullptr) metrics_->on_connection_event("commands", e, true);
          });
      // No node would give the slot map: without it no command is routed, and a refusal that
      // retrying cannot fix (an ACL without +cluster|slots, a server without cluster support)
      // ends the worker as a refused handshake does.
      slots_->set_map_refused_observer(
          [this](const std::string& address, const std::string& error) {
            // Once: the worker stops at the first, and its last commands may ask again.
            if (!redis::refusal_is_final("CLUSTER|SLOTS", error) || !final_refusal().empty()) {
              return;
            }
            redis::HiredisLink::ConnectionEvent e;
            e.error = error;
            e.refused_command = "CLUSTER|SLOTS";
            e.refusal = error;
            e.final = true;
            node_report(address).on_event(e);
          });
      return;
    }
    single_->set_connection_observer([this](const redis::HiredisLink::ConnectionEvent& e) {
      commands_report_.on_event(e);
      if (metrics_ != nullptr) metrics_->on_connection_event("commands", e);
    });
  }

  redis::RedisLink& commands() { return commands_reported_; }
  // The broker's lease link ("leases"): a connection of its own for the heartbeat's pipelined
  // renew_many batches. None over a cluster (renew_many goes over the cluster link).
  redis::RedisLink* leases() {
    if (slots_) return nullptr;
    if (!leases_) {
      leases_ = std::make_unique<Channel>(runtime_, config_, "leases", log_, metrics_);
    }
    return &leases_->reported;
  }
  // The broker's wake links: channel N's ("wake", "wake#1", ...) made when first asked for.
  // None over a cluster: a wake read spans slots, and the cluster layout's broker polls.
  redis::WakeLinks wake_links() {
    if (slots_) return [](std::size_t) -> redis::RedisLink* { return nullptr; };
    return [this](std::size_t channel) -> redis::RedisLink* {
      while (wake_.size() <= channel) {
        const std::string name =
            wake_.empty() ? std::string("wake") : "wake#" + std::to_string(wake_.size());
        wake_.push_back(std::make_unique<Channel>(
            runtime_, redis::HiredisWakeLinks::wake_config(config_), name, log_, metrics_));
      }
      return &wake_[channel]->reported;
    };
  }
  // Broker::failovers_seen: the cluster link's (none on one server).
  std::function<std::uint64_t()> failovers_seen() {
    if (!slots_) return {};
    return [this] { return slots_->stats().failovers_seen; };
  }
  // The cluster link's redirections, slot maps and failovers into `f` (nothing on one server).
  void cluster_figures(redis::WorkerFigures& f) const {
    if (!slots_) return;
    const redis::ClusterLink::Stats stats = slots_->stats();
    f.cluster = true;
    f.cluster_moved = stats.moved;
    f.cluster_asked = stats.asked;
    f.cluster_tryagain = stats.tryagain;
    f.cluster_map_refreshes = stats.refreshes;
    f.cluster_failovers_seen = stats.failovers_seen;
  }
  // The line of the refusal that ends the worker, "" while there was none.
  std::string final_refusal() const {
    if (!commands_report_.final_refusal().empty()) return commands_report_.final_refusal();
    for (const auto& [address, report] : node_reports_) {
      if (!report->final_refusal().empty()) return report->final_refusal();
    }
    for (const std::unique_ptr<Channel>& channel : wake_) {
      if (!channel->report.final_refusal().empty()) return channel->report.final_refusal();
    }
    if (leases_ && !leases_->report.final_refusal().empty()) return leases_->report.final_refusal();
    return "";
  }
  // Commands Redis refused, by link (for the metrics).
  std::map<std::string, std::uint64_t> refusals() const {
    std::map<std::string, std::uint64_t> out{{"commands", commands_reported_.refusals()}};
    for (const std::unique_ptr<Channel>& channel : wake_) {
      out[channel->name] = channel->reported.refusals();
    }
    if (leases_) out[leases_->name] = leases_->reported.refusals();
    return out;
  }

 private:
  static redis::LogLine logger(const redis::LogWriter& log) {
    return [&log](const std::string& line) { log.line(line); };
  }
  // The report of cluster node `address` ("host:port"), made on its first event.
  redis::ConnectionReport& node_report(const std::string& address) {
    std::unique_ptr<redis::ConnectionReport>& report = node_reports_[address];
    if (!report) {
      redis::RedisConfig node = config_;
      const std::size_t colon = address.rfind(':');
      node.host = address.substr(0, colon);
      node.port = static_cast<std::uint16_t>(std::stoul(address.substr(colon + 1)));
      report = std::make_unique<redis::ConnectionReport>(runtime_.clock(), "commands",
                                                         redis::redacted_url(node), logger(log_));
    }
    return *report;
  }
  // A connection of its own: one blocking read that wakes idle partitions (a wake channel, its
  // config from HiredisWakeLinks::wake_config), or the lease link.
  struct Channel {
    Channel(redis::RealRuntime& runtime, redis::RedisConfig config, std::string name_,
            const redis::LogWriter& log, redis::WorkerMetrics* metrics)
        : name(std::move(name_)),
          link(runtime, config),
          report(runtime.clock(), name, redis::redacted_url(config), logger(log)),
          reported(link, runtime.clock(), name, logger(log)) {
      link.set_connection_observer([this, metrics](const redis::HiredisLink::ConnectionEvent& e) {
        report.on_event(e);
        if (metrics != nullptr) metrics->on_connection_event(name, e);
      });
    }
    std::string name;
    redis::HiredisLink link;
    redis::ConnectionReport report;
    redis::ReportingLink reported;
  };

  redis::RealRuntime& runtime_;
  redis::RedisConfig config_;
  const redis::LogWriter& log_;
  redis::WorkerMetrics* metrics_;
  std::unique_ptr<redis::HiredisLink> single_;        // one server
  std::unique_ptr<redis::HiredisClusterLink> slots_;  // or a Redis Cluster (--cluster)
  std::map<std::string, std::unique_ptr<redis::ConnectionReport>> node_reports_;  // by node
  redis::ConnectionReport commands_report_;
  redis::ReportingLink commands_reported_;
  std::vector<std::unique_ptr<Channel>> wake_;
  std::unique_ptr<Channel> leases_;  // made by leases(), once
};

// The line for an index member acquire_many found to be no partition (told once per member).
void log_no_partition(const redis::LogWriter& log, const PartitionRef& unit,
                      const std::string& why) {
  log.line("event=index_member_skipped category=" + unit.category +
           " key=" + redis::quoted_log_value(unit.key) + " reason=" +
           redis::quoted_log_value(why + "; no lease taken, looked at again each "
                                         "discovery cycle"));
}

// -----------------------------------------------------------------------------------------------

std::string default_owner_id() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::string id = host[0] != '\0' ? host : "host";
  for (char& c : id) {
    if (c == ':' || c == ' ') c = '-';
  }
  return id + "-" + std::to_string(::getpid());
}

// Waits for SIGTERM/SIGINT (blocked in every thread) and raises `stop`; ends when `done`.
void wait_for_signal(std::atomic<bool>* stop, std::atomic<bool>* done) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  while (!done->load()) {
    timespec wait{0, 100 * 1000 * 1000};
    if (sigtimedwait(&set, nullptr, &wait) > 0) stop->store(true);
  }
}

Task<void> log_halt_figures(redis::RedisLink& link, HistoryRecord halt, KeyLayout layout,
                            const redis::LogWriter& log) {
  const std::string line = co_await redis::halt_figures_line(link, std::move(halt), layout);
  log.line(line);
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ",") + name;
  return out;
}

std::string variant_names() {
  std::string out;
  for (const testing::Variant v : testing::all_variants()) {
    out += (out.empty() ? "" : ", ") + std::string(testing::variant_name(v));
  }
  return out;
}

// The loud line a worker running a KNOWN-BROKEN variant starts with: which one, the broker
// options it runs with, and that it breaks the guarantees.
std::string unsafe_variant_line(testing::Variant variant) {
  const redis::RedisBrokerOptions broker = testing::redis_broker_options_for(variant);
  return "event=unsafe_variant variant=" + std::string(testing::variant_name(variant)) +
         " unfenced_scripts=" + (broker.unfenced ? "true" : "false") +
         " group_start_id=" + broker.group_start_id +
         " warning=\"KNOWN-BROKEN design, for testing the real-Redis harness only: it breaks "
         "the ordering and exclusion guarantees; never use it in production\"";
}

// The line a cluster worker starts with when its lease TTL is at or below its command timeout
// ("" when it is above): one master that stops answering (SIGSTOP, a network partition) holds
// each heartbeat round for a command timeout, and a round that waits that long renews no lease in
// time, on the live masters too, so every partition fails over (docs/ARCHITECTURE.md "A failover
// and the leases on the live masters"). Not refused: on a cluster whose masters answer, the TTL
// works as set.
std::string lease_ttl_at_risk_line(bool cluster, std::uint64_t lease_ttl_ms,
                                   std::uint64_t command_timeout_ms) {
  if (!cluster || lease_ttl_ms > command_timeout_ms) return "";
  return "event=lease_ttl_at_risk lease_ttl_ms=" + std::to_string(lease_ttl_ms) +
         " command_timeout_ms=" + std::to_string(command_timeout_ms) +
         " warning=\"a lease TTL at or below the command timeout: one cluster master that stops "
         "answering holds a heartbeat round past every lease, and every partition fails over; "
         "set --lease-ttl-ms well above " +
         std::to_string(command_timeout_ms) + "\"";
}

// The combinations of options CLI11 cannot judge alone: "" when they fit, else the message.
// What is wrong with the handler flags together ("" when nothing).
std::string handler_error(const WorkerOptions& o) {
  if (o.exec.empty()) {
    if (o.exec_concurrency > 0) return "--exec-concurrency: needs --exec";
    return "";
  }
  if (o.handler != "record") return "--exec and --handler: give one handler, not both";
  if (o.exec.find_first_not_of(" \t") == std::string::npos) return "--exec: the command is empty";
  return "";
}

std::string combination_error(const WorkerOptions& o) {
  if (std::string bad = handler_error(o); !bad.empty()) return bad;
  for (std::size_t i = 0; i < o.categories.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (o.categories[j] == o.categories[i]) {
        return "--category: '" + o.categories[i] + "' is given twice";
      }
    }
  }
  if (!o.process_manager) {
    if (o.categories.size() > 1) {
      return "--category: " + std::to_string(o.categories.size()) + " categories given (" +
             joined(o.categories) + "); several categories need --process-manager";
    }
    if (o.sequential_by.empty()) {
      return "--sequential-by is required (the event field holding the partition key), "
             "unless --process-manager";
    }
    if (o.sequential_by == "true") {
      return "--sequential-by: 'true' declares a process manager; add --process-manager";
    }
    return "";
  }
  if (!o.sequential_by.empty() && o.sequential_by != "true") {
    return "--sequential-by: a process manager is sequential by its correlation value; give "
           "'true' or leave it out, not '" +
           o.sequential_by + "'";
  }
  if (o.limits.reap_idle_ms > 0) return "--reap-idle-ms: does not apply to a process manager";
  return "";
}

int run_worker(const WorkerOptions& o) {
  if (const std::string bad = combination_error(o); !bad.empty()) {
    std::fprintf(stderr, "seqby worker: %s\n", bad.c_str());
    return kExitUsage;
  }
  if (o.handler != "record") {
    std::fprintf(stderr, "seqby worker: --handler: unknown handler '%s'; known: record\n",
                 o.handler.c_str());
    return kExitUsage;
  }
  const std::optional<KeyLayout> key_layout =
      key_layout_option("seqby worker", o.key_layout, o.cluster);
  if (!key_layout.has_value()) return kExitUsage;
  if (*key_layout == KeyLayout::cluster) {
    // A brace in a category or group would make its hash tag the names' tag, not the key's.
    std::vector<std::string> names = o.categories;
    names.push_back(o.group);
    for (const std::string& name : names) {
      if (name.find_first_of("{}") != std::string::npos) {
        std::fprintf(stderr,
                     "seqby worker: --key-layout cluster: '%s' holds a brace ({ or }), which "
                     "would pick the hash slot of every key named with it\n",
                     name.c_str());
        return kExitUsage;
      }
    }
  }
  testing::Variant variant = testing::Variant::correct;
  if (o.unsafe_variant.has_value()) {
    const std::optional<testing::Variant> named = testing::parse_variant(*o.unsafe_variant);
    if (!named.has_value()) {
      std::fprintf(stderr, "seqby worker: --unsafe-variant: unknown variant '%s'; known: %s\n",
                   o.unsafe_variant->c_str(), variant_names().c_str());
      return kExitUsage;
    }
    variant = *named;
  }
  Result<redis::RedisConfig> config = redis::parse_redis_url(o.redis_url);
  if (!config.ok()) {
    std::fprintf(stderr, "seqby worker: --redis: %s\n", config.error().message.c_str());
    return kExitUsage;
  }
  if (!cluster_database_fits("seqby worker", o.cluster, config.value().db)) return kExitUsage;
  EngineOptions options;
  options.owner_id = o.owner_id.empty() ? default_owner_id() : o.owner_id;
  if (o.process_manager) {
    options.pm_categories = o.categories;
  } else {
    options.category = o.categories.front();
  }
  options.group = o.group;
  static_cast<EngineLimits&>(options) = o.limits;
  if (Status valid = validate_engine_options(options); !valid.ok()) {
    std::fprintf(stderr, "seqby worker: %s\n", valid.error().message.c_str());
    return kExitUsage;
  }
  redis::LogFormat log_format = redis::LogFormat::text;
  if (!redis::parse_log_format(o.log_format, &log_format)) {
    std::fprintf(stderr, "seqby worker: --log-format: '%s' is no log format; known: text, json\n",
                 o.log_format.c_str());
    return kExitUsage;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread starts: all inherit it
  // The metrics endpoint listens before anything else starts (its threads, started after the
  // mask, never take SIGTERM): an address nothing can listen on is a usage error, like a bad one.
  std::unique_ptr<redis::WorkerMetrics> metrics;
  std::unique_ptr<redis::MetricsServer> metrics_server;
  if (!o.metrics_addr.empty()) {
    Result<redis::ListenAddress> address = redis::parse_listen_address(o.metrics_addr);
    if (!address.ok()) {
      std::fprintf(stderr, "seqby worker: --metrics-addr: %s\n", address.error().message.c_str());
      return kExitUsage;
    }
    redis::WorkerMetricsOptions metrics_options;
    metrics_options.categories = o.categories;
    metrics_options.group = o.group;
    metrics_options.process_manager = o.process_manager;
    metrics_options.key_layout = *key_layout;
    metrics = std::make_unique<redis::WorkerMetrics>(std::move(metrics_options));
    Result<std::unique_ptr<redis::MetricsServer>> server =
        redis::MetricsServer::start(address.value(), *metrics);
    if (!server.ok()) {
      std::fprintf(stderr, "seqby worker: --metrics-addr: %s\n", server.error().message.c_str());
      return kExitUsage;
    }
    metrics_server = std::move(server).value();
  }

  std::atomic<bool> stop_requested{false};
  std::atomic<bool> done{false};
  std::thread signals(wait_for_signal, &stop_requested, &done);

  const std::string owner = options.owner_id;
  const redis::LogWriter log(log_format, owner);
  std::string refusal;  // the refusal that ended the worker, if one did
  {
    redis::RealRuntimeOptions runtime_options;
    // Every exec child's exchange blocks a pool thread while its event runs.
    runtime_options.worker_count += o.exec_concurrency;
    redis::RealRuntime runtime(runtime_options);
    ReportedLinks links(runtime, config.value(), log, metrics.get(), o.cluster);
    std::optional<redis::MetricsLink> measured_link;
    if (metrics) measured_link.emplace(links.commands(), *metrics);
    redis::RedisLink& link = measured_link.has_value()
                                 ? static_cast<redis::RedisLink&>(*measured_link)
                                 : links.commands();
    redis::RedisBrokerOptions broker_options = testing::redis_broker_options_for(variant);
    broker_options.journal_maxlen = o.journal_maxlen;
    broker_options.journal_group = o.group;
    broker_options.key_layout = *key_layout;
    broker_options.wait_replicas = o.durability.wait_replicas;
    broker_options.wait_timeout_ms = o.durability.wait_timeout_ms;
    broker_options.failovers_seen = links.failovers_seen();
    if (o.process_manager) broker_options.pm_categories = o.categories;
    broker_options.on_no_partition = [&log](const PartitionRef& unit, const std::string& why) {
      log_no_partition(log, unit, why);
    };
    redis::RedisBroker broker(link, broker_options, links.wake_links(), links.leases());
    // With a journal the scripts record every decision themselves; the engine's other records
    // (warnings, resumes) are notes beside them. Without, a named history stream gets every
    // record, appended after Redis answered; with neither, records only reach the log lines and
    // the metrics below (a history stream grows by every record: ten thousand renewals a second
    // for an instance holding ten thousand idle partitions).
    redis::RedisHistorySink history(runtime, link, o.history_stream);
    redis::JournalNoteSink notes(runtime, link, std::max<std::uint64_t>(o.journal_maxlen, 1),
                                 o.process_manager ? o.group : "", *key_layout);
    NullHistorySink no_history;
    HistorySink& recorded = o.journal_maxlen > 0        ? static_cast<HistorySink&>(notes)
                            : !o.history_stream.empty() ? static_cast<HistorySink&>(history)
                                                        : static_cast<HistorySink&>(no_history);
    // warn, halt, resume and reap records also go to stderr, for operators; a halt is followed
    // by the group's pending count and lag, read by a task of its own.
    const KeyLayout layout = *key_layout;
    auto log_record = [&log, &runtime, &link, layout](const HistoryRecord& r,
                                                      const std::string& line) {
      log.line(line);
      if (r.op == HistoryOp::halt) {
        runtime.spawn("halt_figures", log_halt_figures(link, r, layout, log));
      }
    };
    redis::LoggedHistorySink logged(recorded, log_record);
    // With metrics, every record is counted on its way (it changes none).
    std::optional<redis::MetricsHistorySink> measured_history;
    if (metrics) {
      measured_history.emplace(logged, *metrics, [] {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
      });
    }
    HistorySink& engine_history = measured_history.has_value()
                                      ? static_cast<HistorySink&>(*measured_history)
                                      : static_cast<HistorySink&>(logged);
    std::unique_ptr<Handler> handler;
    redis::ExecHandler* exec_handler = nullptr;
    if (!o.exec.empty()) {
      redis::ExecHandlerOptions exec;
      exec.command = o.exec;
      exec.concurrency = std::max<std::uint32_t>(o.exec_concurrency, 1);
      exec.log = [&log](const std::string& line) { log.line(line); };
      auto made = std::make_unique<redis::ExecHandler>(runtime, std::move(exec));
      exec_handler = made.get();
      handler = std::move(made);
    } else {
      handler = std::make_unique<testing::RecordHandler>(runtime, broker, engine_history, owner,
                                                         options.lease_ttl_ms, o.journal_maxlen);
    }
    Engine engine(runtime, broker, engine_history, *handler, options,
                  testing::make_engine_steps(variant));

    const std::string serving =
        o.process_manager ? " process_manager=" + o.group + " categories=" + joined(o.categories) +
                                " sequential_by=true"
                          : " category=" + o.categories.front() + " group=" + o.group +
                                " sequential_by=" + o.sequential_by;
    if (variant != testing::Variant::correct) log.line(unsafe_variant_line(variant));
    log.line("event=start redis=" + redis::redacted_url(config.value()) + serving +
             " handler=" + (o.exec.empty() ? o.handler : "exec") +
             (o.exec.empty() ? ""
                             : " exec_concurrency=" +
                                   std::to_string(std::max<std::uint32_t>(o.exec_concurrency, 1))) +
             " lease_ttl_ms=" + std::to_string(options.lease_ttl_ms) +
             " reap_idle_ms=" + std::to_string(options.reap_idle_ms) +
             " partitions_warn_threshold=" + std::to_string(options.partitions_warn_threshold) +
             (o.journal_maxlen > 0        ? " journal_maxlen=" + std::to_string(o.journal_maxlen)
              : !o.history_stream.empty() ? " history_stream=" + o.history_stream
                                          : std::string(" history=none")) +
             (o.durability.wait_replicas > 0
                  ? " wait_replicas=" + std::to_string(o.durability.wait_replicas) +
                        " wait_timeout_ms=" + std::to_string(o.durability.wait_timeout_ms)
                  : "") +
             " variant=" + std::string(testing::variant_name(variant)) +
             (metrics_server ? " metrics_addr=" + metrics_server->address().text() : ""));
    if (const std::string at_risk = lease_ttl_at_risk_line(o.cluster, options.lease_ttl_ms,
                                                           config.value().command_timeout_ms);
        !at_risk.empty()) {
      log.line(at_risk);
    }
    std::atomic<bool> sampling_stop{false};
    if (metrics) {
      auto figures = [&engine, &broker, &links, exec_handler] {
        redis::WorkerFigures f;
        for (const PartitionStatus& unit : engine.held()) {
          ++f.units_owned;
          if (unit.halted) ++f.units_halted;
        }
        f.index_members_skipped = engine.index_members_skipped();
        f.heartbeat_rounds_ms = engine.heartbeat_rounds_ms();
        f.no_partition_units = broker.no_partition_units();
        f.command_refusals = links.refusals();
        links.cluster_figures(f);
        if (exec_handler != nullptr) {
          const redis::ExecHandler::Stats stats = exec_handler->stats();
          f.exec = true;
          f.exec_starts = stats.starts;
          f.exec_faults = stats.faults;
        }
        return f;
      };
      auto held_keys = [&engine] {
        std::vector<std::string> keys;
        for (const PartitionStatus& unit : engine.held()) keys.push_back(unit.key);
        return keys;
      };
      runtime.spawn("metrics_figures",
                    redis::sample_worker_figures(runtime, *metrics, figures, sampling_stop,
                                                 kFiguresSampleMs));
      runtime.spawn("metrics_lag", redis::sample_worker_lag(runtime, link, *metrics, held_keys,
                                                            sampling_stop, kLagSampleMs));
    }
    const bool journal = o.journal_maxlen > 0;
    runtime.block_on([](Engine& e, redis::RealRuntime& rt, redis::RedisHistorySink& h,
                        redis::JournalNoteSink& n, bool journal, std::atomic<bool>& stop,
                        const ReportedLinks& links, const redis::LogWriter& log,
                        redis::WorkerMetrics* metrics,
                        std::atomic<bool>& sampling_stop) -> Task<void> {
      e.start();
      while (!stop.load() && links.final_refusal().empty()) co_await rt.sleep_ms(50);
      log.line("event=stopping");
      if (metrics != nullptr) metrics->stopping();
      co_await e.stop();
      // What a stop could not write is counted, never lost silently.
      if (journal) {
        co_await n.flush(5000);
        log.line("event=stopped journal_notes_written=" + std::to_string(n.written()) +
                 " journal_notes_failed=" + std::to_string(n.failed()) +
                 " journal_notes_dropped=" + std::to_string(n.dropped()) +
                 " journal_notes_unwritten=" + std::to_string(n.unwritten()));
      } else {
        co_await h.flush(5000);
        log.line("event=stopped history_failed=" + std::to_string(h.failed()) +
                 " history_dropped=" + std::to_string(h.dropped()) +
                 " history_unwritten=" + std::to_string(h.unwritten()));
      }
      // The samplers end within 50 ms (a lag read in flight is answered or times out first).
      sampling_stop.store(true);
      for (std::uint32_t waited_ms = 0;
           metrics != nullptr && !metrics->samplers_ended() && waited_ms < kSamplersEndWaitMs;
           waited_ms += 10) {
        co_await rt.sleep_ms(10);
      }
    }(engine, runtime, history, notes, journal, stop_requested, links, log, metrics.get(),
                                                          sampling_stop));
    refusal = links.final_refusal();
  }
  done.store(true);
  signals.join();
  if (!refusal.empty()) {
    log.line("event=exit status=" + std::to_string(kExitRedisRefused) +
             " reason=\"Redis refused this worker's credentials or permissions, or has no slot "
             "map to give; retrying cannot fix that\"");
    return kExitRedisRefused;
  }
  return kExitOk;
}

}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<WorkerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "worker",
      "Run one real engine instance: own partitions of a category and process them, or with "
      "--process-manager own correlation values across several categories");
  add_redis_option(cmd, options->redis_url);
  add_durability_options(cmd, options->durability);
  add_cluster_option(cmd, options->cluster);
  cmd->add_option("--category", options->categories,
                  "The stream category C (repeat it for a process manager's categories)")
      ->type_name("C")
      ->required()
      ->expected(1)
      ->take_all();
  cmd->add_option("--group", options->group,
                  "The handler group G (with --process-manager: the process manager's name)")
      ->type_name("G")
      ->required();
  cmd->add_option("--sequential-by", options->sequential_by,
                  "The event field holding the partition key (required unless "
                  "--process-manager; a process manager takes only true)")
      ->type_name("FIELD");
  cmd->add_flag("--process-manager", options->process_manager,
                "Run the process manager G over every --category: one owner per correlation "
                "value X applies C:X of each category one event at a time");
  cmd->add_option("--handler", options->handler, "A named test handler: record (default)")
      ->type_name("NAME");
  cmd->add_option("--exec", options->exec,
                  "Handle events in child processes running this command (/bin/sh -c), over "
                  "JSON lines on their stdin and stdout (docs/handler-protocol.md)")
      ->type_name("'CMD ARGS...'");
  cmd->add_option("--exec-concurrency", options->exec_concurrency,
                  "Children of --exec, and so events of different partitions at once (default 1)")
      ->type_name("N")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--owner-id", options->owner_id,
                  "This instance's owner id, no colon (default: host-pid)")
      ->type_name("ID");
  for (const EngineLimitField& limit : kEngineLimitFields) {
    if (!limit.worker_flag) continue;
    const std::string help(limit.help);
    CLI::Option* flag = limit.u64 != nullptr
                            ? cmd->add_option(limit.flag_name(), options->limits.*limit.u64, help)
                            : cmd->add_option(limit.flag_name(), options->limits.*limit.u32, help);
    flag->type_name("N");
  }
  cmd->add_option("--history-stream", options->history_stream,
                  "Append every history record to this Redis stream, untrimmed (without "
                  "--journal-maxlen; for test runs: default none)")
      ->type_name("NAME");
  cmd->add_option("--journal-maxlen", options->journal_maxlen,
                  "Keep a decision journal: every deciding script appends its decision to its "
                  "partition's journal stream, trimmed to about N records (0, the default: off)")
      ->type_name("N");
  cmd->add_option("--key-layout", options->key_layout,
                  "Key names: flat (the ADR's C:K, default) or cluster (C:{K}: every key of a "
                  "partition in one Redis Cluster hash slot; docs/ARCHITECTURE.md)")
      ->type_name("LAYOUT");
  cmd->add_option("--metrics-addr", options->metrics_addr,
                  "Serve Prometheus metrics at http://HOST:PORT/metrics, and /healthz and "
                  "/readyz (HOST an IPv4 address, e.g. 127.0.0.1:9464; default: no endpoint)")
      ->type_name("HOST:PORT");
  cmd->add_option("--log-format", options->log_format,
                  "The log lines on stderr: text (key=value, the default) or json (one JSON "
                  "object per line, with ts)")
      ->type_name("text|json");
  cmd->add_option("--unsafe-variant", options->unsafe_variant,
                  "UNSAFE: run a KNOWN-BROKEN engine variant instead of the design, to test the "
                  "real-Redis harness only (" +
                      variant_names() +
                      "; correct is the design). Breaks the guarantees; logs "
                      "event=unsafe_variant on start. Never the default")
      ->type_name("NAME");
  cmd->callback([&exit_code, options] { exit_code = run_worker(*options); });
}

}  // namespace seqby::apps
