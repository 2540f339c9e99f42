#include "seqby/sim/faults.h"

#include <algorithm>
#include <tuple>

#include "seqby/core/check.h"

namespace seqby::sim {

namespace {

constexpr std::array<FaultKind, kFaultKindCount> kAll = {
    FaultKind::crash,
    FaultKind::stall,
    FaultKind::heartbeat_stall,
    FaultKind::clock_skew,
    FaultKind::redis_clock_jump,
    FaultKind::request_lost,
    FaultKind::reply_lost,
    FaultKind::latency,
    FaultKind::connection_reset,
    FaultKind::handler_transient,
    FaultKind::handler_poison,
    FaultKind::slow_handler,
    FaultKind::server_restart,
    FaultKind::server_restart_empty,
    FaultKind::script_flush,
    FaultKind::client_pause,
    FaultKind::client_kill,
    FaultKind::stall_replace,
};

std::array<FaultKind, kFaultKindCount> sorted_by_name() {
  auto kinds = kAll;
  std::sort(kinds.begin(), kinds.end(), [](FaultKind a, FaultKind b) {
    return std::string_view(fault_kind_name(a)) < std::string_view(fault_kind_name(b));
  });
  return kinds;
}

const char* rate_unit(FaultKind kind) {
  switch (fault_driver(kind)) {
    case FaultDriver::schedule:
      return "per instance-second";
    case FaultDriver::link:
      return "per command";
    case FaultDriver::handler:
      return "per event";
  }
  return "";
}

}  // namespace

const char* fault_kind_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::crash:
      return "crash";
    case FaultKind::stall:
      return "stall";
    case FaultKind::heartbeat_stall:
      return "heartbeat_stall";
    case FaultKind::clock_skew:
      return "clock_skew";
    case FaultKind::redis_clock_jump:
      return "redis_clock_jump";
    case FaultKind::request_lost:
      return "request_lost";
    case FaultKind::reply_lost:
      return "reply_lost";
    case FaultKind::latency:
      return "latency";
    case FaultKind::connection_reset:
      return "connection_reset";
    case FaultKind::handler_transient:
      return "handler_transient";
    case FaultKind::handler_poison:
      return "handler_poison";
    case FaultKind::slow_handler:
      return "slow_handler";
    case FaultKind::server_restart:
      return "server_restart";
    case FaultKind::server_restart_empty:
      return "server_restart_empty";
    case FaultKind::script_flush:
      return "script_flush";
    case FaultKind::client_pause:
      return "client_pause";
    case FaultKind::client_kill:
      return "client_kill";
    case FaultKind::stall_replace:
      return "stall_replace";
  }
  return "unknown";
}

bool parse_fault_kind(std::string_view name, FaultKind* out) {
  for (FaultKind kind : kAll) {
    if (name == fault_kind_name(kind)) {
      *out = kind;
      return true;
    }
  }
  return false;
}

std::span<const FaultKind> all_fault_kinds() { return kAll; }

std::span<const FaultKind> fault_kinds_by_name() {
  static const std::array<FaultKind, kFaultKindCount> kByName = sorted_by_name();
  return kByName;
}

FaultDriver fault_driver(FaultKind kind) {
  switch (kind) {
    case FaultKind::crash:
    case FaultKind::stall:
    case FaultKind::heartbeat_stall:
    case FaultKind::clock_skew:
    case FaultKind::redis_clock_jump:
    case FaultKind::server_restart:
    case FaultKind::server_restart_empty:
    case FaultKind::script_flush:
    case FaultKind::client_pause:
    case FaultKind::client_kill:
    case FaultKind::stall_replace:
      return FaultDriver::schedule;
    case FaultKind::request_lost:
    case FaultKind::reply_lost:
    case FaultKind::latency:
    case FaultKind::connection_reset:
      return FaultDriver::link;
    case FaultKind::handler_transient:
    case FaultKind::handler_poison:
    case FaultKind::slow_handler:
      return FaultDriver::handler;
  }
  return FaultDriver::schedule;
}

bool fault_targets_instance(FaultKind kind) {
  switch (kind) {
    case FaultKind::redis_clock_jump:
    case FaultKind::server_restart:
    case FaultKind::server_restart_empty:
    case FaultKind::script_flush:
    case FaultKind::client_pause:
      return false;
    default:
      return fault_driver(kind) == FaultDriver::schedule;
  }
}

