// rapidcheck generators for whole simulation cases (issue 4): instances, keys, the publish
// schedule with each event's handler behaviour (duration, transient failures, poison, slow),
// engine options (lease TTL, heartbeat, discovery and poll intervals, retry budget), link fault
// rates and an explicit fault schedule whose every fault is a generated TimedFault value, so
// that rapidcheck shrinks the schedule (fewer faults, simpler faults) along with the rest.
// Every part is drawn independently and assembled by build_case(), which clamps what depends on
// another part (fault targets, transient failures <= the retry budget): shrinking one part never
// makes another invalid. Generated engine options always pass validate_engine_options. It makes
// no claim that a case is interesting; CaseShape asks for the work some properties need.
// With CaseShape::process_manager the case runs a process manager (ADR decision 2) over 2-3
// categories: keys are correlation values, events interleave across the categories with seq per
// (category, key), and shrinking moves events toward the first category and fewer categories.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "seqby/sim/faults.h"
#include "seqby/sim/sim_case.h"

namespace seqby::sim {

// How rapidcheck prints a case in a counterexample: the summary line, then every fault.
inline void showValue(const SimCase& c, std::ostream& os) {
  os << describe_case(c) << "\n" << c.schedule.describe();
  for (FaultKind kind : {FaultKind::request_lost, FaultKind::reply_lost, FaultKind::latency,
                         FaultKind::connection_reset}) {
    if (c.swarm.rate_ppm(kind) > 0) {
      os << "link " << fault_kind_name(kind) << " rate_ppm=" << c.swarm.rate_ppm(kind) << "\n";
    }
  }
}

}  // namespace seqby::sim

namespace seqby::testing {

inline constexpr sim::FaultKind kScheduleKinds[] = {
    sim::FaultKind::crash, sim::FaultKind::stall, sim::FaultKind::heartbeat_stall,
    sim::FaultKind::clock_skew, sim::FaultKind::redis_clock_jump};
inline constexpr sim::FaultKind kLinkKinds[] = {sim::FaultKind::request_lost,
                                                sim::FaultKind::reply_lost, sim::FaultKind::latency,
                                                sim::FaultKind::connection_reset};

inline constexpr std::uint32_t kInstancesMax = 3;
inline constexpr std::uint32_t kKeysMax = 4;
inline constexpr std::uint64_t kRunMsMin = 1'000;
inline constexpr std::uint64_t kRunMsMax = 10'000;
inline constexpr std::uint64_t kLivenessMs = 60'000;
// A process-manager case's group and its categories (the first 2 or 3 of these).
inline constexpr const char* kPmGroup = "fulfil";
inline constexpr const char* kPmCategoryNames[] = {"order", "payment", "shipment"};
inline constexpr std::uint32_t kPmCategoriesMin = 2;
inline constexpr std::uint32_t kPmCategoriesMax = std::size(kPmCategoryNames);

// What a property needs of its cases.
struct CaseShape {
  // Two or more instances and keys, and on every key a burst of long handler calls published
  // at one moment, without scheduled or link faults: `parallel` claims overlap in fault-free
  // operation (a lost reply may legitimately hold one key back past another's whole burst).
  bool parallel_work = false;
  // A process manager over 2-3 categories instead of one partitioned handler group.
  bool process_manager = false;
  std::string variant = "correct";  // the engine variant the cases run (a variant_name)
};

// Valid by construction: heartbeat in 1..ttl/2, backoff <= backoff max, every count >= 1.
inline rc::Gen<sim::CaseEngineOptions> gen_engine_options() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::inRange<std::uint64_t>(800, 5'001),  // lease_ttl_ms
                     rc::gen::inRange<std::uint64_t>(1, 6),        // heartbeat, tenths of ttl
                     rc::gen::inRange<std::uint64_t>(100, 2'001),  // discovery_interval_ms
                     rc::gen::inRange<std::uint64_t>(20, 301),     // poll_interval_ms
                     rc::gen::inRange<std::uint32_t>(1, 5),        // retry_count_max
                     rc::gen::inRange<std::uint64_t>(10, 501),     // retry_backoff_ms
                     rc::gen::inRange<std::uint64_t>(1, 9),        // backoff max / backoff
                     rc::gen::inRange<std::uint32_t>(3, 21)),      // transport_retry_count_max
      [](const auto& t) {
        sim::CaseEngineOptions e;
        e.lease_ttl_ms = std::get<0>(t);
        e.heartbeat_interval_ms = std::max<std::uint64_t>(1, e.lease_ttl_ms * std::get<1>(t) / 10);
        e.discovery_interval_ms = std::get<2>(t);
        e.poll_interval_ms = std::get<3>(t);
        e.retry_count_max = std::get<4>(t);
        e.retry_backoff_ms = std::get<5>(t);
        e.retry_backoff_max_ms = e.retry_backoff_ms * std::get<6>(t);
        e.transport_retry_count_max = std::get<7>(t);
        e.stop_wait_max_ms = 30'000;
        return e;
      });
}

