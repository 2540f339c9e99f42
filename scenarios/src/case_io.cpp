#include "seqby/scenarios/case_io.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "seqby/core/keys.h"
#include "seqby/core/variant.h"

namespace seqby::scenarios {
namespace {

using Json = nlohmann::ordered_json;
using sim::FaultKind;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Reads fields of one object, remembering the first problem with its JSON path.
class Reader {
 public:
  Reader(std::string file, std::string* error) : file_(std::move(file)), error_(error) {}

  bool failed() const { return !error_->empty(); }
  void fail(const std::string& path, const std::string& what) {
    if (error_->empty()) *error_ = file_ + ": field '" + path + "': " + what;
  }

  // The member `name` of `object` at `path`; null (and a failure) when missing.
  const Json* member(const Json& object, const std::string& path, const char* name) {
    const std::string at = path.empty() ? name : path + "." + name;
    auto it = object.find(name);
    if (it == object.end()) {
      fail(at, "missing");
      return nullptr;
    }
    return &*it;
  }
  // Unknown members are refused: a misspelt field must not silently take its default.
  void only(const Json& object, const std::string& path, std::initializer_list<const char*> names) {
    for (auto it = object.begin(); it != object.end(); ++it) {
      bool known = false;
      for (const char* n : names) known = known || it.key() == n;
      if (!known) fail(path.empty() ? it.key() : path + "." + it.key(), "unknown field");
    }
  }
  bool object(const Json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object, got " + j.dump());
    return j.is_object();
  }

  template <typename T>
  void u(const Json& obj, const std::string& path, const char* name, T* out) {
    const Json* j = member(obj, path, name);
    if (j == nullptr) return;
    const std::string at = path.empty() ? name : path + "." + name;
    if (!j->is_number_unsigned()) return fail(at, "expected an unsigned integer, got " + j->dump());
    const auto v = j->get<std::uint64_t>();
    if (v > std::numeric_limits<T>::max()) return fail(at, "out of range: " + j->dump());
    *out = static_cast<T>(v);
  }
  void i64(const Json& obj, const std::string& path, const char* name, std::int64_t* out) {
    const Json* j = member(obj, path, name);
    if (j == nullptr) return;
    if (!j->is_number_integer()) {
      return fail(path + "." + name, "expected an integer, got " + j->dump());
    }
    *out = j->get<std::int64_t>();
  }
  void b(const Json& obj, const std::string& path, const char* name, bool* out) {
    const Json* j = member(obj, path, name);
    if (j == nullptr) return;
    if (!j->is_boolean())
      return fail(path + "." + name, "expected true or false, got " + j->dump());
    *out = j->get<bool>();
  }
  void s(const Json& obj, const std::string& path, const char* name, std::string* out) {
    const Json* j = member(obj, path, name);
    if (j == nullptr) return;
    if (!j->is_string()) {
      return fail(path.empty() ? name : path + "." + name, "expected a string, got " + j->dump());
    }
    *out = j->get<std::string>();
  }

