#include "seqby/scenarios/case_io.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "json_fields.h"
#include "seqby/core/check.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/keys.h"
#include "seqby/testing/variant.h"

namespace seqby::scenarios {
namespace {

using json_fields::at;
using json_fields::Field;
using json_fields::field;
using json_fields::field_of;
using json_fields::Fields;
using json_fields::Json;
using json_fields::Need;
using json_fields::object_field;
using json_fields::read_fields;
using json_fields::Reader;
using json_fields::write_fields;
using sim::FaultKind;

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// --- engine: the case-file limits of kEngineLimitFields (seqby/core/engine_options.h) ------

const Fields<sim::CaseEngineOptions>& engine_fields() {
  static const Fields<sim::CaseEngineOptions> fields = [] {
    Fields<sim::CaseEngineOptions> out;
    for (const EngineLimitField& limit : kEngineLimitFields) {
      if (limit.case_file == CaseFileField::absent) continue;
      Field<sim::CaseEngineOptions> f;
      f.name = std::string(limit.name);
      f.write = [&limit](const sim::CaseEngineOptions& e, Json& object) {
        object[std::string(limit.name)] = limit.get(e);
      };
      f.read = [&limit](Reader& r, const Json& object, const std::string& path,
                        sim::CaseEngineOptions& e) {
        const std::string name(limit.name);
        if (limit.case_file == CaseFileField::optional && !object.contains(name)) return;
        const Json* j = r.member(object, path, name);
        if (j == nullptr) return;
        std::uint64_t value = 0;
        r.value(*j, at(path, name), &value, limit.value_max());
        if (!r.failed()) limit.set(e, value);
      };
      out.push_back(std::move(f));
    }
    return out;
  }();
  return fields;
}

Json engine_json(const sim::CaseEngineOptions& e) { return write_fields(engine_fields(), e); }

void read_engine(Reader& r, const Json& j, const std::string& p, sim::CaseEngineOptions* e) {
  if (!r.object(j, p)) return;
  read_fields(r, j, p, engine_fields(), *e);
  if (!r.failed() && e->heartbeat_interval_ms * 2 > e->lease_ttl_ms) {
    r.fail(p + ".heartbeat_interval_ms", "must be at most lease_ttl_ms / 2");
  }
}

// --- link ------------------------------------------------------------------------------------

const Fields<sim::SimLinkOptions>& link_fields() {
  using L = sim::SimLinkOptions;
  static const Fields<L> fields{
      field("request_latency_min_ms", &L::request_latency_min_ms),
      field("request_latency_max_ms", &L::request_latency_max_ms),
      field("reply_latency_min_ms", &L::reply_latency_min_ms),
      field("reply_latency_max_ms", &L::reply_latency_max_ms),
      field("timeout_ms", &L::timeout_ms),
  };
  return fields;
}

Json link_json(const sim::SimLinkOptions& l) { return write_fields(link_fields(), l); }

void read_link(Reader& r, const Json& j, const std::string& p, sim::SimLinkOptions* l) {
  if (!r.object(j, p)) return;
  read_fields(r, j, p, link_fields(), *l);
  if (r.failed()) return;
  if (l->request_latency_min_ms > l->request_latency_max_ms) {
    r.fail(p + ".request_latency_min_ms", "above request_latency_max_ms");
  } else if (l->reply_latency_min_ms > l->reply_latency_max_ms) {
    r.fail(p + ".reply_latency_min_ms", "above reply_latency_max_ms");
  } else if (l->timeout_ms == 0) {
    r.fail(p + ".timeout_ms", "must be > 0");
  }
}

// --- swarm -----------------------------------------------------------------------------------

const Fields<sim::FaultSetting>& fault_setting_fields() {
  using F = sim::FaultSetting;
  static const Fields<F> fields{
      field("enabled", &F::enabled),
      field<F>("rate_ppm", &F::rate_ppm, Need::required,
               [](const F& f) { return f.rate_ppm > 1'000'000 ? "above 1000000" : ""; }),
  };
  return fields;
}

const Fields<sim::SwarmBounds>& bounds_fields() {
  using B = sim::SwarmBounds;
  static const Fields<B> fields{
      field("enable_ppm", &B::enable_ppm),
      field("link_rate_ppm_max", &B::link_rate_ppm_max),
      field("handler_rate_ppm_max", &B::handler_rate_ppm_max),
      field("schedule_rate_ppm_max", &B::schedule_rate_ppm_max),
      field("latency_ms_max", &B::latency_ms_max),
      field("stall_ms_min", &B::stall_ms_min),
      field("stall_ms_max", &B::stall_ms_max),
      field("crash_downtime_ms_max", &B::crash_downtime_ms_max),
      field("clock_jump_ms_max", &B::clock_jump_ms_max),
      field("clock_rate_spread_ppm", &B::clock_rate_spread_ppm),
      field("redis_clock_jump_ms_max", &B::redis_clock_jump_ms_max),
      field("slow_handler_ms_max", &B::slow_handler_ms_max),
      field("transient_failures_max", &B::transient_failures_max),
      field("server_down_ms_min", &B::server_down_ms_min, Need::optional),
      field("server_down_ms_max", &B::server_down_ms_max, Need::optional),
      field("client_pause_ms_min", &B::client_pause_ms_min, Need::optional),
      field("client_pause_ms_max", &B::client_pause_ms_max, Need::optional),
  };
  return fields;
}

Json bounds_json(const sim::SwarmBounds& b) { return write_fields(bounds_fields(), b); }

void read_bounds(Reader& r, const Json& j, const std::string& p, sim::SwarmBounds* b) {
  if (r.object(j, p)) read_fields(r, j, p, bounds_fields(), *b);
}

// "faults": one member per fault kind, in name order, each a FaultSetting.
Json faults_json(const sim::SwarmConfig& s) {
  Json faults = Json::object();
  for (FaultKind kind : sim::fault_kinds_by_name()) {
    faults[sim::fault_kind_name(kind)] = write_fields(fault_setting_fields(), s.setting(kind));
  }
  return faults;
}

void read_faults(Reader& r, const Json& faults, const std::string& p, sim::SwarmConfig* s) {
  if (!r.object(faults, p)) return;
  for (auto it = faults.begin(); it != faults.end(); ++it) {
    const std::string fp = p + "." + it.key();
    FaultKind kind;
    if (!sim::parse_fault_kind(it.key(), &kind)) {
      std::vector<std::string> names;
      for (FaultKind k : sim::fault_kinds_by_name()) names.emplace_back(sim::fault_kind_name(k));
      r.fail(fp, "unknown fault kind (known: " + join(names) + ")");
      continue;
    }
    if (!r.object(it.value(), fp)) continue;
    sim::FaultSetting f;
    read_fields(r, it.value(), fp, fault_setting_fields(), f);
    if (!r.failed()) s->set(kind, f.enabled, f.rate_ppm);
  }
}

const Fields<sim::SwarmConfig>& swarm_fields() {
  using S = sim::SwarmConfig;
  static const Fields<S> fields = [] {
    Field<S> faults;
    faults.name = "faults";
    faults.write = [](const S& s, Json& object) { object["faults"] = faults_json(s); };
    faults.read = [](Reader& r, const Json& object, const std::string& path, S& s) {
      const Json* j = r.member(object, path, "faults");
      if (j != nullptr) read_faults(r, *j, at(path, "faults"), &s);
    };
    return Fields<S>{faults, object_field("bounds", &S::bounds, bounds_json, read_bounds)};
  }();
  return fields;
}

Json swarm_json(const sim::SwarmConfig& s) { return write_fields(swarm_fields(), s); }

void read_swarm(Reader& r, const Json& j, const std::string& p, sim::SwarmConfig* s) {
  if (r.object(j, p)) read_fields(r, j, p, swarm_fields(), *s);
}

// --- schedule --------------------------------------------------------------------------------

const Fields<sim::TimedFault>& timed_fault_fields() {
  using T = sim::TimedFault;
  static const Fields<T> fields = [] {
    Field<T> kind;
    kind.name = "kind";
    kind.write = [](const T& f, Json& object) { object["kind"] = sim::fault_kind_name(f.kind); };
    kind.read = [](Reader& r, const Json& object, const std::string& path, T& f) {
      const Json* j = r.member(object, path, "kind");
      if (j == nullptr) return;
      std::string name;
      r.value(*j, at(path, "kind"), &name);
      if (!r.failed() && (!sim::parse_fault_kind(name, &f.kind) ||
                          sim::fault_driver(f.kind) != sim::FaultDriver::schedule)) {
        std::vector<std::string> known;
        for (FaultKind k : sim::fault_kinds_by_name()) {
          if (sim::fault_driver(k) == sim::FaultDriver::schedule) {
            known.emplace_back(sim::fault_kind_name(k));
          }
        }
        r.fail(at(path, "kind"),
               "not a scheduled fault kind: \"" + name + "\" (known: " + join(known) + ")");
      }
    };
    return Fields<T>{
        kind,
        field("at_ms", &T::at_ms),
        field("target", &T::target),
        field("duration_ms", &T::duration_ms),
        field("amount_ms", &T::amount_ms),
        field("rate_ppm", &T::rate_ppm),
    };
  }();
  return fields;
}

Json schedule_json(const sim::FaultSchedule& s) {
  Json out = Json::array();
  for (const sim::TimedFault& f : s.faults) out.push_back(write_fields(timed_fault_fields(), f));
  return out;
}

void read_schedule(Reader& r, const Json& j, const std::string& p, std::uint32_t instances,
                   sim::FaultSchedule* s) {
  if (!j.is_array()) return r.fail(p, "expected an array, got " + j.dump());
  for (std::size_t i = 0; i < j.size() && !r.failed(); ++i) {
    const std::string fp = p + "[" + std::to_string(i) + "]";
    const Json& item = j[i];
    if (!r.object(item, fp)) return;
    sim::TimedFault f;
    read_fields(r, item, fp, timed_fault_fields(), f);
    if (r.failed()) return;
    if (sim::fault_targets_instance(f.kind) && f.target >= instances) {
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

// --- events ----------------------------------------------------------------------------------

// An event's fields; `process_manager`: in a process-manager case, where every event names its
// category (elsewhere it is optional, and written only when set).
const Fields<sim::CaseEvent>& event_fields(bool process_manager) {
  using E = sim::CaseEvent;
  auto make = [](bool pm) {
    Field<E> category = field("category", &E::category, Need::omitted_when_empty);
    if (pm) {
      category.read = [](Reader& r, const Json& object, const std::string& path, E& e) {
        const Json* j = r.member(object, path, "category",
                                 "missing (a process-manager case names each event's category)");
        if (j != nullptr) r.value(*j, at(path, "category"), &e.category);
      };
    }
    return Fields<E>{
        field("at_ms", &E::at_ms),
        field("key", &E::key),
        category,
        field("seq", &E::seq),
        field("type", &E::type),
        field_of<E>(
            "duration_ms", [](auto& e) -> auto& { return e.behaviour.duration_ms; }),
        field_of<E>(
            "transient_failures", [](auto& e) -> auto& { return e.behaviour.transient_failures; }),
        field_of<E>(
            "poison", [](auto& e) -> auto& { return e.behaviour.poison; }),
        field_of<E>(
            "slow_ms", [](auto& e) -> auto& { return e.behaviour.slow_ms; }),
        field_of<E>(
            "beside_slow_ms", [](auto& e) -> auto& { return e.behaviour.beside_slow_ms; },
            Need::omitted_when_empty),
    };
  };
  static const Fields<E> plain = make(false);
  static const Fields<E> pm = make(true);
  return process_manager ? pm : plain;
}

Json events_json(const std::vector<sim::CaseEvent>& events) {
  Json out = Json::array();
  for (const auto& e : events) out.push_back(write_fields(event_fields(false), e));
  return out;
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
    sim::CaseEvent e;
    read_fields(r, item, ep, event_fields(pm), e);
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

// --- the case --------------------------------------------------------------------------------

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

// A top-level field whose value needs more of the case than its own member to write or read.
Field<sim::SimCase> case_field(
    std::string name, std::function<Json(const sim::SimCase&)> write,
    std::function<void(Reader&, const Json& value, const std::string& path, sim::SimCase&)> read) {
  Field<sim::SimCase> f;
  f.name = name;
  f.write = [name, write](const sim::SimCase& c, Json& object) { object[name] = write(c); };
  f.read = [name, read](Reader& r, const Json& object, const std::string& path, sim::SimCase& c) {
    const Json* j = r.member(object, path, name);
    if (j != nullptr) read(r, *j, at(path, name), c);
  };
  return f;
}

std::string unknown_name(const std::string& what, const std::string& name,
                         const std::vector<std::string>& known) {
  return "unknown " + what + " \"" + name + "\" (known: " + join(known) + ")";
}

const Fields<sim::SimCase>& case_fields() {
  using C = sim::SimCase;
  static const Fields<C> fields = [] {
    Field<C> pm_categories = field("pm_categories", &C::pm_categories, Need::omitted_when_empty);
    pm_categories.read = [](Reader& r, const Json& object, const std::string&, C& c) {
      if (object.contains("pm_categories")) read_pm_categories(r, object["pm_categories"], &c);
    };
    return Fields<C>{
        case_field(
            "format", [](const C&) { return Json(kCaseFormat); },
            [](Reader& r, const Json& j, const std::string& path, C&) {
              std::string format;
              r.value(j, path, &format);
              if (!r.failed() && format != kCaseFormat) {
                r.fail(path,
                       "expected \"" + std::string(kCaseFormat) + "\", got \"" + format + "\"");
              }
            }),
        field("seed", &C::seed),
        case_field(
            "variant",
            [](const C& c) { return Json(std::string(testing::variant_name(c.variant))); },
            [](Reader& r, const Json& j, const std::string& path, C& c) {
              std::string name;
              r.value(j, path, &name);
              if (r.failed()) return;
              const std::optional<testing::Variant> variant = testing::parse_variant(name);
              if (!variant.has_value())
                return r.fail(path, unknown_name("variant", name, known_variants()));
              c.variant = *variant;
            }),
        field<C>("scenario", &C::scenario, Need::required,
                 [](const C& c) {
                   const auto& known = known_case_scenarios();
                   return std::find(known.begin(), known.end(), c.scenario) != known.end()
                              ? std::string()
                              : unknown_name("scenario", c.scenario, known);
                 }),
        field("category", &C::category),
        field("group", &C::group),
        pm_categories,
        field<C>("beside_group", &C::beside_group, Need::omitted_when_empty,
                 [](const C& c) {
                   return c.beside_group.empty() || !sim::is_process_manager(c)
                              ? std::string()
                              : std::string("a process-manager case has no beside group");
                 }),
        field<C>("commit_with_step", &C::commit_with_step, Need::optional),
        field<C>("instance_count", &C::instance_count, Need::required,
                 [](const C& c) {
                   return c.instance_count >= 1 && c.instance_count <= 64
                              ? std::string()
                              : "expected 1..64, got " + std::to_string(c.instance_count);
                 }),
        field<C>("previous_release_instances", &C::previous_release_instances, Need::optional,
                 [](const C& c) {
                   if (c.previous_release_instances > c.instance_count) {
                     return "expected at most instance_count (" + std::to_string(c.instance_count) +
                            "), got " + std::to_string(c.previous_release_instances);
                   }
                   return c.previous_release_instances == 0 ||
                                  c.variant == testing::Variant::correct
                              ? std::string()
                              : std::string("a rolling upgrade runs the correct variant only");
                 }),
        field("run_ms", &C::run_ms),
        field("liveness_ms", &C::liveness_ms),
        field("keys", &C::keys),
        object_field("engine", &C::engine, engine_json, read_engine),
        object_field("link", &C::link, link_json, read_link),
        object_field("swarm", &C::swarm, swarm_json, read_swarm),
        case_field(
            "schedule", [](const C& c) { return schedule_json(c.schedule); },
            [](Reader& r, const Json& j, const std::string& path, C& c) {
              read_schedule(r, j, path, c.instance_count, &c.schedule);
            }),
        case_field(
            "events", [](const C& c) { return events_json(c.events); },
            [](Reader& r, const Json& j, const std::string& path, C& c) {
              read_events(r, j, path, &c);
            }),
    };
  }();
  return fields;
}

// The "server" object of a case file into *server (a missing member keeps its default).
void read_server(Reader& r, const Json& j, CaseServer* server) {
  const std::string path = "server";
  if (!r.object(j, path)) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "key_layout" && it.key() != "cluster_shards") {
      return r.fail(at(path, it.key()), "unknown field");
    }
  }
  if (j.contains("key_layout")) {
    std::string name;
    r.value(j["key_layout"], at(path, "key_layout"), &name);
    if (r.failed()) return;
    const std::optional<KeyLayout> layout = parse_key_layout(name);
    if (!layout.has_value()) {
      return r.fail(at(path, "key_layout"), unknown_name("key layout", name, {"flat", "cluster"}));
    }
    server->key_layout = *layout;
  }
  if (j.contains("cluster_shards")) {
    r.value(j["cluster_shards"], at(path, "cluster_shards"), &server->cluster_shards);
    if (r.failed()) return;
  }
  if (std::string problem = server_problem(*server); !problem.empty()) r.fail(path, problem);
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
    for (testing::Variant v : testing::all_variants()) out.emplace_back(testing::variant_name(v));
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

std::string server_problem(const CaseServer& server) {
  if (server.cluster_shards > 0 && server.key_layout != KeyLayout::cluster) {
    return "a simulated cluster of " + std::to_string(server.cluster_shards) +
           " shards needs the cluster key layout (with flat names a partition and its index are "
           "in different slots)";
  }
  if (server.cluster_shards > CaseServer::kShardsMax) {
    return "at most " + std::to_string(CaseServer::kShardsMax) + " shards, got " +
           std::to_string(server.cluster_shards);
  }
  return "";
}

std::string case_to_json(const sim::SimCase& c, const CaseServer& server) {
  SEQBY_CHECK(server_problem(server).empty());
  const Json fields = write_fields(case_fields(), c);
  if (server == CaseServer{}) return fields.dump(2) + "\n";
  Json with_server = Json::object();
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    with_server[it.key()] = it.value();
    if (it.key() == "variant") {
      Json& j = with_server["server"];
      j["key_layout"] = key_layout_name(server.key_layout);
      if (server.cluster_shards > 0) j["cluster_shards"] = server.cluster_shards;
    }
  }
  return with_server.dump(2) + "\n";
}

Result<sim::SimCase> case_from_json(std::string_view text, std::string_view file_name,
                                    CaseServer* server) {
  const std::string file(file_name);
  Json j;
  try {
    j = Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    const auto at = what.find("syntax error");
    if (at != std::string::npos) what = what.substr(at);
    return make_error(Errc::invalid, file + ":" + line_col(text, e.byte) + ": not JSON: " + what);
  } catch (const nlohmann::json::exception& e) {
    // Not a syntax error: a number beyond a double's range (out_of_range 406), found by
    // fuzz/case_file.cpp; it escaped as an exception and ended `seqby replay`.
    std::string what = e.what();
    const auto at = what.find("] ");
    if (at != std::string::npos) what = what.substr(at + 2);
    return make_error(Errc::invalid, file + ": not JSON: " + what);
  }
  if (!j.is_object()) {
    return make_error(Errc::invalid, file + ": expected a JSON object, got " + j.type_name());
  }
  std::string error;
  Reader r(file, &error);
  CaseServer read_server_into;
  if (auto it = j.find("server"); it != j.end()) {
    read_server(r, *it, &read_server_into);
    if (r.failed()) return make_error(Errc::invalid, error);
    j.erase(it);
  }
  sim::SimCase c;
  read_fields(r, j, "", case_fields(), c);
  if (r.failed()) return make_error(Errc::invalid, error);
  if (server != nullptr) *server = read_server_into;
  return c;
}

Result<sim::SimCase> load_case(const std::string& path, CaseServer* server) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(Errc::not_found, path + ": cannot open the case file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return case_from_json(buffer.str(), path, server);
}

Status save_case(const sim::SimCase& c, const std::string& path, const CaseServer& server) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(Errc::invalid, path + ": cannot write the case file");
  out << case_to_json(c, server);
  out.flush();
  if (!out) return make_error(Errc::invalid, path + ": write failed");
  return Status::Ok();
}

}  // namespace seqby::scenarios
