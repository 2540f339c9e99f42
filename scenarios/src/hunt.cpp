// hunt: the seed search, the report of what was found (text and JSON), saving, and `seqby hunt`.
#include "seqby/scenarios/hunt.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "seqby/core/check.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/junit.h"
#include "seqby/scenarios/sim_commands.h"
#include "seqby/scenarios/timeline.h"
#include "seqby/testing/variant.h"

namespace seqby::scenarios {
namespace {

using properties::Property;
using sim::FaultKind;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

std::uint64_t ms_since(Clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

constexpr FaultKind kLinkKinds[] = {FaultKind::request_lost, FaultKind::reply_lost,
                                    FaultKind::latency, FaultKind::connection_reset};

const properties::Finding* first_violation(const properties::CheckReport& report,
                                           Property property) {
  for (const auto& f : report.violations) {
    if (f.property == property) return &f;
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string stem_of(const HuntResult& r) {
  return "hunt-" + r.variant + "-seed-" + std::to_string(r.witness_seed);
}

// The faults a case carries, one line each: scheduled, per event, link kinds.
std::string render_case_faults(const sim::SimCase& c) {
  std::string out;
  for (const auto& f : c.schedule.faults) out += "  scheduled: " + sim::describe(f) + "\n";
  for (const auto& e : c.events) {
    const sim::EventBehaviour& b = e.behaviour;
    if (!has_handler_fault(b)) continue;
    out += "  handler: " + e.key + " seq " + std::to_string(e.seq);
    if (b.poison) out += " poison";
    if (b.transient_failures > 0)
      out += " transient_failures=" + std::to_string(b.transient_failures);
    if (b.slow_ms > 0) out += " slow_ms=" + std::to_string(b.slow_ms);
    out += "\n";
  }
  for (FaultKind kind : kLinkKinds) {
    if (c.swarm.rate_ppm(kind) == 0) continue;
    out += "  link: " + std::string(sim::fault_kind_name(kind)) +
           " rate_ppm=" + std::to_string(c.swarm.rate_ppm(kind)) + " per command\n";
  }
  return out.empty() ? "  none\n" : out;
}

// The events a case publishes, per key: "client-02: 1@120ms 2@800ms 3@1900ms".
// One line per stream with events: "key:" (a process-manager case: "category:key:").
std::string render_case_events(const sim::SimCase& c) {
  const bool pm = sim::is_process_manager(c);
  std::string out;
  for (const auto& category : sim::categories_of(c)) {
    for (const auto& key : c.keys) {
      const std::vector<sim::CaseEvent> events = sim::events_of(c, key, category);
      if (pm && events.empty()) continue;
      out += "  " + (pm ? category + ":" : std::string()) + key + ":";
      for (const auto& e : events) {
        out += " " + std::to_string(e.seq) + "@" + std::to_string(e.at_ms) + "ms";
      }
      out += "\n";
    }
  }
  return out;
}

Json size_json(const CaseSize& s) {
  Json j;
  j["events"] = s.events;
  j["faults"] = s.faults();
  j["scheduled_faults"] = s.scheduled_faults;
  j["handler_faults"] = s.handler_faults;
  j["link_kinds"] = s.link_kinds;
  j["instances"] = s.instances;
  j["keys"] = s.keys;
  return j;
}

}  // namespace

sim::CaseTemplate hunt_template() {
  sim::CaseTemplate t;
  t.scenario = "default";
  t.instance_count = 3;
  t.key_count = 5;
  t.event_count = 150;
  t.publish_span_ms = 8'000;
  t.duration_ms_min = 1;
  t.duration_ms_max = 200;
  t.run_ms = 12'000;
  t.liveness_ms = 30'000;
  t.faults = true;
  t.bounds = sim::CaseTemplate::default_bounds();
  t.bounds.schedule_rate_ppm_max = 150'000;  // a 12 s run still meets crashes and stalls
  t.bounds.handler_rate_ppm_max = 40'000;
  t.poison_rate_ppm_max = 20'000;  // poison heads are what dlq_continue mishandles
  t.engine = sim::CaseTemplate::default_engine();
  t.engine.lease_ttl_ms = 1'000;
  t.engine.heartbeat_interval_ms = 300;
  t.engine.discovery_interval_ms = 500;
  return t;
}

bool has_handler_fault(const sim::EventBehaviour& b) {
  return b.poison || b.transient_failures > 0 || b.slow_ms > 0;
}

CaseSize case_size(const sim::SimCase& c) {
  CaseSize s;
  s.events = c.events.size();
  s.scheduled_faults = c.schedule.faults.size();
  for (const auto& e : c.events) {
    const sim::EventBehaviour& b = e.behaviour;
    if (has_handler_fault(b)) ++s.handler_faults;
  }
  for (FaultKind kind : kLinkKinds) s.link_kinds += c.swarm.rate_ppm(kind) > 0 ? 1 : 0;
  s.instances = c.instance_count;
  s.keys = c.keys.size();
  return s;
}

std::string describe_size(const CaseSize& s) {
  return "events=" + std::to_string(s.events) + " faults=" + std::to_string(s.faults()) +
         " (scheduled=" + std::to_string(s.scheduled_faults) +
         " handler=" + std::to_string(s.handler_faults) +
         " link_kinds=" + std::to_string(s.link_kinds) +
         ") instances=" + std::to_string(s.instances) + " keys=" + std::to_string(s.keys);
}

namespace {

struct Caught {
  std::uint64_t seed = 0;
  Property property = Property::order;
  sim::SimCase c;
};

// The first seed of [first, last] whose case violates `property` (any property when unset);
// counts the seeds it ran in *tried.
std::optional<Caught> search(const HuntOptions& options, std::uint64_t first, std::uint64_t last,
                             std::optional<Property> property, std::uint64_t* tried,
                             bool report_progress) {
  const std::optional<testing::Variant> variant = testing::parse_variant(options.variant);
  SEQBY_CHECK(variant.has_value());  // hunt_main rejects unknown names
  RunOptions quick;
  quick.compute_history_sha256 = false;
  for (std::uint64_t seed = first;; ++seed) {
    sim::SimCase c = sim::generate_case(seed, options.tmpl);
    c.variant = *variant;
    const RunResult r = run_case(c, quick);
    ++*tried;
    if (report_progress && options.progress) options.progress(seed, r.passed);
    const bool caught = property.has_value() ? r.report.status(*property).violated()
                                             : !r.passed && !r.report.violations.empty();
    if (caught) {
      return Caught{seed, property.value_or(r.report.violations.front().property), std::move(c)};
    }
    if (seed == last) return std::nullopt;
  }
}

bool over_target(const HuntOptions& options, const CaseSize& size) {
  return size.events > options.target_events_max || size.faults() > options.target_faults_max;
}

// Over-target witnesses last, then fewer faults + events, then fewer instances.
bool smaller(const HuntOptions& options, const CaseSize& a, const CaseSize& b) {
  return std::make_tuple(over_target(options, a), a.faults() + a.events, a.instances) <
         std::make_tuple(over_target(options, b), b.faults() + b.events, b.instances);
}

}  // namespace

HuntResult hunt(const HuntOptions& options) {
  SEQBY_CHECK(options.seed_first <= options.seed_last);
  const auto start = Clock::now();
  HuntResult out;
  out.variant = options.variant;
  std::optional<Caught> caught = search(options, options.seed_first, options.seed_last,
                                        options.property, &out.seeds_tried, true);
  out.search_wall_ms = ms_since(start);
  if (!caught.has_value()) {
    out.wall_ms = out.search_wall_ms;
    return out;
  }
  out.found = true;
  out.seed = caught->seed;
  out.seed_property = caught->property;
  const auto shrink_start = Clock::now();
  const std::uint64_t extra_last =
      std::min(options.seed_last, caught->seed + options.extra_seeds_max);
  std::uint64_t extra_tried = 0;
  while (caught.has_value()) {
    ShrinkResult shrunk = shrink_case(caught->c, caught->property, options.shrink);
    ++out.witnesses_shrunk;
    out.shrink_runs += shrunk.runs;
    const CaseSize size = case_size(shrunk.shrunk);
    if (out.witnesses_shrunk == 1 || smaller(options, size, out.shrunk_size)) {
      out.witness_seed = caught->seed;
      out.property = caught->property;
      out.original = std::move(caught->c);
      out.shrunk = std::move(shrunk.shrunk);
      out.shrunk_run = std::move(shrunk.run);
      out.shrunk_size = size;
      out.shrink_fixpoint = shrunk.fixpoint;
    }
    // A witness over the targets: shrink further failing seeds, of the property asked for, or
    // of any (a liveness failure that needs the whole case can come first, with a small witness
    // of another property a few seeds on).
    const std::uint64_t next = caught->seed + 1;
    caught.reset();
    if (over_target(options, out.shrunk_size) && out.witnesses_shrunk < options.witnesses_max &&
        next <= extra_last) {
      caught = search(options, next, extra_last, options.property, &extra_tried, false);
    }
  }
  out.original_size = case_size(out.original);
  if (const properties::Finding* f = first_violation(out.shrunk_run.report, out.property)) {
    out.explanation = f->explanation;
  }
  sim::SimCase correct = out.shrunk;
  correct.variant = testing::Variant::correct;
  RunOptions quick;
  quick.compute_history_sha256 = false;
  out.correct_passes_shrunk = !run_case(correct, quick).report.status(out.property).violated();
  out.shrink_wall_ms = ms_since(shrink_start);
  out.wall_ms = ms_since(start);
  return out;
}

std::string render_witness_trace(const RunResult& run, Property property, bool process_manager) {
  const properties::Finding* finding = first_violation(run.report, property);
  if (finding == nullptr) return "";
  const bool pm = process_manager;
  std::string out;
  for (std::uint64_t index : finding->witnesses) {
    if (index >= run.history.size()) continue;
    const HistoryRecord& r = run.history[index];
    out += "  #" + std::to_string(r.index) + " t=" + std::to_string(r.time_ms) + "ms " +
           (r.node.empty() ? std::string("world") : r.node) + " " + history_op_name(r.op);
    // A process manager's records name the stream (category:key) where they act on one.
    const bool on_stream = pm && !r.category.empty() && !r.category.starts_with("__pm__:");
    if (!r.key.empty()) out += " " + (on_stream ? r.category + ":" : std::string()) + r.key;
    if (r.generation > 0) out += " gen=" + std::to_string(r.generation);
    if (r.seq >= 0) out += " seq=" + std::to_string(r.seq);
    if (!r.event_id.empty()) out += " (" + r.event_id + ")";
    if (!r.detail.empty()) out += " " + r.detail;
    out += "\n";
  }
  return out;
}

Result<SavedHunt> save_hunt(const HuntResult& result, const std::string& dir) {
  SEQBY_CHECK(result.found);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(Errc::invalid, dir + ": cannot create the directory: " + ec.message());
  SavedHunt saved;
  const std::string stem = (std::filesystem::path(dir) / stem_of(result)).string();
  saved.case_path = stem + ".json";
  saved.history_path = stem + ".jsonl";
  saved.original_path = stem + "-original.json";
  if (Status s = save_case(result.shrunk, saved.case_path); !s.ok()) return s.error();
  if (Status s = save_case(result.original, saved.original_path); !s.ok()) return s.error();
  std::ofstream history(saved.history_path, std::ios::binary | std::ios::trunc);
  properties::write_history(history, result.shrunk_run.history);
  history.flush();
  if (!history) return make_error(Errc::invalid, saved.history_path + ": cannot write the history");
  saved.timeline_path = stem + ".html";
  const std::string title = stem_of(result);
  Status page = write_timeline(result.shrunk_run.history, result.shrunk_run.report,
                               saved.timeline_path, title);
  if (!page.ok()) return page.error();
  return saved;
}

std::string render_hunt_text(const HuntResult& r, const SavedHunt* saved) {
  std::string out = "hunt: variant " + r.variant + ", " + std::to_string(r.seeds_tried) +
                    " seeds tried, " + std::to_string(r.wall_ms) + " ms\n";
  if (!r.found) return out + "no counterexample found\n";
  out += "found: seed " + std::to_string(r.seed) + " violates " +
         properties::property_name(r.seed_property) + " (search " +
         std::to_string(r.search_wall_ms) + " ms)\n";
  if (r.witnesses_shrunk > 1) {
    out += "witness: seed " + std::to_string(r.witness_seed) +
           (r.property != r.seed_property
                ? std::string(" (violates ") + properties::property_name(r.property) + ")"
                : std::string()) +
           ", the smallest of " + std::to_string(r.witnesses_shrunk) + " failing seeds shrunk\n";
  }
  out += "original: " + describe_size(r.original_size) + "\n";
  out += "shrunk:   " + describe_size(r.shrunk_size) + " (" + std::to_string(r.shrink_runs) +
         " runs, " + (r.shrink_fixpoint ? "fixpoint" : "run budget spent") + ", " +
         std::to_string(r.shrink_wall_ms) + " ms)\n";
  if (r.shrunk.seed != r.witness_seed) {
    out += "shrunk case seed: " + std::to_string(r.shrunk.seed) +
           " (the shrink moved to other link draws to get unstuck)\n";
  }
  out += "correct on the shrunk case: " + std::string(properties::property_name(r.property)) +
         (r.correct_passes_shrunk ? " holds" : " is violated too") + "\n";
  out += "violation: " + r.explanation + "\n";
  out += "witness records:\n" +
         render_witness_trace(r.shrunk_run, r.property, sim::is_process_manager(r.shrunk));
  out += "faults of the shrunk case:\n" + render_case_faults(r.shrunk);
  out += "events of the shrunk case (seq@publish time):\n" + render_case_events(r.shrunk);
  if (saved != nullptr) {
    out += "saved: " + saved->case_path + " (history " + saved->history_path + ", original case " +
           saved->original_path + ")\n";
    out += "replay: seqby replay " + saved->case_path + "\n";
    out += "timeline: " + saved->timeline_path + "\n";
  }
  return out;
}

std::string render_hunt_json(const HuntResult& r, const SavedHunt* saved) {
  Json j;
  j["variant"] = r.variant;
  j["found"] = r.found;
  j["property"] = r.found ? Json(properties::property_name(r.property)) : Json(nullptr);
  j["seed"] = r.found ? Json(r.seed) : Json(nullptr);
  j["seeds_tried"] = r.seeds_tried;
  if (r.found) {
    j["seed_property"] = properties::property_name(r.seed_property);
    j["witness_seed"] = r.witness_seed;
    j["witnesses_shrunk"] = r.witnesses_shrunk;
    j["explanation"] = r.explanation;
    j["original"] = size_json(r.original_size);
    j["shrunk"] = size_json(r.shrunk_size);
    j["shrink_runs"] = r.shrink_runs;
    j["shrink_fixpoint"] = r.shrink_fixpoint;
    j["correct_passes_shrunk"] = r.correct_passes_shrunk;
    j["case_path"] = saved != nullptr ? Json(saved->case_path) : Json(nullptr);
    j["history_path"] = saved != nullptr ? Json(saved->history_path) : Json(nullptr);
    j["replay"] = saved != nullptr ? Json("seqby replay " + saved->case_path) : Json(nullptr);
    j["timeline_path"] = saved != nullptr ? Json(saved->timeline_path) : Json(nullptr);
  }
  j["search_wall_ms"] = r.search_wall_ms;
  j["shrink_wall_ms"] = r.shrink_wall_ms;
  j["wall_ms"] = r.wall_ms;
  return j.dump() + "\n";
}

int hunt_main(const HuntArgs& args, std::ostream& out, std::ostream& err) {
  if (!testing::parse_variant(args.variant).has_value()) {
    err << "seqby hunt: --variant '" << args.variant
        << "': unknown variant (known: " << join(known_variants()) << ")\n";
    return kExitBadInput;
  }
  HuntOptions options;
  options.variant = args.variant;
  if (args.process_manager) options.tmpl = sim::process_manager_template(options.tmpl);
  if (!args.property.empty()) {
    Property property;
    if (!properties::parse_property(args.property, &property)) {
      std::vector<std::string> names;
      for (std::size_t i = 0; i < properties::kPropertyCount; ++i) {
        names.emplace_back(properties::property_name(static_cast<Property>(i)));
      }
      err << "seqby hunt: --property '" << args.property
          << "': unknown property (known: " << join(names) << ")\n";
      return kExitBadInput;
    }
    options.property = property;
  }
  if (!args.seeds.empty()) {
    Result<SeedRange> range = parse_seed_range(args.seeds);
    if (!range.ok()) {
      err << "seqby hunt: " << range.error().message << "\n";
      return kExitBadInput;
    }
    options.seed_first = range.value().first;
    options.seed_last = range.value().last;
  }
  if (!args.junit_path.empty()) {
    const Status writable = check_junit_path(args.junit_path);
    if (!writable.ok()) {
      err << "seqby hunt: " << writable.error().message << "\n";
      return kExitBadInput;
    }
  }
  if (args.progress) {
    const std::uint64_t total = options.seed_last - options.seed_first + 1;
    options.progress = [&err, total, first = options.seed_first](std::uint64_t seed, bool passed) {
      err << "\rseed " << seed << " (" << (seed - first + 1) << "/" << total << ")"
          << (passed ? "" : " failed; shrinking") << std::flush;
      if (!passed || seed - first + 1 == total) err << "\n";
    };
  }
  // Every searched seed with its wall time, for --junit (the search reports each in order).
  JunitSuite junit;
  junit.name = "seqby hunt --variant " + args.variant;
  junit.classname = "seqby.hunt." + args.variant;
  auto searched_from = std::chrono::steady_clock::now();
  if (!args.junit_path.empty()) {
    options.progress = [&, report = options.progress](std::uint64_t seed, bool passed) {
      const auto now = std::chrono::steady_clock::now();
      junit.cases.push_back(JunitCase{"seed " + std::to_string(seed),
                                      std::chrono::duration<double>(now - searched_from).count(),
                                      !passed, "", ""});
      searched_from = now;
      if (report) report(seed, passed);
    };
  }
  const HuntResult result = hunt(options);
  // Writes --junit when asked; false (said on `err`) when the file could not be written.
  const auto write_report = [&](const SavedHunt* saved) {
    if (args.junit_path.empty()) return true;
    junit.seconds = static_cast<double>(result.wall_ms) / 1e3;
    for (JunitCase& c : junit.cases) {
      if (!c.failed) continue;
      c.message = result.variant + " violates " + properties::property_name(result.property) +
                  ": " + result.explanation;
      c.details = "violation: " + result.explanation + "\n";
      if (saved != nullptr) c.details += "replay: seqby replay " + saved->case_path + "\n";
    }
    const Status written = write_junit(args.junit_path, junit);
    if (!written.ok()) err << "seqby hunt: " << written.error().message << "\n";
    return written.ok();
  };
  if (!result.found) {
    out << (args.json ? render_hunt_json(result, nullptr) : render_hunt_text(result, nullptr));
    return write_report(nullptr) ? kExitHeld : kExitBadInput;
  }
  const std::string dir = args.save_dir.empty() ? kDefaultFailuresDir : args.save_dir;
  Result<SavedHunt> saved = save_hunt(result, dir);
  if (!saved.ok()) {
    err << "seqby hunt: --save: " << saved.error().message << "\n";
    out << (args.json ? render_hunt_json(result, nullptr) : render_hunt_text(result, nullptr));
    (void)write_report(nullptr);
    return kExitPropertyFailed;
  }
  out << (args.json ? render_hunt_json(result, &saved.value())
                    : render_hunt_text(result, &saved.value()));
  if (args.json) {
    err << "seqby hunt: " << result.variant << " violates "
        << properties::property_name(result.property) << " at seed " << result.witness_seed
        << "; replay: seqby replay " << saved.value().case_path << "\n";
    err << "timeline: " << saved.value().timeline_path << "\n";
  }
  return write_report(&saved.value()) ? kExitPropertyFailed : kExitBadInput;
}

}  // namespace seqby::scenarios
