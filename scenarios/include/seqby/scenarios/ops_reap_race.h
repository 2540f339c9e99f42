// The reap race campaign of issue 7: simulated cases whose keys get bursts of events separated by
// idle gaps drawn around reap_idle_ms, so some publishes land while an owner is deciding to reap
// that key, with the swarm's faults on. Each seed is judged by the history checker (no_loss,
// fence, order, ...); the campaign also counts the reaps, the publishes that landed close to a
// reap of their key, and any generation of a key acquired twice (a reused generation). It is
// deterministic for a seed range; `seqby scenario run cold_partition_reaping --seeds A..B` runs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqby/properties/reached.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {

inline constexpr std::uint64_t kReapRaceIdleMs = 1000;
using properties::kReapRaceWindowMs;  // "close to a reap": within this (reached.h)

// The case of `seed`: 3 instances, 3 keys, bursts of 1..3 events per key with idle gaps drawn in
// [reap_idle_ms, reap_idle_ms + 400] or [reap_idle_ms / 2, 3 * reap_idle_ms] (half each), swarm
// faults drawn as generate_case draws them.
sim::SimCase reap_race_case(std::uint64_t seed);

struct ReapRaceResult {
  std::uint64_t runs = 0;
  std::vector<std::uint64_t> failed_seeds;
  std::vector<std::string> failures;  // one line per violation: seed, property, explanation
  std::uint64_t reaps = 0;            // reap records over the campaign
  // Publishes that re-created their key within kReapRaceWindowMs (global time, an upper bound
  // from the publisher's records around the reap in decision order) after its reap.
  std::uint64_t raced_publishes = 0;
  std::uint64_t closest_ms = ~0ull;     // the smallest such bound seen
  std::uint64_t generation_reuses = 0;  // a (key, generation) acquired twice
  std::uint64_t events_published = 0;
  std::uint64_t events_committed = 0;
};

// Runs seeds [first, last] on `jobs` threads, every broker in key layout `layout` (the cluster
// layout on a simulated server in cluster mode: RunOptions::key_layout).
ReapRaceResult run_reap_race(std::uint64_t first, std::uint64_t last, unsigned jobs,
                             KeyLayout layout = KeyLayout::flat);

std::string render_reap_race(const ReapRaceResult& r);

}  // namespace seqby::scenarios