 private:
  std::string file_;
  std::string* error_;
};

Json engine_json(const sim::CaseEngineOptions& e) {
  Json j;
  j["lease_ttl_ms"] = e.lease_ttl_ms;
  j["heartbeat_interval_ms"] = e.heartbeat_interval_ms;
  j["discovery_interval_ms"] = e.discovery_interval_ms;
  j["poll_interval_ms"] = e.poll_interval_ms;
  j["retry_count_max"] = e.retry_count_max;
  j["retry_backoff_ms"] = e.retry_backoff_ms;
  j["retry_backoff_max_ms"] = e.retry_backoff_max_ms;
  j["transport_retry_count_max"] = e.transport_retry_count_max;
  j["stop_wait_max_ms"] = e.stop_wait_max_ms;
  j["reap_idle_ms"] = e.reap_idle_ms;
  j["partitions_warn_threshold"] = e.partitions_warn_threshold;
  return j;
}

void read_engine(Reader& r, const Json& j, const std::string& p, sim::CaseEngineOptions* e) {
  if (!r.object(j, p)) return;
  r.only(
      j, p,
      {"lease_ttl_ms", "heartbeat_interval_ms", "discovery_interval_ms", "poll_interval_ms",
       "retry_count_max", "retry_backoff_ms", "retry_backoff_max_ms", "transport_retry_count_max",
       "stop_wait_max_ms", "reap_idle_ms", "partitions_warn_threshold"});
  r.u(j, p, "lease_ttl_ms", &e->lease_ttl_ms);
  r.u(j, p, "heartbeat_interval_ms", &e->heartbeat_interval_ms);
  r.u(j, p, "discovery_interval_ms", &e->discovery_interval_ms);
  r.u(j, p, "poll_interval_ms", &e->poll_interval_ms);
  r.u(j, p, "retry_count_max", &e->retry_count_max);
  r.u(j, p, "retry_backoff_ms", &e->retry_backoff_ms);
  r.u(j, p, "retry_backoff_max_ms", &e->retry_backoff_max_ms);
  r.u(j, p, "transport_retry_count_max", &e->transport_retry_count_max);
  r.u(j, p, "stop_wait_max_ms", &e->stop_wait_max_ms);
  // Optional: case files written before the operating options existed leave them off.
  if (j.contains("reap_idle_ms")) r.u(j, p, "reap_idle_ms", &e->reap_idle_ms);
  if (j.contains("partitions_warn_threshold")) {
    r.u(j, p, "partitions_warn_threshold", &e->partitions_warn_threshold);
  }
  if (!r.failed() && e->heartbeat_interval_ms * 2 > e->lease_ttl_ms) {
    r.fail(p + ".heartbeat_interval_ms", "must be at most lease_ttl_ms / 2");
  }
}

Json link_json(const sim::SimLinkOptions& l) {
  Json j;
  j["request_latency_min_ms"] = l.request_latency_min_ms;
  j["request_latency_max_ms"] = l.request_latency_max_ms;
  j["reply_latency_min_ms"] = l.reply_latency_min_ms;
  j["reply_latency_max_ms"] = l.reply_latency_max_ms;
  j["timeout_ms"] = l.timeout_ms;
  return j;
}

void read_link(Reader& r, const Json& j, const std::string& p, sim::SimLinkOptions* l) {
  if (!r.object(j, p)) return;
  r.only(j, p,
         {"request_latency_min_ms", "request_latency_max_ms", "reply_latency_min_ms",
          "reply_latency_max_ms", "timeout_ms"});
  r.u(j, p, "request_latency_min_ms", &l->request_latency_min_ms);
  r.u(j, p, "request_latency_max_ms", &l->request_latency_max_ms);
  r.u(j, p, "reply_latency_min_ms", &l->reply_latency_min_ms);
  r.u(j, p, "reply_latency_max_ms", &l->reply_latency_max_ms);
  r.u(j, p, "timeout_ms", &l->timeout_ms);
  if (r.failed()) return;
  if (l->request_latency_min_ms > l->request_latency_max_ms) {
    r.fail(p + ".request_latency_min_ms", "above request_latency_max_ms");
  } else if (l->reply_latency_min_ms > l->reply_latency_max_ms) {
    r.fail(p + ".reply_latency_min_ms", "above reply_latency_max_ms");
  } else if (l->timeout_ms == 0) {
    r.fail(p + ".timeout_ms", "must be > 0");
  }
}

Json swarm_json(const sim::SwarmConfig& s) {
  Json faults = Json::object();
  for (FaultKind kind : sim::fault_kinds_by_name()) {
    Json f;
    f["enabled"] = s.setting(kind).enabled;
    f["rate_ppm"] = s.setting(kind).rate_ppm;
    faults[sim::fault_kind_name(kind)] = f;
  }
  const sim::SwarmBounds& b = s.bounds;
  Json bounds;
  bounds["enable_ppm"] = b.enable_ppm;
  bounds["link_rate_ppm_max"] = b.link_rate_ppm_max;
  bounds["handler_rate_ppm_max"] = b.handler_rate_ppm_max;
  bounds["schedule_rate_ppm_max"] = b.schedule_rate_ppm_max;
  bounds["latency_ms_max"] = b.latency_ms_max;
  bounds["stall_ms_min"] = b.stall_ms_min;
  bounds["stall_ms_max"] = b.stall_ms_max;
  bounds["crash_downtime_ms_max"] = b.crash_downtime_ms_max;
  bounds["clock_jump_ms_max"] = b.clock_jump_ms_max;
  bounds["clock_rate_spread_ppm"] = b.clock_rate_spread_ppm;
  bounds["redis_clock_jump_ms_max"] = b.redis_clock_jump_ms_max;
  bounds["slow_handler_ms_max"] = b.slow_handler_ms_max;
  bounds["transient_failures_max"] = b.transient_failures_max;
  Json j;
  j["faults"] = faults;
  j["bounds"] = bounds;
  return j;
}

void read_swarm(Reader& r, const Json& j, const std::string& p, sim::SwarmConfig* s) {
  if (!r.object(j, p)) return;
  r.only(j, p, {"faults", "bounds"});
  const Json* faults = r.member(j, p, "faults");
  if (faults != nullptr && r.object(*faults, p + ".faults")) {
    for (auto it = faults->begin(); it != faults->end(); ++it) {
      const std::string fp = p + ".faults." + it.key();
      FaultKind kind;
      if (!sim::parse_fault_kind(it.key(), &kind)) {
        std::vector<std::string> names;
        for (FaultKind k : sim::fault_kinds_by_name()) names.emplace_back(sim::fault_kind_name(k));
        r.fail(fp, "unknown fault kind (known: " + join(names) + ")");
        continue;
      }
      if (!r.object(it.value(), fp)) continue;
      r.only(it.value(), fp, {"enabled", "rate_ppm"});
      sim::FaultSetting f;
      r.b(it.value(), fp, "enabled", &f.enabled);
      r.u(it.value(), fp, "rate_ppm", &f.rate_ppm);
      if (f.rate_ppm > 1'000'000) r.fail(fp + ".rate_ppm", "above 1000000");
      if (!r.failed()) s->set(kind, f.enabled, f.rate_ppm);
    }
  }
  const Json* bounds = r.member(j, p, "bounds");
  const std::string bp = p + ".bounds";
  if (bounds == nullptr || !r.object(*bounds, bp)) return;
  sim::SwarmBounds& b = s->bounds;
  r.only(*bounds, bp,
         {"enable_ppm", "link_rate_ppm_max", "handler_rate_ppm_max", "schedule_rate_ppm_max",
          "latency_ms_max", "stall_ms_min", "stall_ms_max", "crash_downtime_ms_max",
          "clock_jump_ms_max", "clock_rate_spread_ppm", "redis_clock_jump_ms_max",
          "slow_handler_ms_max", "transient_failures_max"});
  r.u(*bounds, bp, "enable_ppm", &b.enable_ppm);
  r.u(*bounds, bp, "link_rate_ppm_max", &b.link_rate_ppm_max);
  r.u(*bounds, bp, "handler_rate_ppm_max", &b.handler_rate_ppm_max);
  r.u(*bounds, bp, "schedule_rate_ppm_max", &b.schedule_rate_ppm_max);
  r.u(*bounds, bp, "latency_ms_max", &b.latency_ms_max);
  r.u(*bounds, bp, "stall_ms_min", &b.stall_ms_min);
  r.u(*bounds, bp, "stall_ms_max", &b.stall_ms_max);
  r.u(*bounds, bp, "crash_downtime_ms_max", &b.crash_downtime_ms_max);
  r.i64(*bounds, bp, "clock_jump_ms_max", &b.clock_jump_ms_max);
  r.u(*bounds, bp, "clock_rate_spread_ppm", &b.clock_rate_spread_ppm);
  r.u(*bounds, bp, "redis_clock_jump_ms_max", &b.redis_clock_jump_ms_max);
  r.u(*bounds, bp, "slow_handler_ms_max", &b.slow_handler_ms_max);
  r.u(*bounds, bp, "transient_failures_max", &b.transient_failures_max);
}

Json schedule_json(const sim::FaultSchedule& s) {
  Json out = Json::array();
  for (const sim::TimedFault& f : s.faults) {
    Json j;
    j["kind"] = sim::fault_kind_name(f.kind);
    j["at_ms"] = f.at_ms;
    j["target"] = f.target;
    j["duration_ms"] = f.duration_ms;
    j["amount_ms"] = f.amount_ms;
    j["rate_ppm"] = f.rate_ppm;
    out.push_back(j);
  }
  return out;
}

void read_schedule(Reader& r, const Json& j, const std::string& p, std::uint32_t instances,
                   sim::FaultSchedule* s) {
  if (!j.is_array()) return r.fail(p, "expected an array, got " + j.dump());
  for (std::size_t i = 0; i < j.size() && !r.failed(); ++i) {
    const std::string fp = p + "[" + std::to_string(i) + "]";
    const Json& item = j[i];
    if (!r.object(item, fp)) return;
    r.only(item, fp, {"kind", "at_ms", "target", "duration_ms", "amount_ms", "rate_ppm"});
    sim::TimedFault f;
    std::string kind;
    r.s(item, fp, "kind", &kind);
    if (!r.failed() && (!sim::parse_fault_kind(kind, &f.kind) ||
                        sim::fault_driver(f.kind) != sim::FaultDriver::schedule)) {
      r.fail(fp + ".kind",
             "not a scheduled fault kind: \"" + kind +
                 "\" (known: clock_skew, crash, heartbeat_stall, redis_clock_jump, stall)");
    }
    r.u(item, fp, "at_ms", &f.at_ms);
    r.u(item, fp, "target", &f.target);
    r.u(item, fp, "duration_ms", &f.duration_ms);
    r.i64(item, fp, "amount_ms", &f.amount_ms);
    r.u(item, fp, "rate_ppm", &f.rate_ppm);
    if (r.failed()) return;
    if (f.kind != FaultKind::redis_clock_jump && f.target >= instances) {
      return r.fail(fp + ".target", "instance " + std::to_string(f.target) + " does not exist (" +
                                        std::to_string(instances) + " instances)");
    }
    if (f.kind == FaultKind::redis_clock_jump && f.amount_ms < 0) {
      return r.fail(fp + ".amount_ms", "the server clock only jumps forward");
    }
    if (f.kind == FaultKind::clock_skew && f.rate_ppm != 0 && f.rate_ppm < 1000) {
      return r.fail(fp + ".rate_ppm", "a clock rate is 0 (unchanged) or at least 1000");
    }
    s->faults.push_back(f);
  }
}

Json event_json(const sim::CaseEvent& e) {
  Json j;
  j["at_ms"] = e.at_ms;
  j["key"] = e.key;
  if (!e.category.empty()) j["category"] = e.category;  // optional: only process-manager cases
  j["seq"] = e.seq;
  j["type"] = e.type;
  j["duration_ms"] = e.behaviour.duration_ms;
  j["transient_failures"] = e.behaviour.transient_failures;
  j["poison"] = e.behaviour.poison;
  j["slow_ms"] = e.behaviour.slow_ms;
  return j;
}

void read_events(Reader& r, const Json& j, const std::string& p, sim::SimCase* c) {
  if (!j.is_array()) return r.fail(p, "expected an array, got " + j.dump());
  const std::set<std::string> keys(c->keys.begin(), c->keys.end());
  const bool pm = sim::is_process_manager(*c);
  std::map<std::pair<std::string, std::string>, std::int64_t> last_seq;  // (category, key)
  std::uint64_t last_at = 0;
  for (std::size_t i = 0; i < j.size() && !r.failed(); ++i) {
    const std::string ep = p + "[" + std::to_string(i) + "]";
    const Json& item = j[i];
    if (!r.object(item, ep)) return;
    r.only(item, ep,
           {"at_ms", "key", "category", "seq", "type", "duration_ms", "transient_failures",
            "poison", "slow_ms"});
    sim::CaseEvent e;
    r.u(item, ep, "at_ms", &e.at_ms);
    r.s(item, ep, "key", &e.key);
    if (pm && !item.contains("category")) {
      return r.fail(ep + ".category",
                    "missing (a process-manager case names each event's category)");
    }
    if (item.contains("category")) r.s(item, ep, "category", &e.category);
    r.i64(item, ep, "seq", &e.seq);
    r.s(item, ep, "type", &e.type);
    r.u(item, ep, "duration_ms", &e.behaviour.duration_ms);
    r.u(item, ep, "transient_failures", &e.behaviour.transient_failures);
    r.b(item, ep, "poison", &e.behaviour.poison);
    r.u(item, ep, "slow_ms", &e.behaviour.slow_ms);
    if (r.failed()) return;
    if (keys.count(e.key) == 0) return r.fail(ep + ".key", "\"" + e.key + "\" is not in keys");
    if (pm && std::find(c->pm_categories.begin(), c->pm_categories.end(), e.category) ==
                  c->pm_categories.end()) {
      return r.fail(ep + ".category", "\"" + e.category + "\" is not in pm_categories (" +
                                          join(c->pm_categories) + ")");
    }
    if (!pm && !e.category.empty() && e.category != c->category) {
      return r.fail(ep + ".category", "\"" + e.category + "\" is not the case's category \"" +
                                          c->category +
                                          "\" (only a process-manager case has several)");
    }
    const std::string category = sim::category_of(*c, e);
    std::int64_t& last = last_seq[{category, e.key}];
    if (e.seq != last + 1) {
      const std::string stream =
          pm ? "stream \"" + category + ":" + e.key + "\"" : "key \"" + e.key + "\"";
      return r.fail(ep + ".seq", "expected " + std::to_string(last + 1) + " for " + stream +
                                     ", got " + std::to_string(e.seq));
    }
    if (e.at_ms < last_at) return r.fail(ep + ".at_ms", "events must be sorted by at_ms");
    if (e.behaviour.transient_failures > c->engine.retry_count_max) {
      return r.fail(ep + ".transient_failures",
                    "above engine.retry_count_max (it would halt the key)");
    }
    if (e.type.empty()) return r.fail(ep + ".type", "empty");
    last = e.seq;
    last_at = e.at_ms;
    c->events.push_back(std::move(e));
  }
}

// The optional `pm_categories`: distinct valid category names; the case's `category` is then "".
void read_pm_categories(Reader& r, const Json& j, sim::SimCase* c) {
  const std::string p = "pm_categories";
  if (!j.is_array()) return r.fail(p, "expected an array of strings, got " + j.dump());
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string ip = p + "[" + std::to_string(i) + "]";
    if (!j[i].is_string()) return r.fail(ip, "expected a string, got " + j[i].dump());
    const std::string name = j[i].get<std::string>();
    if (Status valid = validate_category_name(name); !valid.ok()) {
      return r.fail(ip, valid.error().message);
    }
    if (std::find(c->pm_categories.begin(), c->pm_categories.end(), name) !=
        c->pm_categories.end()) {
      return r.fail(ip, "duplicate category \"" + name + "\"");
    }
    c->pm_categories.push_back(name);
  }
  if (!c->pm_categories.empty() && !c->category.empty()) {
    r.fail("category",
           "must be \"\" in a process-manager case (pm_categories names its "
           "categories), got \"" +
               c->category + "\"");
  }
}

// "line L, column C" of byte offset `byte` (1-based, as nlohmann counts) in `text`.
std::string line_col(std::string_view text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t col = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

}  // namespace

const std::vector<std::string>& known_variants() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (Variant v : all_variants()) out.emplace_back(variant_name(v));
    return out;
  }();
  return names;
}

