// WorkerMetrics: a worker's figures in a prometheus-cpp registry, fed by its history records,
// its commands link, its connection events and the loop's samples.
#include "seqby/observe/worker_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "seqby/core/check.h"

namespace seqby::redis {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

struct WorkerMetrics::Families {
  explicit Families(prometheus::Registry& r)
      : units_owned(prometheus::BuildGauge()
                        .Name("seqby_units_owned")
                        .Help("Units this worker holds the lease of: partitions, or a process "
                              "manager's correlation values (kind)")
                        .Register(r)),
        heartbeat_round(prometheus::BuildGauge()
                            .Name("seqby_heartbeat_round_seconds")
                            .Help("The heartbeat's rounds (announce and renewal of every lease "
                                  "held): the last one, and the longest of the last 64 (of)")
                            .Register(r)),
        units_halted(prometheus::BuildGauge()
                         .Name("seqby_units_halted")
                         .Help("Units held with a halted stream (a poison head waits for an "
                               "operator)")
                         .Register(r)),
        handled(prometheus::BuildCounter()
                    .Name("seqby_events_handled_total")
                    .Help("Events the handler finished ok, by category")
                    .Register(r)),
        failed(prometheus::BuildCounter()
                   .Name("seqby_events_failed_total")
                   .Help("Handler runs that failed (each is retried, then halts), by category")
                   .Register(r)),
        duration(prometheus::BuildHistogram()
                     .Name("seqby_handler_duration_seconds")
                     .Help("Handler run time, from enter to exit, by category")
                     .Register(r)),
        records(prometheus::BuildCounter()
                    .Name("seqby_history_records_total")
                    .Help("History records this worker made, by op")
                    .Register(r)),
        leases(prometheus::BuildCounter()
                   .Name("seqby_lease_events_total")
                   .Help("Lease acquires, renews, losses and releases (event)")
                   .Register(r)),
        fenced(prometheus::BuildCounter()
                   .Name("seqby_fenced_refusals_total")
                   .Help("Fenced operations Redis refused for a stale lease (op: read, ack, "
                         "commit)")
                   .Register(r)),
        halts(prometheus::BuildCounter()
                  .Name("seqby_halts_total")
                  .Help("Partitions halted on a poison head")
                  .Register(r)),
        pending(prometheus::BuildGauge()
                    .Name("seqby_partition_pending")
                    .Help("Entries read and not acknowledged by the group, per stream held "
                          "(sampled; at most 100 streams)")
                    .Register(r)),
        lag(prometheus::BuildGauge()
                .Name("seqby_partition_lag")
                .Help("Entries not yet read by the group, per stream held (sampled; at most "
                      "100 streams; NaN when Redis cannot tell)")
                .Register(r)),
        lag_omitted(prometheus::BuildGauge()
                        .Name("seqby_partition_lag_streams_omitted")
                        .Help("Streams held whose pending and lag are not exported (over the "
                              "bound of 100)")
                        .Register(r)),
        connected(prometheus::BuildGauge()
                      .Name("seqby_redis_connected")
                      .Help("1 while the link to Redis is connected, by link")
                      .Register(r)),
        reconnects(prometheus::BuildCounter()
                       .Name("seqby_redis_reconnects_total")
                       .Help("Connections re-established after a loss or failed attempts, by "
                             "link")
                       .Register(r)),
        connect_failures(prometheus::BuildCounter()
                             .Name("seqby_redis_connect_failures_total")
                             .Help("Connect attempts that failed, by link")
                             .Register(r)),
        connections_lost(prometheus::BuildCounter()
                             .Name("seqby_redis_connections_lost_total")
                             .Help("Ready connections that failed or were dropped, by link")
                             .Register(r)),
        refusals(prometheus::BuildCounter()
                     .Name("seqby_redis_command_refusals_total")
                     .Help("Commands Redis refused that are no outcome of seqby's protocol "
                           "(an ACL's NOPERM, WRONGTYPE, OOM, ...), by link")
                     .Register(r)),
        skipped(prometheus::BuildCounter()
                    .Name("seqby_index_members_skipped_total")
                    .Help("Index members that cannot be partitions, skipped (counted once each)")
                    .Register(r)),
        no_partition(prometheus::BuildCounter()
                         .Name("seqby_no_partition_units_total")
                         .Help("Index members found to have no stream or a non-stream key, no "
                               "lease taken (counted once each)")
                         .Register(r)),
        exec_starts(prometheus::BuildCounter()
                        .Name("seqby_exec_children_started_total")
                        .Help("Handler child processes started (--exec), restarts included")
                        .Register(r)),
        exec_faults(prometheus::BuildCounter()
                        .Name("seqby_exec_child_faults_total")
                        .Help("Handler children that exited, wrote bad output or gave no hello")
                        .Register(r)),
        redirections(prometheus::BuildCounter()
                         .Name("seqby_cluster_redirections_total")
                         .Help("Redis Cluster redirections followed (--cluster), by kind: moved "
                               "(the slot map was stale), ask (a slot migrating: ASKING sent), "
                               "tryagain (a migrating slot's keys split: waited out)")
                         .Register(r)),
        map_refreshes(prometheus::BuildCounter()
                          .Name("seqby_cluster_slot_map_refreshes_total")
                          .Help("Redis Cluster slot maps read and applied (--cluster)")
                          .Register(r)),
        failovers_seen(prometheus::BuildCounter()
                           .Name("seqby_cluster_failovers_seen_total")
                           .Help("Redis Cluster masters seen replaced by a replica (--cluster): "
                                 "after one, the new master may lack the old one's last writes")
                           .Register(r)),
        ready(prometheus::BuildGauge()
                  .Name("seqby_ready")
                  .Help("1 once connected to Redis and after the first discovery cycle (as "
                        "/readyz)")
                  .Register(r)) {}

