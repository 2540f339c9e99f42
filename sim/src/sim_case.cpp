#include "seqby/sim/sim_case.h"

#include <algorithm>
#include <cstdio>

#include "seqby/core/check.h"
#include "seqby/sim/rng.h"

namespace seqby::sim {

EngineOptions engine_options_for(const SimCase& c, const std::string& owner_id) {
  EngineOptions o;
  o.owner_id = owner_id;
  o.category = is_process_manager(c) ? std::string() : c.category;
  o.group = c.group;
  o.pm_categories = c.pm_categories;
  // The limits a case file holds; the others stay at the engine's defaults.
  for (const EngineLimitField& field : kEngineLimitFields) {
    if (field.case_file != CaseFileField::absent) field.set(o, field.get(c.engine));
  }
  return o;
}

EngineOptions beside_engine_options_for(const SimCase& c, const std::string& owner_id) {
  SEQBY_CHECK(!c.beside_group.empty() && !is_process_manager(c));
  EngineOptions o = engine_options_for(c, owner_id);
  o.category.clear();
  o.group = c.beside_group;
  o.pm_categories = {c.category};
  o.reap_idle_ms = 0;  // a process manager never reaps (EngineOptions::pm_categories)
  return o;
}

std::vector<std::string> groups_of(const SimCase& c) {
  if (c.beside_group.empty()) return {c.group};
  return {c.group, c.beside_group};
}

const std::string& category_of(const SimCase& c, const CaseEvent& e) {
  return e.category.empty() ? c.category : e.category;
}

CaseTemplate process_manager_template(CaseTemplate base) {
  base.pm_categories = {"order", "payment"};
  return base;
}

std::vector<std::string> categories_of(const SimCase& c) {
  if (is_process_manager(c)) return c.pm_categories;
  return {c.category};
}

SwarmBounds CaseTemplate::default_bounds() {
  SwarmBounds b;
  b.link_rate_ppm_max = 20'000;
  b.handler_rate_ppm_max = 20'000;
  b.schedule_rate_ppm_max = 50'000;
  b.latency_ms_max = 200;
  b.stall_ms_min = 100;
  b.stall_ms_max = 5'000;
  b.crash_downtime_ms_max = 5'000;
  b.slow_handler_ms_max = 5'000;
  b.transient_failures_max = 3;  // <= retry_count_max: a transient event never halts its key
  return b;
}

CaseEngineOptions CaseTemplate::default_engine() {
  CaseEngineOptions e;
  e.poll_interval_ms = 200;
  return e;
}

namespace {

// The process manager a case with a beside group runs beside its handler group.
constexpr const char* kBesideGroup = "fulfil";

}  // namespace

SimCase generate_case(std::uint64_t seed, const CaseTemplate& t) {
  SEQBY_CHECK(t.instance_count >= 1 && t.key_count >= 1);
  SEQBY_CHECK(t.duration_ms_min <= t.duration_ms_max);
  SEQBY_CHECK(t.beside_slow_ms_min <= t.beside_slow_ms_max);
  SEQBY_CHECK(t.bounds.transient_failures_max <= t.engine.retry_count_max);
  const Rng root(seed);
  SimCase c;
  c.seed = seed;
  c.scenario = t.scenario;
  const bool pm = !t.pm_categories.empty();
  if (pm) {
    c.pm_categories = t.pm_categories;
    c.category.clear();
  }
  c.instance_count = t.instance_count;
  c.engine = t.engine;
  c.link = t.link;
  c.run_ms = t.run_ms;
  c.liveness_ms = t.liveness_ms;
  // A sub-stream of its own: a case without a beside group draws everything else as before.
  Rng beside = root.derive("case/beside");
  if (!pm && t.beside_one_in > 0 && beside.below(t.beside_one_in) == 0) {
    c.beside_group = kBesideGroup;
    if (c.engine.reap_idle_ms == 0) c.engine.reap_idle_ms = t.beside_reap_idle_ms;
    SEQBY_CHECK(c.engine.reap_idle_ms > 0);
  }

  Rng commit = root.derive("case/commit");
  c.commit_with_step =
      t.commit_with_step_one_in > 0 && commit.below(t.commit_with_step_one_in) == 0;
  Rng steps = root.derive("case/steps");
  if (t.steps_batched_one_in > 0 && steps.below(t.steps_batched_one_in) == 0 &&
      c.engine.step_batch_max == 1) {
    c.engine.step_batch_max = kStepsBatched;
  }

  for (std::uint32_t k = 0; k < t.key_count; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "client-%02u", k);
    c.keys.emplace_back(name);
  }
  std::sort(c.keys.begin(), c.keys.end());

  c.swarm = t.faults ? SwarmConfig::draw(seed, t.bounds) : SwarmConfig::none();
  if (!t.faults) c.swarm.bounds = t.bounds;
  // client_pause is past the lease: commands queue while every lease held runs out.
  SwarmBounds& bounds = c.swarm.bounds;
  bounds.client_pause_ms_min = std::max(bounds.client_pause_ms_min, t.engine.lease_ttl_ms + 1);
  bounds.client_pause_ms_max = std::max(bounds.client_pause_ms_max, bounds.client_pause_ms_min);
  const FaultSetting poison = c.swarm.setting(FaultKind::handler_poison);
  c.swarm.set(FaultKind::handler_poison, poison.enabled,
              std::min(poison.rate_ppm, t.poison_rate_ppm_max));