const std::vector<std::string>& known_case_scenarios() {
  static const std::vector<std::string> names{
      "default",     "per_key_order",  "no_concurrent_entry", "cross_key_parallelism",
      "poison_halt", "crash_failover", "stall_failover"};
  return names;
}

std::string case_to_json(const sim::SimCase& c) {
  Json j;
  j["format"] = kCaseFormat;
  j["seed"] = c.seed;
  j["variant"] = c.variant;
  j["scenario"] = c.scenario;
  j["category"] = c.category;
  j["group"] = c.group;
  if (!c.pm_categories.empty()) j["pm_categories"] = c.pm_categories;  // optional
  j["instance_count"] = c.instance_count;
  j["run_ms"] = c.run_ms;
  j["liveness_ms"] = c.liveness_ms;
  j["keys"] = c.keys;
  j["engine"] = engine_json(c.engine);
  j["link"] = link_json(c.link);
  j["swarm"] = swarm_json(c.swarm);
  j["schedule"] = schedule_json(c.schedule);
  Json events = Json::array();
  for (const auto& e : c.events) events.push_back(event_json(e));
  j["events"] = events;
  return j.dump(2) + "\n";
}

Result<sim::SimCase> case_from_json(std::string_view text, std::string_view file_name) {
  const std::string file(file_name);
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    const auto at = what.find("syntax error");
    if (at != std::string::npos) what = what.substr(at);
    return make_error(Errc::invalid, file + ":" + line_col(text, e.byte) + ": not JSON: " + what);
  }
  std::string error;
  Reader r(file, &error);
  sim::SimCase c;
  if (!j.is_object()) {
    return make_error(Errc::invalid, file + ": expected a JSON object, got " + j.type_name());
  }
  r.only(j, "",
         {"format", "seed", "variant", "scenario", "category", "group", "pm_categories",
          "instance_count", "run_ms", "liveness_ms", "keys", "engine", "link", "swarm", "schedule",
          "events"});
  std::string format;
  r.s(j, "", "format", &format);
  if (!r.failed() && format != kCaseFormat) {
    r.fail("format", "expected \"" + std::string(kCaseFormat) + "\", got \"" + format + "\"");
  }
  r.u(j, "", "seed", &c.seed);
  r.s(j, "", "variant", &c.variant);
  const auto& variants = known_variants();
  if (!r.failed() && std::find(variants.begin(), variants.end(), c.variant) == variants.end()) {
    r.fail("variant", "unknown variant \"" + c.variant + "\" (known: " + join(variants) + ")");
  }
  r.s(j, "", "scenario", &c.scenario);
  const auto& scenarios = known_case_scenarios();
  if (!r.failed() && std::find(scenarios.begin(), scenarios.end(), c.scenario) == scenarios.end()) {
    r.fail("scenario", "unknown scenario \"" + c.scenario + "\" (known: " + join(scenarios) + ")");
  }
  r.s(j, "", "category", &c.category);
  r.s(j, "", "group", &c.group);
  if (j.contains("pm_categories") && !r.failed()) read_pm_categories(r, j["pm_categories"], &c);
  r.u(j, "", "instance_count", &c.instance_count);
  if (!r.failed() && (c.instance_count == 0 || c.instance_count > 64)) {
    r.fail("instance_count", "expected 1..64, got " + std::to_string(c.instance_count));
  }
  r.u(j, "", "run_ms", &c.run_ms);
  r.u(j, "", "liveness_ms", &c.liveness_ms);
  if (const Json* keys = r.member(j, "", "keys"); keys != nullptr && !r.failed()) {
    if (!keys->is_array()) r.fail("keys", "expected an array of strings, got " + keys->dump());
    for (std::size_t i = 0; !r.failed() && keys->is_array() && i < keys->size(); ++i) {
      if (!(*keys)[i].is_string()) {
        r.fail("keys[" + std::to_string(i) + "]", "expected a string, got " + (*keys)[i].dump());
      } else {
        c.keys.push_back((*keys)[i].get<std::string>());
      }
    }
  }
  if (const Json* e = r.member(j, "", "engine"); e != nullptr && !r.failed())
    read_engine(r, *e, "engine", &c.engine);
  if (const Json* l = r.member(j, "", "link"); l != nullptr && !r.failed())
    read_link(r, *l, "link", &c.link);
  if (const Json* s = r.member(j, "", "swarm"); s != nullptr && !r.failed())
    read_swarm(r, *s, "swarm", &c.swarm);
  if (const Json* s = r.member(j, "", "schedule"); s != nullptr && !r.failed()) {
    read_schedule(r, *s, "schedule", c.instance_count, &c.schedule);
  }
  if (const Json* e = r.member(j, "", "events"); e != nullptr && !r.failed())
    read_events(r, *e, "events", &c);
  if (r.failed()) return make_error(Errc::invalid, error);
  return c;
}

Result<sim::SimCase> load_case(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::not_found, path + ": cannot open the case file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return case_from_json(buffer.str(), path);
}

Status save_case(const sim::SimCase& c, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(Errc::invalid, path + ": cannot write the case file");
  out << case_to_json(c);
  out.flush();
  if (!out) return make_error(Errc::invalid, path + ": write failed");
  return Status::Ok();
}

}  // namespace seqby::scenarios