bool fault_in_swarm(FaultKind kind) { return kind != FaultKind::server_restart_empty; }

// --- counters ---

std::uint64_t FaultCounters::total() const {
  std::uint64_t sum = 0;
  for (auto c : counts_) sum += c;
  return sum;
}

void FaultCounters::merge(const FaultCounters& other) {
  for (std::size_t i = 0; i < kFaultKindCount; i++) counts_[i] += other.counts_[i];
}

std::map<std::string, std::uint64_t> FaultCounters::by_name() const {
  std::map<std::string, std::uint64_t> out;
  for (FaultKind kind : kAll) out[fault_kind_name(kind)] = count(kind);
  return out;
}

std::string FaultCounters::to_string() const {
  std::string out;
  for (FaultKind kind : fault_kinds_by_name()) {
    if (!out.empty()) out += ' ';
    out += fault_kind_name(kind);
    out += '=';
    out += std::to_string(count(kind));
  }
  return out;
}

void FaultRecorder::on_fault(FaultKind kind, std::string_view node, std::string_view detail) {
  counters_.add(kind);
  if (sink_ == nullptr) return;
  HistoryRecord record;
  record.time_ms = clock_.now_ms();
  record.node = std::string(node);
  record.op = HistoryOp::fault;
  record.detail = fault_kind_name(kind);
  if (!detail.empty()) {
    record.detail += ' ';
    record.detail += detail;
  }
  sink_->record(std::move(record));
}

// --- swarm ---

SwarmConfig SwarmConfig::draw(std::uint64_t seed, const SwarmBounds& bounds) {
  SwarmConfig config;
  config.bounds = bounds;
  const Rng swarm = Rng(seed).derive("swarm");
  for (FaultKind kind : kAll) {
    Rng rng = swarm.derive(fault_kind_name(kind));
    std::uint32_t rate_max = bounds.schedule_rate_ppm_max;
    if (fault_driver(kind) == FaultDriver::link) rate_max = bounds.link_rate_ppm_max;
    if (fault_driver(kind) == FaultDriver::handler) rate_max = bounds.handler_rate_ppm_max;
    FaultSetting& s = config.settings[static_cast<std::size_t>(kind)];
    s.enabled = rng.chance_ppm(bounds.enable_ppm) && rate_max > 0 && fault_in_swarm(kind);
    s.rate_ppm = rate_max > 0 ? static_cast<std::uint32_t>(rng.uniform(1, rate_max)) : 0;
  }
  return config;
}

void SwarmConfig::set(FaultKind kind, bool enabled, std::uint32_t rate_ppm) {
  SEQBY_CHECK(rate_ppm <= 1'000'000);
  settings[static_cast<std::size_t>(kind)] = FaultSetting{enabled, rate_ppm};
}

std::string SwarmConfig::describe() const {
  std::string out;
  for (FaultKind kind : fault_kinds_by_name()) {
    const FaultSetting& s = setting(kind);
    out += fault_kind_name(kind);
    if (s.enabled) {
      out += " on rate_ppm=" + std::to_string(s.rate_ppm) + " " + rate_unit(kind) + "\n";
    } else {
      out += " off\n";
    }
  }
  const SwarmBounds& b = bounds;
  out += "bounds latency_ms_max=" + std::to_string(b.latency_ms_max) +
         " stall_ms=" + std::to_string(b.stall_ms_min) + ".." + std::to_string(b.stall_ms_max) +
         " crash_downtime_ms_max=" + std::to_string(b.crash_downtime_ms_max) +
         " clock_jump_ms_max=" + std::to_string(b.clock_jump_ms_max) +
         " clock_rate_spread_ppm=" + std::to_string(b.clock_rate_spread_ppm) +
         " redis_clock_jump_ms_max=" + std::to_string(b.redis_clock_jump_ms_max) +
         " slow_handler_ms_max=" + std::to_string(b.slow_handler_ms_max) +
         " transient_failures_max=" + std::to_string(b.transient_failures_max) +
         " server_down_ms=" + std::to_string(b.server_down_ms_min) + ".." +
         std::to_string(b.server_down_ms_max) +
         " client_pause_ms=" + std::to_string(b.client_pause_ms_min) + ".." +
         std::to_string(b.client_pause_ms_max) + "\n";
  return out;
}