  // Publish times: uniform over the span, sorted; keys uniform (a PM case: categories uniform,
  // from their own sub-stream, so a non-PM case draws exactly as before); seq per stream in
  // time order.
  Rng times = root.derive("case/times");
  Rng keys = root.derive("case/keys");
  Rng durations = root.derive("case/durations");
  Rng categories = root.derive("case/categories");
  std::vector<std::uint64_t> at(t.event_count);
  for (auto& a : at) a = t.publish_span_ms == 0 ? 0 : times.below(t.publish_span_ms);
  std::sort(at.begin(), at.end());
  const std::size_t category_count = pm ? c.pm_categories.size() : 1;
  std::vector<std::int64_t> next_seq(c.keys.size() * category_count, 1);
  const Rng handler_rng = root.derive("case");
  Rng beside_slow = root.derive("case/beside_slow");
  for (std::uint32_t i = 0; i < t.event_count; ++i) {
    CaseEvent e;
    e.at_ms = at[i];
    const std::size_t k = keys.below(c.keys.size());
    e.key = c.keys[k];
    const std::size_t category = pm ? categories.below(category_count) : 0;
    if (pm) e.category = c.pm_categories[category];
    e.seq = next_seq[k * category_count + category]++;
    e.behaviour.duration_ms = durations.uniform(t.duration_ms_min, t.duration_ms_max);
    const HandlerFaults f = draw_handler_faults(
        handler_rng, c.swarm, category_of(c, e) + ":" + e.key + ":" + std::to_string(e.seq));
    e.behaviour.transient_failures = f.transient_failures;
    e.behaviour.poison = f.poison;
    e.behaviour.slow_ms = f.slow_ms;
    if (!c.beside_group.empty() && t.beside_slow_one_in > 0 &&
        beside_slow.below(t.beside_slow_one_in) == 0) {
      e.behaviour.beside_slow_ms = beside_slow.uniform(t.beside_slow_ms_min, t.beside_slow_ms_max);
    }
    c.events.push_back(std::move(e));
  }
  c.schedule =
      draw_fault_schedule(root.derive("case/faults"), c.swarm, c.instance_count, 0, c.run_ms);
  return c;
}

namespace {

// Whether `e` is on the stream (`category` "": the case's category; every category of a PM case).
bool on_stream(const SimCase& c, const CaseEvent& e, const std::string& key,
               const std::string& category) {
  if (e.key != key) return false;
  if (category.empty() && is_process_manager(c)) return true;
  return category_of(c, e) == (category.empty() ? c.category : category);
}

}  // namespace

std::vector<CaseEvent> events_of(const SimCase& c, const std::string& key,
                                 const std::string& category) {
  std::vector<CaseEvent> out;
  for (const auto& e : c.events) {
    if (on_stream(c, e, key, category)) out.push_back(e);
  }
  if (category.empty() && is_process_manager(c)) return out;  // publish order
  std::stable_sort(out.begin(), out.end(),
                   [](const CaseEvent& a, const CaseEvent& b) { return a.seq < b.seq; });
  return out;
}

std::size_t event_count(const SimCase& c, const std::string& key, const std::string& category) {
  std::size_t count = 0;
  for (const auto& e : c.events) count += on_stream(c, e, key, category) ? 1 : 0;
  return count;
}

std::int64_t first_poison_seq(const SimCase& c, const std::string& key,
                              const std::string& category) {
  std::int64_t first = 0;
  for (const auto& e : c.events) {
    if (on_stream(c, e, key, category) && e.behaviour.poison && (first == 0 || e.seq < first)) {
      first = e.seq;
    }
  }
  return first;
}

std::string describe_case(const SimCase& c) {
  std::size_t poison = 0;
  for (const auto& e : c.events) poison += e.behaviour.poison ? 1 : 0;
  std::string pm;
  if (is_process_manager(c)) {
    pm = " pm=" + c.group + " categories=";
    for (std::size_t i = 0; i < c.pm_categories.size(); ++i) {
      pm += (i == 0 ? "" : ",") + c.pm_categories[i];
    }
  }
  const std::string beside = (c.beside_group.empty() ? "" : " beside=" + c.beside_group) +
                             (c.commit_with_step ? " commit=step" : "") +
                             (c.engine.step_batch_max > 1 ? " steps=batched" : "");
  return "seed=" + std::to_string(c.seed) + " scenario=" + c.scenario +
         " variant=" + std::string(testing::variant_name(c.variant)) + pm + beside +
         " instances=" + std::to_string(c.instance_count) +
         " keys=" + std::to_string(c.keys.size()) + " events=" + std::to_string(c.events.size()) +
         " poison=" + std::to_string(poison) +
         " scheduled_faults=" + std::to_string(c.schedule.faults.size()) +
         " run_ms=" + std::to_string(c.run_ms) + " liveness_ms=" + std::to_string(c.liveness_ms);
}

}  // namespace seqby::sim