  Family<Gauge>& units_owned;
  Family<Gauge>& heartbeat_round;
  Family<Gauge>& units_halted;
  Family<Counter>& handled;
  Family<Counter>& failed;
  Family<Histogram>& duration;
  Family<Counter>& records;
  Family<Counter>& leases;
  Family<Counter>& fenced;
  Family<Counter>& halts;
  Family<Gauge>& pending;
  Family<Gauge>& lag;
  Family<Gauge>& lag_omitted;
  Family<Gauge>& connected;
  Family<Counter>& reconnects;
  Family<Counter>& connect_failures;
  Family<Counter>& connections_lost;
  Family<Counter>& refusals;
  Family<Counter>& skipped;
  Family<Counter>& no_partition;
  Family<Counter>& exec_starts;
  Family<Counter>& exec_faults;
  Family<Counter>& redirections;
  Family<Counter>& map_refreshes;
  Family<Counter>& failovers_seen;
  Family<Gauge>& ready;
};

namespace {

// Seconds; from sub-millisecond in-process handlers to minutes-long external calls.
const Histogram::BucketBoundaries& duration_buckets() {
  static const Histogram::BucketBoundaries buckets{
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
  return buckets;
}

std::string in_flight_key(const HistoryRecord& r) {
  return r.category + '\n' + r.key + '\n' + r.event_id;
}

}  // namespace

WorkerMetrics::WorkerMetrics(WorkerMetricsOptions options)
    : options_(std::move(options)),
      registry_(std::make_shared<prometheus::Registry>()),
      f_(std::make_unique<Families>(*registry_)) {
  SEQBY_CHECK(!options_.categories.empty());
  for (const std::string& category : options_.categories) {
    index_names_.push_back(partition_index_name(category));
    (void)by_category(handled_, f_->handled, category);
    (void)by_category(failed_, f_->failed, category);
    duration_[category] = &f_->duration.Add({{"category", category}}, duration_buckets());
  }
  index_answered_.assign(index_names_.size(), false);
  for (const char* event : {"acquire", "renew", "lose", "release"}) {
    f_->leases.Add({{"event", event}});
  }
  for (const char* op : {"read", "ack", "commit"}) f_->fenced.Add({{"op", op}});
  f_->halts.Add({});
  f_->units_owned.Add({{"kind", options_.process_manager ? "process_manager" : "partition"}});
  f_->units_halted.Add({});
  f_->lag_omitted.Add({});
  f_->skipped.Add({});
  f_->no_partition.Add({});
  f_->ready.Add({});
  add_link("commands");
  commands_gauge_ = &f_->connected.Add({{"link", "commands"}});
}

WorkerMetrics::~WorkerMetrics() = default;

Counter& WorkerMetrics::by_category(std::map<std::string, Counter*>& cache, Family<Counter>& family,
                                    const std::string& category) {
  auto it = cache.find(category);
  if (it == cache.end()) it = cache.emplace(category, &family.Add({{"category", category}})).first;
  return *it->second;
}

void WorkerMetrics::add_link(const std::string& link) {
  if (!links_.insert(link).second) return;
  f_->reconnects.Add({{"link", link}});
  f_->connect_failures.Add({{"link", link}});
  f_->connections_lost.Add({{"link", link}});
}

void WorkerMetrics::add_to(Counter& counter, std::uint64_t now_total, std::uint64_t* seen) {
  if (now_total > *seen) counter.Increment(static_cast<double>(now_total - *seen));
  *seen = std::max(*seen, now_total);
}

prometheus::Counter& WorkerMetrics::by_op(std::array<prometheus::Counter*, kHistoryOpCount>& cache,
                                          HistoryOp op, Family<Counter>& family, const char* label,
                                          const char* value) {
  prometheus::Counter*& counter = cache[static_cast<std::size_t>(op)];
  if (counter == nullptr) counter = &family.Add({{label, value}});
  return *counter;
}

void WorkerMetrics::on_record(const HistoryRecord& r, std::uint64_t now_us) {
  by_op(records_by_op_, r.op, f_->records, "op", history_op_name(r.op)).Increment();
  switch (r.op) {
    case HistoryOp::acquire:
    case HistoryOp::renew:
    case HistoryOp::lose:
    case HistoryOp::release:
      by_op(leases_by_op_, r.op, f_->leases, "event", history_op_name(r.op)).Increment();
      break;
    case HistoryOp::read_fenced:
      by_op(fenced_by_op_, r.op, f_->fenced, "op", "read").Increment();
      break;
    case HistoryOp::ack_fenced:
      by_op(fenced_by_op_, r.op, f_->fenced, "op", "ack").Increment();
      break;
    case HistoryOp::commit_fenced:
      by_op(fenced_by_op_, r.op, f_->fenced, "op", "commit").Increment();
      break;
    case HistoryOp::halt:
      f_->halts.Add({}).Increment();
      break;
    case HistoryOp::enter:
      if (entered_us_.size() < kInFlightMax) entered_us_[in_flight_key(r)] = now_us;
      break;
    case HistoryOp::exit: {
      const bool ok = r.detail == "ok";
      by_category(ok ? handled_ : failed_, ok ? f_->handled : f_->failed, r.category).Increment();
      auto entered = entered_us_.find(in_flight_key(r));
      if (entered != entered_us_.end()) {
        const std::uint64_t took_us = now_us >= entered->second ? now_us - entered->second : 0;
        entered_us_.erase(entered);
        auto histogram = duration_.find(r.category);
        if (histogram == duration_.end()) {
          histogram = duration_
                          .emplace(r.category, &f_->duration.Add({{"category", r.category}},
                                                                 duration_buckets()))
                          .first;
        }
        histogram->second->Observe(static_cast<double>(took_us) / 1e6);
      }
      break;
    }
    default:
      break;
  }
}

void WorkerMetrics::on_connection_event(const std::string& link,
                                        const HiredisLink::ConnectionEvent& event,
                                        bool one_node_of_many) {
  using Kind = HiredisLink::ConnectionEvent::Kind;
  add_link(link);
  if (one_node_of_many) {
    // Counted only: a node's connection comes back after failed attempts (a reconnect).
    if (event.kind == Kind::connect_failed) f_->connect_failures.Add({{"link", link}}).Increment();
    if (event.kind == Kind::lost) f_->connections_lost.Add({{"link", link}}).Increment();
    if (event.kind == Kind::connected) f_->reconnects.Add({{"link", link}}).Increment();
    return;
  }
  switch (event.kind) {
    case Kind::connect_failed:
      f_->connect_failures.Add({{"link", link}}).Increment();
      down_[link] = true;
      break;
    case Kind::lost:
      f_->connections_lost.Add({{"link", link}}).Increment();
      down_[link] = true;
      break;
    case Kind::connected:
      if (ever_connected_[link]) f_->reconnects.Add({{"link", link}}).Increment();
      down_[link] = false;
      ever_connected_[link] = true;
      break;
  }
  if (link == "commands") {
    commands_connected_.store(event.kind == Kind::connected);
    commands_gauge_->Set(event.kind == Kind::connected ? 1 : 0);
  }
}

std::string discovery_index_read(const Command& command) {
  if (command.size() == 2 && command[0] == "SMEMBERS") return command[1];
  if (command.size() == 3 && command[0] == "SUNION") return command[1];
  return "";
}

void WorkerMetrics::on_command_sent(const Command& command) {
  if (index_names_.empty()) return;
  // Discovery reads the indexes in category order, one cycle after the other: a read of the
  // first index after every index answered in the cycle before means that cycle is done.
  if (discovery_index_read(command) != index_names_.front()) return;
  const bool all = std::all_of(index_answered_.begin(), index_answered_.end(),
                               [](bool answered) { return answered; });
  if (all) discovered_.store(true);
  index_answered_.assign(index_names_.size(), false);
}

void WorkerMetrics::on_command_done(const std::string& index_key, bool answered, bool array_reply) {
  if (answered) {
    // A reply came: the link is connected (a connection without failed attempts before it
    // emits no event, a reconnect after a loss included).
    if (down_["commands"] && ever_connected_["commands"]) {
      f_->reconnects.Add({{"link", "commands"}}).Increment();
    }
    down_["commands"] = false;
    ever_connected_["commands"] = true;
    commands_gauge_->Set(1);
    commands_connected_.store(true);
  }
  if (!answered || !array_reply || index_key.empty()) return;
  for (std::size_t i = 0; i < index_names_.size(); ++i) {
    if (index_key == index_names_[i]) index_answered_[i] = true;
  }
}

void WorkerMetrics::sample_figures(const WorkerFigures& w, std::uint64_t now_ms) {
  loop_seen_ms_.store(now_ms);
  loop_seen_.store(true);
  f_->units_owned.Add({{"kind", options_.process_manager ? "process_manager" : "partition"}})
      .Set(static_cast<double>(w.units_owned));
  f_->units_halted.Add({}).Set(static_cast<double>(w.units_halted));
  if (!w.heartbeat_rounds_ms.empty()) {
    const auto longest =
        *std::max_element(w.heartbeat_rounds_ms.begin(), w.heartbeat_rounds_ms.end());
    f_->heartbeat_round.Add({{"of", "last"}}).Set(w.heartbeat_rounds_ms.back() / 1000.0);
    f_->heartbeat_round.Add({{"of", "longest_recent"}}).Set(longest / 1000.0);
  }
  add_to(f_->skipped.Add({}), w.index_members_skipped, &skipped_seen_);
  add_to(f_->no_partition.Add({}), w.no_partition_units, &no_partition_seen_);
  for (const auto& [link, count] : w.command_refusals) {
    add_to(f_->refusals.Add({{"link", link}}), count, &refusals_seen_[link]);
  }
  if (w.exec) {
    add_to(f_->exec_starts.Add({}), w.exec_starts, &exec_starts_seen_);
    add_to(f_->exec_faults.Add({}), w.exec_faults, &exec_faults_seen_);
  }
  if (w.cluster) {
    const std::pair<const char*, std::uint64_t> redirections[] = {
        {"moved", w.cluster_moved}, {"ask", w.cluster_asked}, {"tryagain", w.cluster_tryagain}};
    for (const auto& [kind, count] : redirections) {
      add_to(f_->redirections.Add({{"kind", kind}}), count, &redirections_seen_[kind]);
    }
    add_to(f_->map_refreshes.Add({}), w.cluster_map_refreshes, &map_refreshes_seen_);
    add_to(f_->failovers_seen.Add({}), w.cluster_failovers_seen, &failovers_seen_);
  }
}

std::vector<PartitionRef> WorkerMetrics::lag_streams(const std::vector<std::string>& unit_keys,
                                                     std::uint64_t* omitted) const {
  std::vector<PartitionRef> out;
  std::uint64_t left_out = 0;
  for (const std::string& key : unit_keys) {
    for (const std::string& category : options_.categories) {
      if (out.size() < kLagStreamsMax) {
        out.push_back(PartitionRef{category, key, options_.key_layout});
      } else {
        ++left_out;
      }
    }
  }
  *omitted = left_out;
  return out;
}

void WorkerMetrics::sample_lag(const std::vector<StreamLag>& streams,
                               std::uint64_t streams_omitted) {
  SEQBY_CHECK(streams.size() <= kLagStreamsMax);
  std::map<std::string, std::pair<Gauge*, Gauge*>> kept;
  for (const StreamLag& s : streams) {
    const std::string name = s.stream.stream();
    auto it = lag_gauges_.find(name);
    std::pair<Gauge*, Gauge*> gauges;
    if (it != lag_gauges_.end()) {
      gauges = it->second;
      lag_gauges_.erase(it);
    } else {
      const prometheus::Labels labels{{"category", s.stream.category}, {"key", s.stream.key}};
      gauges = {&f_->pending.Add(labels), &f_->lag.Add(labels)};
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    gauges.first->Set(s.pending >= 0 ? static_cast<double>(s.pending) : nan);
    gauges.second->Set(s.lag >= 0 ? static_cast<double>(s.lag) : nan);
    kept.emplace(name, gauges);
  }
  for (const auto& [name, gauges] : lag_gauges_) {  // streams no longer held
    f_->pending.Remove(gauges.first);
    f_->lag.Remove(gauges.second);
  }
  lag_gauges_ = std::move(kept);
  f_->lag_omitted.Add({}).Set(static_cast<double>(streams_omitted));
}

void WorkerMetrics::stopping() { stopping_.store(true); }

std::string WorkerMetrics::scrape() const {
  f_->ready.Add({}).Set(readyz().status == 200 ? 1 : 0);
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

HealthAnswer WorkerMetrics::healthz(std::uint64_t now_ms) const {
  if (!loop_seen_.load()) return {200, "ok: starting\n"};
  const std::uint64_t seen_ms = loop_seen_ms_.load();
  const std::uint64_t silent_ms = now_ms > seen_ms ? now_ms - seen_ms : 0;
  if (silent_ms > options_.loop_silence_max_ms) {
    return {503, "unhealthy: the worker's loop has not answered for " + std::to_string(silent_ms) +
                     " ms\n"};
  }
  return {200, "ok\n"};
}

HealthAnswer WorkerMetrics::readyz() const {
  if (stopping_.load()) return {503, "not ready: stopping\n"};
  if (!commands_connected_.load()) return {503, "not ready: not connected to Redis\n"};
  if (!discovered_.load()) return {503, "not ready: the first discovery cycle is not done\n"};
  return {200, "ready\n"};
}

// --- the decorators ---------------------------------------------------------------------------

MetricsHistorySink::MetricsHistorySink(HistorySink& inner, WorkerMetrics& metrics,
                                       std::function<std::uint64_t()> now_us)
    : inner_(inner), metrics_(metrics), now_us_(std::move(now_us)) {}

void MetricsHistorySink::record(HistoryRecord record) {
  metrics_.on_record(record, now_us_());
  inner_.record(std::move(record));
}

MetricsLink::MetricsLink(RedisLink& inner, WorkerMetrics& metrics)
    : inner_(inner), metrics_(metrics) {}

Task<Result<Reply>> MetricsLink::execute(Command command) {
  metrics_.on_command_sent(command);
  // Only a discovery read's index is needed once the reply is back.
  const std::string index_key = discovery_index_read(command);
  Result<Reply> reply = co_await inner_.execute(std::move(command));
  const bool array = reply.ok() && reply.value().kind == Reply::Kind::array;
  metrics_.on_command_done(index_key, reply.ok(), array);
  co_return reply;
}

Task<Result<ReplicatedReply>> MetricsLink::execute_replicated(Command command,
                                                              std::uint32_t replicas,
                                                              std::uint64_t timeout_ms) {
  metrics_.on_command_sent(command);
  Result<ReplicatedReply> reply =
      co_await inner_.execute_replicated(std::move(command), replicas, timeout_ms);
  const bool array = reply.ok() && reply.value().reply.kind == Reply::Kind::array;
  metrics_.on_command_done("", reply.ok(), array);
  co_return reply;
}

// --- the samplers -----------------------------------------------------------------------------

namespace {

// The group's pending count and lag on `stream`, from XINFO GROUPS (-1 each when not told).
Task<WorkerMetrics::StreamLag> read_stream_lag(RedisLink& link, PartitionRef stream,
                                               std::string group) {
  WorkerMetrics::StreamLag out;
  Command groups{"XINFO", "GROUPS", stream.stream()};
  Result<Reply> reply = co_await link.execute(std::move(groups));
  out.stream = std::move(stream);
  if (!reply.ok() || reply.value().kind != Reply::Kind::array) co_return out;
  for (const Reply& entry : reply.value().elements) {
    bool ours = false;
    std::int64_t pending = -1;
    std::int64_t lag = -1;
    for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
      const std::string& name = entry.elements[i].str;
      const Reply& value = entry.elements[i + 1];
      if (name == "name") ours = value.str == group;
      if (name == "pending" && value.kind == Reply::Kind::integer) pending = value.integer;
      if (name == "lag" && value.kind == Reply::Kind::integer) lag = value.integer;
    }
    if (ours) {
      out.pending = pending;
      out.lag = lag;
    }
  }
  co_return out;
}

// Sleeps `duration_ms`, or less once `stop` is raised (it looks every 50 ms), so that a stopping
// worker never waits a whole sampling interval for its samplers.
Task<void> sleep_unless_stopped(Runtime& runtime, std::uint64_t duration_ms,
                                const std::atomic<bool>& stop) {
  constexpr std::uint64_t kStopCheckMs = 50;
  for (std::uint64_t slept_ms = 0; slept_ms < duration_ms && !stop.load();
       slept_ms += kStopCheckMs) {
    co_await runtime.sleep_ms(std::min(kStopCheckMs, duration_ms - slept_ms));
  }
}

}  // namespace

Task<void> sample_worker_figures(Runtime& runtime, WorkerMetrics& metrics,
                                 std::function<WorkerFigures()> figures,
                                 const std::atomic<bool>& stop, std::uint64_t interval_ms) {
  SEQBY_CHECK(interval_ms > 0);
  metrics.sampler_started();
  while (!stop.load()) {
    metrics.sample_figures(figures(), runtime.clock().now_ms());
    co_await sleep_unless_stopped(runtime, interval_ms, stop);
  }
  metrics.sampler_ended();
}

Task<void> sample_worker_lag(Runtime& runtime, RedisLink& link, WorkerMetrics& metrics,
                             std::function<std::vector<std::string>()> held_keys,
                             const std::atomic<bool>& stop, std::uint64_t interval_ms) {
  SEQBY_CHECK(interval_ms > 0);
  metrics.sampler_started();
  while (!stop.load()) {
    std::uint64_t omitted = 0;
    const std::vector<PartitionRef> streams = metrics.lag_streams(held_keys(), &omitted);
    std::vector<WorkerMetrics::StreamLag> lags;
    lags.reserve(streams.size());
    for (const PartitionRef& stream : streams) {
      WorkerMetrics::StreamLag lag =
          co_await read_stream_lag(link, stream, metrics.options().group);
      lags.push_back(std::move(lag));
      if (stop.load()) break;
    }
    if (stop.load()) break;
    metrics.sample_lag(lags, omitted);
    co_await sleep_unless_stopped(runtime, interval_ms, stop);
  }
  metrics.sampler_ended();
}

}  // namespace seqby::redis