HandlerFaults draw_handler_faults(const Rng& run_rng, const SwarmConfig& config,
                                  std::string_view event_identity) {
  Rng rng = run_rng.derive("handler").derive(event_identity);
  // Fixed draws whatever is enabled, so switching one kind does not move the others.
  const bool transient = rng.chance_ppm(config.rate_ppm(FaultKind::handler_transient));
  const auto failures =
      rng.uniform(1, std::max<std::uint32_t>(1, config.bounds.transient_failures_max));
  const bool poison = rng.chance_ppm(config.rate_ppm(FaultKind::handler_poison));
  const bool slow = rng.chance_ppm(config.rate_ppm(FaultKind::slow_handler));
  const std::uint64_t slow_ms =
      rng.uniform(1, std::max<std::uint64_t>(1, config.bounds.slow_handler_ms_max));
  HandlerFaults out;
  if (transient) out.transient_failures = static_cast<std::uint32_t>(failures);
  out.poison = poison;
  if (slow) out.slow_ms = slow_ms;
  return out;
}

// --- schedule ---

std::string describe(const TimedFault& f) {
  std::string out = std::string(fault_kind_name(f.kind)) + " at_ms=" + std::to_string(f.at_ms);
  if (fault_targets_instance(f.kind)) out += " target=" + std::to_string(f.target);
  switch (f.kind) {
    case FaultKind::crash:
    case FaultKind::stall:
    case FaultKind::heartbeat_stall:
    case FaultKind::stall_replace:
    case FaultKind::server_restart:
    case FaultKind::server_restart_empty:
    case FaultKind::client_pause:
      out += " duration_ms=" + std::to_string(f.duration_ms);
      break;
    case FaultKind::clock_skew:
      out += " jump_ms=" + std::to_string(f.amount_ms) + " rate_ppm=" + std::to_string(f.rate_ppm);
      break;
    case FaultKind::redis_clock_jump:
      out += " jump_ms=" + std::to_string(f.amount_ms);
      break;
    default:
      break;
  }
  return out;
}

std::string FaultSchedule::describe() const {
  std::string out;
  for (const TimedFault& f : faults) out += sim::describe(f) + "\n";
  return out;
}

namespace {

// The kinds added for the chaos campaigns (issue 13): their draws differ from the older kinds'.
bool is_server_fault(FaultKind kind) {
  switch (kind) {
    case FaultKind::server_restart:
    case FaultKind::server_restart_empty:
    case FaultKind::script_flush:
    case FaultKind::client_pause:
    case FaultKind::client_kill:
      return true;
    default:
      return false;
  }
}

// One server fault kind's strikes on `target` over [start_ms, end_ms), from its own sub-stream
// `r`: per second, the same draws whatever strikes.
void draw_server_faults(Rng& r, const SwarmConfig& config, FaultKind kind, std::uint32_t target,
                        std::uint64_t start_ms, std::uint64_t end_ms, FaultSchedule* schedule) {
  const SwarmBounds& b = config.bounds;
  for (std::uint64_t second = start_ms; second < end_ms; second += 1000) {
    const bool strikes = r.chance_ppm(config.rate_ppm(kind));
    const std::uint64_t offset_ms = r.below(1000);
    const std::uint64_t down_ms =
        r.uniform(std::min(b.server_down_ms_min, b.server_down_ms_max), b.server_down_ms_max);
    const std::uint64_t pause_ms =
        r.uniform(std::min(b.client_pause_ms_min, b.client_pause_ms_max), b.client_pause_ms_max);
    if (!strikes || second + offset_ms >= end_ms) continue;
    TimedFault f;
    f.kind = kind;
    f.at_ms = second + offset_ms;
    f.target = target;
    if (kind == FaultKind::server_restart || kind == FaultKind::server_restart_empty) {
      f.duration_ms = down_ms;
    }
    if (kind == FaultKind::client_pause) f.duration_ms = pause_ms;
    schedule->faults.push_back(f);
  }
}

}  // namespace

