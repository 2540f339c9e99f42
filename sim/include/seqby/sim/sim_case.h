// SimCase: one simulated run, fully expanded (DESIGN.md section 2): the publish schedule with
// each event's handler behaviour, the engine and link options, the link fault rates and the
// explicit, timed fault schedule. A case is self-contained: it replays the same run even after
// the generator (generate_case) changes, because nothing in a run is drawn from the seed except
// link latencies and link faults, which come from named sub-streams of case.seed.
// It does not say how the run is checked; that is the driver's business (scenarios/run.h).
//
// A case may run a process manager (ADR decision 2): `pm_categories` non-empty makes `group` a
// process manager over those categories; its keys are correlation values, each event names its
// category, and an event's stream is "category:key", with seq counted per stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqby/core/engine_options.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/sim_link.h"
#include "seqby/testing/variant.h"

namespace seqby::sim {

// What the test handler does with one event, on every delivery of it, on any instance.
struct EventBehaviour {
  std::uint64_t duration_ms = 5;         // time the handler body takes
  std::uint32_t transient_failures = 0;  // the first N calls (counted across instances) fail
  bool poison = false;                   // every call fails: the partition halts on it
  std::uint64_t slow_ms = 0;             // extra time each call takes (slow_handler)
  // Extra time each call of the beside group (SimCase::beside_group) takes, on top of slow_ms;
  // the case's own group never waits it.
  std::uint64_t beside_slow_ms = 0;
  friend bool operator==(const EventBehaviour&, const EventBehaviour&) = default;
};

struct CaseEvent {
  std::uint64_t at_ms = 0;  // publish time (publisher's clock = global time)
  std::string key;          // partition key (a process manager's correlation value)
  // The event's category: "" means the case's `category`; in a process-manager case it names
  // one of `pm_categories`.
  std::string category;
  std::int64_t seq = 0;  // per (category, key) sequence number, 1, 2, 3, ... in publish order
  std::string type = "created";
  EventBehaviour behaviour;
  friend bool operator==(const CaseEvent&, const CaseEvent&) = default;
};

// The engine limits a case fixes (owner id, category and group come from the world): the
// case-file fields of kEngineLimitFields (engine_options.h), at the table's defaults but one.
struct CaseEngineOptions : EngineLimits {
  // The one deliberate difference from the engine's defaults: a simulated case has always
  // waited at most 30 s in stop() (EngineOptions: 60 s). Every case file written so far carries
  // 30000 and the generated cases' histories were recorded with it, so it stays the case default.
  static constexpr std::uint64_t kStopWaitMaxMs = 30000;
  CaseEngineOptions() { stop_wait_max_ms = kStopWaitMaxMs; }
  friend bool operator==(const CaseEngineOptions&, const CaseEngineOptions&) = default;
};

struct SimCase {
  std::uint64_t seed = 1;
  // The engine design the instances run: `correct`, or a KNOWN-BROKEN variant (its steps and
  // broker options from seqby::testing).
  testing::Variant variant = testing::Variant::correct;
  std::string scenario = "default";
  std::string category = "order";
  std::string group = "billing";
  // Non-empty: `group` is a process manager over these categories (distinct); `category` is
  // then "" and every event names its category.
  std::vector<std::string> pm_categories;
  // Non-empty: a second group on `category` beside `group` (issue 18, "a reap while another group
  // has an entry in flight"): a process manager of this name over {category}, run by one instance
  // of its own after the case's instances (no instance faults; link and server faults as any
  // connection), slower than `group` by each event's beside_slow_ms. `group` reaps
  // (engine.reap_idle_ms > 0), and a reap must wait while this group has an entry in flight.
  // Only in a handler-group case (pm_categories empty).
  std::string beside_group;
  // The handler returns its effect for the engine to commit with the step that acknowledges the
  // event and reads the next (HandlerResult::commit_with_step: fenced_commit_next, one script per
  // event) instead of committing it itself (HandlerContext::commit, then fenced_next).
  bool commit_with_step = false;
  std::uint32_t instance_count = 3;
  // A rolling upgrade (docs/ARCHITECTURE.md "Rolling upgrade"): instances 0 .. N-1 run the
  // previous release's protocol (seqby::testing::previous_release_steps), the others this one.
  // Only with the correct variant. REQUIRES: <= instance_count.
  std::uint32_t previous_release_instances = 0;
  std::vector<std::string> keys;  // every key that has events, sorted (PM: correlation values)
  std::vector<CaseEvent> events;  // sorted by at_ms (ties: generation order)
  CaseEngineOptions engine;
  SimLinkOptions link;
  SwarmConfig swarm;                   // link fault rates (handler/schedule kinds: informative)
  FaultSchedule schedule;              // instance faults, all before run_ms
  std::uint64_t run_ms = 10'000;       // end of the active phase (faults stop here)
  std::uint64_t liveness_ms = 60'000;  // the liveness phase lasts at most this long
};

// The engine options of instance `owner_id` in a run of `c` (a process manager's for a PM case).
EngineOptions engine_options_for(const SimCase& c, const std::string& owner_id);
// The engine options of the beside group's instance `owner_id`: the process manager
// `c.beside_group` over {c.category}, with the case's limits but no reaping.
// REQUIRES: c.beside_group is not empty.
EngineOptions beside_engine_options_for(const SimCase& c, const std::string& owner_id);

// Whether `c` runs a process manager.
inline bool is_process_manager(const SimCase& c) { return !c.pm_categories.empty(); }
// The category of `e` in `c`: e.category, else c.category (a reference into `e` or `c`).
const std::string& category_of(const SimCase& c, const CaseEvent& e);
// The categories `c` publishes to: pm_categories, else {c.category}.
std::vector<std::string> categories_of(const SimCase& c);
// The groups that must commit every event of `c`: {group}, and beside_group when there is one.
std::vector<std::string> groups_of(const SimCase& c);
// The instances `c` runs: instance_count, plus the beside group's one.
inline std::uint32_t world_instance_count(const SimCase& c) {
  return c.instance_count + (c.beside_group.empty() ? 0 : 1);
}

// The step_batch_max of a seed drawn to batch its steps (CaseTemplate::steps_batched_one_in):
// RedisBroker::kStepsPerCallMax, the most one fenced_steps script carries.
inline constexpr std::uint32_t kStepsBatched = 32;

// How generate_case shapes a seed's case.
struct CaseTemplate {
  std::string scenario = "default";
  std::uint32_t instance_count = 3;
  std::uint32_t key_count = 16;
  std::uint32_t event_count = 1000;
  std::uint64_t publish_span_ms = 20'000;  // events are published over [0, span)
  std::uint64_t duration_ms_min = 1;       // handler body time, drawn per event
  std::uint64_t duration_ms_max = 20;
  std::uint64_t run_ms = 25'000;
  std::uint64_t liveness_ms = 60'000;
  bool faults = true;  // false: SwarmConfig::none()
  // Non-empty: a process-manager case over these categories; each event's category is drawn
  // uniformly from them (sub-stream "case/categories"), keys are correlation values.
  std::vector<std::string> pm_categories;
  SwarmBounds bounds = default_bounds();
  std::uint32_t poison_rate_ppm_max = 2'000;  // poison halts a key: keep it rare
  // One seed in this many (drawn from sub-stream "case/beside"; 0: none) runs a second group
  // beside the case's (SimCase::beside_group): the case's group then reaps after
  // beside_reap_idle_ms (unless `engine` sets a reap time), and the beside group is slow on one
  // event in beside_slow_one_in, by beside_slow_ms_min..max (sub-stream "case/beside_slow"),
  // past the reap time: a reap meets its entry in flight, mostly where a key's next event comes
  // more than that later. A default campaign reaches Reached::reap_refused_for_other_group so:
  // seeds 0..299 reached it 151 times (a reap time of 500 ms with slow times of 0.7 to 2.5 s in
  // one event in 8 reached it about a seventh as often: a key's events come every 320 ms on
  // average). A seed with a beside group handles every event twice: one in 8 costs the
  // campaign about 13% more CPU, one in 4 about 30%. Never in a process-manager case.
  std::uint32_t beside_one_in = 8;
  // One seed in this many (sub-stream "case/commit"; 0: none) handles with commit_with_step.
  std::uint32_t commit_with_step_one_in = 2;
  // One seed in this many (sub-stream "case/steps"; 0: none) runs its instances with
  // engine.step_batch_max = kStepsBatched (docs/ARCHITECTURE.md "Steps of many partitions in one
  // script"; the case summary says steps=batched), when `engine` leaves it at 1: every campaign
  // runs fenced_steps beside the script per step. A seed not drawn runs as before.
  std::uint32_t steps_batched_one_in = 4;
  std::uint64_t beside_reap_idle_ms = 250;
  std::uint32_t beside_slow_one_in = 6;
  std::uint64_t beside_slow_ms_min = 300;
  std::uint64_t beside_slow_ms_max = 1'000;
  // Idle partitions poll every 200 ms (the engine's default is 50): at 50 ms, empty polls are
  // ~40% of a default seed's server commands.
  CaseEngineOptions engine = default_engine();
  SimLinkOptions link;