// Mostly plain; sometimes transient failures (clamped to the retry budget by build_case),
// rarely poison, sometimes slower than a lease TTL.
inline rc::Gen<sim::EventBehaviour> gen_behaviour() {
  return rc::gen::map(
      rc::gen::tuple(
          rc::gen::inRange<std::uint64_t>(1, 81),
          rc::gen::weightedOneOf<std::uint32_t>(
              {{8, rc::gen::just<std::uint32_t>(0)}, {1, rc::gen::inRange<std::uint32_t>(1, 5)}}),
          rc::gen::weightedOneOf<bool>({{40, rc::gen::just(false)}, {1, rc::gen::just(true)}}),
          rc::gen::weightedOneOf<std::uint64_t>(
              {{15, rc::gen::just<std::uint64_t>(0)},
               {1, rc::gen::inRange<std::uint64_t>(100, 4'001)}})),
      [](const auto& t) {
        sim::EventBehaviour b;
        b.duration_ms = std::get<0>(t);
        b.transient_failures = std::get<1>(t);
        b.poison = std::get<2>(t);
        b.slow_ms = std::get<3>(t);
        return b;
      });
}

// One published event before assembly: which key (mod the key count), which category (mod the
// case's category count; a process-manager case only) and the gap after the previous event.
struct EventSpec {
  std::uint32_t key = 0;
  std::uint64_t gap_ms = 0;
  sim::EventBehaviour behaviour;
  std::uint32_t category = 0;
};

inline rc::Gen<EventSpec> gen_event_spec() {
  return rc::gen::map(rc::gen::tuple(rc::gen::inRange<std::uint32_t>(0, kKeysMax),
                                     rc::gen::inRange<std::uint64_t>(0, 401), gen_behaviour()),
                      [](const auto& t) {
                        return EventSpec{std::get<0>(t), std::get<1>(t), std::get<2>(t)};
                      });
}

// An event of a process-manager case: a key spec with a category drawn too (shrinks toward the
// first category).
inline rc::Gen<EventSpec> gen_pm_event_spec() {
  return rc::gen::map(
      rc::gen::pair(gen_event_spec(), rc::gen::inRange<std::uint32_t>(0, kPmCategoriesMax)),
      [](std::pair<EventSpec, std::uint32_t> t) {
        t.first.category = t.second;
        return t.first;
      });
}

// One scheduled fault; its target and time are clamped to the case by build_case. Shrinks
// toward an early crash of instance 0 that lasts until the liveness phase.
inline rc::Gen<sim::TimedFault> gen_timed_fault() {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::elementOf(std::vector<sim::FaultKind>(std::begin(kScheduleKinds),
                                                                    std::end(kScheduleKinds))),
                     rc::gen::inRange<std::uint64_t>(0, kRunMsMax),      // at_ms
                     rc::gen::inRange<std::uint32_t>(0, kInstancesMax),  // target
                     rc::gen::inRange<std::uint64_t>(0, 5'001),          // duration_ms
                     rc::gen::inRange<std::int64_t>(0, 2'001),           // |jump| ms
                     rc::gen::arbitrary<bool>(),                         // jump backwards
                     rc::gen::inRange<std::uint32_t>(0, 200'001)),       // clock rate offset
      [](const auto& t) {
        sim::TimedFault f;
        f.kind = std::get<0>(t);
        f.at_ms = std::get<1>(t);
        f.target = std::get<2>(t);
        switch (f.kind) {
          case sim::FaultKind::crash:  // duration 0: down until the liveness phase
            f.duration_ms = std::get<3>(t);
            break;
          case sim::FaultKind::stall:
          case sim::FaultKind::heartbeat_stall:
            f.duration_ms = 100 + std::get<3>(t);
            break;
          case sim::FaultKind::clock_skew:
            f.amount_ms = std::get<5>(t) ? -std::get<4>(t) : std::get<4>(t);
            f.rate_ppm = std::get<6>(t) == 0 ? 0 : 900'000 + std::get<6>(t);
            break;
          default:  // redis_clock_jump: forward only, no target
            f.target = 0;
            f.amount_ms = 2 * std::get<4>(t);
            break;
        }
        return f;
      });
}

// A rate per link fault kind (kLinkKinds order); 0 is off.
inline rc::Gen<std::vector<std::uint32_t>> gen_link_rates() {
  return rc::gen::container<std::vector<std::uint32_t>>(
      std::size(kLinkKinds),
      rc::gen::weightedOneOf<std::uint32_t>(
          {{2, rc::gen::just<std::uint32_t>(0)}, {1, rc::gen::inRange<std::uint32_t>(1, 20'001)}}));
}

// The parts of a case, each drawn on its own.
struct CaseParts {
  std::uint64_t seed = 1;  // link latencies and link faults come from sub-streams of it
  std::uint32_t instance_count = 1;
  std::uint32_t key_count = 1;
  std::uint32_t pm_category_count = 0;  // 0: a plain case; else a process manager over this many
  std::uint64_t run_ms = kRunMsMin;
  sim::CaseEngineOptions engine;
  std::vector<EventSpec> events;
  std::vector<sim::TimedFault> faults;
  std::vector<std::uint32_t> link_rates;
};

inline std::string key_name(std::uint32_t k) {
  char name[32];
  std::snprintf(name, sizeof name, "client-%02u", k);
  return name;
}

// Assembles a valid case: event times from the gaps, seq 1..n per stream (category, key), keys =
// keys with events (a process manager's: correlation values, its categories the first
// pm_category_count of kPmCategoryNames, every event naming one),
// transient failures within the retry budget, fault targets and times within the case, the
// schedule sorted by (at_ms, kind, target). With shape.parallel_work, each key first gets three
// 1 s events published together at time 0, the generated events follow from 500 ms, and the
// case has no scheduled or link faults.
inline sim::SimCase build_case(const CaseParts& p, const CaseShape& shape) {
  sim::SimCase c;
  c.seed = p.seed;
  c.variant = testing::parse_variant(shape.variant).value();
  c.instance_count = p.instance_count;
  c.engine = p.engine;
  c.run_ms = p.run_ms;
  c.liveness_ms = kLivenessMs;
  c.swarm = sim::SwarmConfig::none();
  const std::uint32_t pm_categories = std::min(p.pm_category_count, kPmCategoriesMax);
  if (pm_categories > 0) {
    c.group = kPmGroup;
    c.category.clear();
    c.pm_categories.assign(std::begin(kPmCategoryNames),
                           std::begin(kPmCategoryNames) + pm_categories);
  }
  const auto category_name = [&](std::uint32_t index) {
    return pm_categories == 0 ? std::string() : c.pm_categories[index % pm_categories];
  };
  std::vector<sim::CaseEvent> events;
  std::uint64_t at_ms = shape.parallel_work ? 500 : 0;
  for (const EventSpec& spec : p.events) {
    at_ms += spec.gap_ms;
    sim::CaseEvent e;
    e.at_ms = at_ms;
    e.key = key_name(spec.key % p.key_count);
    e.category = category_name(spec.category);
    e.behaviour = spec.behaviour;
    e.behaviour.transient_failures =
        std::min(e.behaviour.transient_failures, c.engine.retry_count_max);
    events.push_back(std::move(e));
  }
  if (shape.parallel_work) {
    for (std::uint32_t k = 0; k < p.key_count; ++k) {
      for (int i = 0; i < 3; ++i) {
        sim::CaseEvent e;
        e.at_ms = 0;
        e.key = key_name(k);
        e.category = category_name(static_cast<std::uint32_t>(i));
        e.behaviour.duration_ms = 1'000;  // the burst outlasts a discovery interval
        events.push_back(std::move(e));
      }
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const auto& a, const auto& b) { return a.at_ms < b.at_ms; });
  std::map<std::pair<std::string, std::string>, std::int64_t> last_seq;
  std::set<std::string> keys;
  for (auto& e : events) {
    e.seq = ++last_seq[{e.category, e.key}];
    keys.insert(e.key);
  }
  c.events = std::move(events);
  c.keys.assign(keys.begin(), keys.end());

  for (sim::TimedFault f : shape.parallel_work ? std::vector<sim::TimedFault>{} : p.faults) {
    f.at_ms %= c.run_ms;
    f.target %= c.instance_count;
    c.schedule.faults.push_back(f);
  }
  std::stable_sort(c.schedule.faults.begin(), c.schedule.faults.end(),
                   [](const sim::TimedFault& a, const sim::TimedFault& b) {
                     return std::tie(a.at_ms, a.kind, a.target) <
                            std::tie(b.at_ms, b.kind, b.target);
                   });
  for (std::size_t i = 0;
       !shape.parallel_work && i < std::size(kLinkKinds) && i < p.link_rates.size(); ++i) {
    c.swarm.set(kLinkKinds[i], p.link_rates[i] > 0, p.link_rates[i]);
  }
  return c;
}

inline rc::Gen<sim::SimCase> gen_case(CaseShape shape = {}) {
  return rc::gen::exec([shape] {
    CaseParts p;
    p.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    p.instance_count =
        *rc::gen::inRange<std::uint32_t>(shape.parallel_work ? 2 : 1, kInstancesMax + 1);
    p.key_count = *rc::gen::inRange<std::uint32_t>(shape.parallel_work ? 2 : 1, kKeysMax + 1);
    if (shape.process_manager) {
      p.pm_category_count =
          *rc::gen::inRange<std::uint32_t>(kPmCategoriesMin, kPmCategoriesMax + 1);
    }
    p.run_ms = *rc::gen::inRange<std::uint64_t>(kRunMsMin, kRunMsMax + 1);
    p.engine = *gen_engine_options();
    p.events =
        *rc::gen::scale(0.6, rc::gen::container<std::vector<EventSpec>>(
                                 shape.process_manager ? gen_pm_event_spec() : gen_event_spec()));
    p.faults =
        *rc::gen::scale(0.15, rc::gen::container<std::vector<sim::TimedFault>>(gen_timed_fault()));
    p.link_rates = *gen_link_rates();
    return build_case(p, shape);
  });
}

}  // namespace seqby::testing