FaultSchedule draw_fault_schedule(const Rng& rng, const SwarmConfig& config,
                                  std::uint32_t instance_count, std::uint64_t start_ms,
                                  std::uint64_t end_ms, std::size_t fault_count_max) {
  SEQBY_CHECK(start_ms <= end_ms);
  const SwarmBounds& b = config.bounds;
  const Rng base = rng.derive("schedule");
  FaultSchedule schedule;
  for (FaultKind kind : kAll) {
    if (fault_driver(kind) != FaultDriver::schedule || !config.enabled(kind)) continue;
    // The server is one target: its kinds draw once per second, not per instance.
    const std::uint32_t targets = fault_targets_instance(kind) ? instance_count : 1;
    for (std::uint32_t target = 0; target < targets; target++) {
      Rng r = base.derive(fault_kind_name(kind)).derive(std::to_string(target));
      if (is_server_fault(kind)) {
        draw_server_faults(r, config, kind, target, start_ms, end_ms, &schedule);
        continue;
      }
      for (std::uint64_t second = start_ms; second < end_ms; second += 1000) {
        const bool strikes = r.chance_ppm(config.rate_ppm(kind));
        const std::uint64_t offset_ms = r.below(1000);
        const std::uint64_t stall_ms =
            r.uniform(std::min(b.stall_ms_min, b.stall_ms_max), b.stall_ms_max);
        const std::uint64_t downtime_ms = r.uniform(0, b.crash_downtime_ms_max);
        const std::int64_t jump_ms = r.uniform_signed(-b.clock_jump_ms_max, b.clock_jump_ms_max);
        const std::uint32_t spread = std::min<std::uint32_t>(b.clock_rate_spread_ppm, 900'000);
        const auto rate_ppm =
            static_cast<std::uint32_t>(r.uniform(1'000'000 - spread, 1'000'000 + spread));
        const std::uint64_t server_jump_ms =
            r.uniform(1, std::max<std::uint64_t>(1, b.redis_clock_jump_ms_max));
        if (!strikes || second + offset_ms >= end_ms) continue;
        TimedFault f;
        f.kind = kind;
        f.at_ms = second + offset_ms;
        f.target = target;
        switch (kind) {
          case FaultKind::crash:
            f.duration_ms = downtime_ms;
            break;
          case FaultKind::stall:
          case FaultKind::heartbeat_stall:
          case FaultKind::stall_replace:
            f.duration_ms = stall_ms;
            break;
          case FaultKind::clock_skew:
            f.amount_ms = jump_ms;
            f.rate_ppm = rate_ppm;
            break;
          case FaultKind::redis_clock_jump:
            f.amount_ms = static_cast<std::int64_t>(server_jump_ms);
            break;
          default:
            break;
        }
        schedule.faults.push_back(f);
      }
    }
  }
  std::sort(schedule.faults.begin(), schedule.faults.end(),
            [](const TimedFault& a, const TimedFault& c) {
              return std::tie(a.at_ms, a.kind, a.target) < std::tie(c.at_ms, c.kind, c.target);
            });
  if (schedule.faults.size() > fault_count_max) schedule.faults.resize(fault_count_max);
  return schedule;
}

// --- injector ---

FaultInjector::FaultInjector(Scheduler& scheduler, std::vector<SimRuntime*> instances,
                             ServerClock& server_clock, FaultObserver* observer, FaultHooks hooks)
    : scheduler_(scheduler),
      instances_(std::move(instances)),
      server_clock_(server_clock),
      observer_(observer),
      hooks_(std::move(hooks)),
      down_(instances_.size(), false) {
  for (SimRuntime* rt : instances_) SEQBY_CHECK(rt != nullptr);
}

void FaultInjector::apply(const FaultSchedule& schedule) {
  for (const TimedFault& f : schedule.faults) {
    SEQBY_CHECK(!fault_targets_instance(f.kind) || f.target < instances_.size());
    SEQBY_CHECK(fault_driver(f.kind) == FaultDriver::schedule);
    SEQBY_CHECK(!is_server_fault(f.kind) || server_ != nullptr);
    scheduler_.call_at(f.at_ms, [this, f] {
      if (!stopped_) inject(f);
    });
  }
}

void FaultInjector::inject(const TimedFault& f) {
  const std::uint64_t now = scheduler_.now_ms();
  std::string node;
  if (fault_targets_instance(f.kind)) {
    SEQBY_CHECK(f.target < instances_.size());
    node = instances_[f.target]->name();
  }
  std::string detail;
  switch (f.kind) {
    case FaultKind::crash: {
      if (down_[f.target]) return;  // already down: nothing to crash, nothing counted
      down_[f.target] = true;
      instances_[f.target]->crash();
      if (server_ != nullptr) server_->client_gone(node);
      if (hooks_.on_crash) hooks_.on_crash(f.target);
      detail = "downtime_ms=" + std::to_string(f.duration_ms);
      if (f.duration_ms > 0) {
        const std::uint32_t target = f.target;
        scheduler_.call_at(now + f.duration_ms, [this, target] { restart(target); });
      }
      break;
    }
    case FaultKind::stall:
      instances_[f.target]->stall_until(now + f.duration_ms);
      detail = "duration_ms=" + std::to_string(f.duration_ms);
      break;
    case FaultKind::heartbeat_stall:
      instances_[f.target]->stall_tasks_until(kHeartbeatTaskName, now + f.duration_ms);
      detail = "duration_ms=" + std::to_string(f.duration_ms);
      break;
    case FaultKind::stall_replace: {
      // A down instance has no process to stall or replace: nothing happens, nothing counted.
      if (down_[f.target] || !replace_) return;
      SimRuntime* stalled = instances_[f.target];
      stalled->stall_until(now + f.duration_ms);
      SimRuntime* replacement = replace_(f.target, now + f.duration_ms);
      SEQBY_CHECK(replacement != nullptr && replacement != stalled);
      instances_[f.target] = replacement;
      detail =
          "duration_ms=" + std::to_string(f.duration_ms) + " replacement=" + replacement->name();
      break;
    }
    case FaultKind::clock_skew:
      instances_[f.target]->jump_clock(f.amount_ms);
      if (f.rate_ppm != 0) instances_[f.target]->set_clock_rate(f.rate_ppm);
      detail = "jump_ms=" + std::to_string(f.amount_ms) + " rate_ppm=" + std::to_string(f.rate_ppm);
      break;
    case FaultKind::redis_clock_jump:
      SEQBY_CHECK(f.amount_ms >= 0);
      server_clock_.jump_forward(static_cast<std::uint64_t>(f.amount_ms));
      detail = "jump_ms=" + std::to_string(f.amount_ms);
      break;
    case FaultKind::server_restart:
    case FaultKind::server_restart_empty: {
      SEQBY_CHECK(server_ != nullptr);
      const bool keep_data = f.kind == FaultKind::server_restart;
      if (!server_->restart(keep_data, f.duration_ms)) return;
      detail = "downtime_ms=" + std::to_string(f.duration_ms) +
               (keep_data ? " data=kept" : " data=lost");
      break;
    }
    case FaultKind::script_flush:
      SEQBY_CHECK(server_ != nullptr);
      if (!server_->flush_scripts()) return;
      break;
    case FaultKind::client_pause:
      SEQBY_CHECK(server_ != nullptr);
      if (!server_->pause_clients(f.duration_ms)) return;
      detail = "duration_ms=" + std::to_string(f.duration_ms);
      break;
    case FaultKind::client_kill:
      SEQBY_CHECK(server_ != nullptr);
      // A down instance has no connection: nothing to kill, nothing counted.
      if (down_[f.target] || !server_->kill_client(instances_[f.target]->name())) return;
      break;
    default:
      SEQBY_CHECK(false && "only schedule-driven faults are injected by the FaultInjector");
  }
  if (observer_ != nullptr) observer_->on_fault(f.kind, node, detail);
}

void FaultInjector::restart(std::uint32_t instance) {
  if (!down_[instance]) return;
  down_[instance] = false;
  if (hooks_.on_restart) hooks_.on_restart(instance);
}

void FaultInjector::stop() {
  stopped_ = true;
  for (std::uint32_t i = 0; i < instances_.size(); i++) restart(i);
}

}  // namespace seqby::sim