  static SwarmBounds default_bounds();
  static CaseEngineOptions default_engine();
};

// `base` made a process manager's template: group over the categories "order" and "payment",
// keys as correlation values (what `seqby sim|hunt --process-manager` generate).
CaseTemplate process_manager_template(CaseTemplate base = {});

// Draws a whole case from named sub-streams of `seed` ("case/keys", "case/events", "swarm",
// "schedule", "handler", ...), so adding a component does not reshuffle the others.
SimCase generate_case(std::uint64_t seed, const CaseTemplate& tmpl = {});

// The events of stream `category`:`key`, in seq order. `category` "" is the case's category;
// in a process-manager case "" gives every event of correlation value `key`, in publish order.
std::vector<CaseEvent> events_of(const SimCase& c, const std::string& key,
                                 const std::string& category = "");

// How many events stream `category`:`key` holds (events_of(...).size(), without the copies).
std::size_t event_count(const SimCase& c, const std::string& key, const std::string& category = "");

// The seq of the first poison event of stream `category`:`key`, or 0 when there is none.
// `category` "" as in events_of (a PM case: the lowest poison seq of `key` in any category).
std::int64_t first_poison_seq(const SimCase& c, const std::string& key,
                              const std::string& category = "");

// Short summary: "seed=7 scenario=default variant=correct instances=3 keys=16 events=1000 ...";
// a process-manager case adds "pm=G categories=order,payment" after the variant, a case with a
// beside group "beside=G", a case whose handler commits with the step "commit=step".
std::string describe_case(const SimCase& c);

}  // namespace seqby::sim
