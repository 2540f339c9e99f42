// The reap race campaign (ops_reap_campaign.h).
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "seqby/properties/checker.h"
#include "seqby/scenarios/ops_reap_race.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/rng.h"

namespace seqby::scenarios {

sim::SimCase reap_race_case(std::uint64_t seed) {
  sim::CaseTemplate t;
  t.scenario = "cold_partition_reaping";
  t.instance_count = 3;
  t.key_count = 3;
  t.event_count = 1;  // replaced below
  t.publish_span_ms = 12'000;
  t.run_ms = 14'000;
  t.liveness_ms = 30'000;
  t.engine.lease_ttl_ms = 1000;
  t.engine.heartbeat_interval_ms = 250;
  t.engine.discovery_interval_ms = 250;
  t.engine.poll_interval_ms = 20;
  t.engine.reap_idle_ms = kReapRaceIdleMs;
  // One group: its figures (a generation acquired twice per key) are one group's leases'.
  t.beside_one_in = 0;
  sim::SimCase c = sim::generate_case(seed, t);

  const sim::Rng root(seed);
  sim::Rng times = root.derive("reap/times");
  sim::Rng durations = root.derive("reap/durations");
  const sim::Rng handler_rng = root.derive("case");
  struct Draft {
    std::uint64_t at_ms;
    std::size_t key;
  };
  std::vector<Draft> drafts;
  for (std::size_t k = 0; k < c.keys.size(); ++k) {
    std::uint64_t at = times.below(500);
    for (std::uint32_t burst = 0; burst < 16 && at < t.publish_span_ms; ++burst) {
      const std::uint64_t count = times.uniform(1, 3);
      for (std::uint64_t i = 0; i < count; ++i) {
        drafts.push_back(Draft{at, k});
        at += times.uniform(1, 20);
      }
      // Half the gaps end around the moment an owner decides to reap (idle past reap_idle_ms,
      // noticed on its next poll or heartbeat), the others anywhere in a wider range.
      at += times.below(2) == 0 ? times.uniform(kReapRaceIdleMs, kReapRaceIdleMs + 400)
                                : times.uniform(kReapRaceIdleMs / 2, 3 * kReapRaceIdleMs);
    }
  }
  std::stable_sort(drafts.begin(), drafts.end(), [](const Draft& a, const Draft& b) {
    return a.at_ms != b.at_ms ? a.at_ms < b.at_ms : a.key < b.key;
  });
  std::vector<std::int64_t> next_seq(c.keys.size(), 1);
  c.events.clear();
  for (const Draft& d : drafts) {
    sim::CaseEvent e;
    e.at_ms = d.at_ms;
    e.key = c.keys[d.key];
    e.seq = next_seq[d.key]++;
    e.behaviour.duration_ms = durations.uniform(1, 20);
    const sim::HandlerFaults f = sim::draw_handler_faults(
        handler_rng, c.swarm, c.category + ":" + e.key + ":" + std::to_string(e.seq));
    e.behaviour.transient_failures = f.transient_failures;
    e.behaviour.poison = f.poison;
    e.behaviour.slow_ms = f.slow_ms;
    c.events.push_back(std::move(e));
  }
  return c;
}

namespace {

struct SeedFigures {
  std::uint64_t reaps = 0;
  std::uint64_t raced = 0;
  std::uint64_t closest_ms = ~0ull;
  std::uint64_t reuses = 0;
};

// The reap races (properties::count_reap_races, which the campaigns' reached states count too)
// and any (key, generation) acquired twice.
SeedFigures measure(const std::vector<HistoryRecord>& history) {
  SeedFigures f;
  const properties::ReapRaces races = properties::count_reap_races(history);
  f.reaps = races.reaps;
  f.raced = races.raced;
  f.closest_ms = races.closest_ms;
  std::set<std::pair<std::string, std::uint64_t>> acquired;
  for (const HistoryRecord& r : history) {
    if (r.op == HistoryOp::acquire && !acquired.insert({r.key, r.generation}).second) ++f.reuses;
  }
  return f;
}

}  // namespace

ReapRaceResult run_reap_race(std::uint64_t first, std::uint64_t last, unsigned jobs,
                             KeyLayout layout) {
  ReapRaceResult out;
  std::mutex mu;
  std::uint64_t next = first;
  RunOptions options;
  options.compute_history_sha256 = false;
  options.key_layout = layout;
  // The bursts are sparse by design (a key idles between them), so two keys' handlers need not
  // ever overlap: `parallel` judges a busy workload's shape, not this one's safety.
  options.skip.push_back(properties::Property::parallel);
  auto work = [&] {
    for (;;) {
      std::uint64_t seed = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next > last) return;
        seed = next++;
      }
      const RunResult r = run_case(reap_race_case(seed), options);
      const SeedFigures f = measure(r.history);
      std::lock_guard<std::mutex> lock(mu);
      ++out.runs;
      out.reaps += f.reaps;
      out.raced_publishes += f.raced;
      out.closest_ms = std::min(out.closest_ms, f.closest_ms);
      out.generation_reuses += f.reuses;
      out.events_published += r.events_published;
      out.events_committed += r.events_committed;
      if (!r.passed || f.reuses > 0) {
        out.failed_seeds.push_back(seed);
        for (const auto& v : r.report.violations) {
          out.failures.push_back("seed " + std::to_string(seed) + " " +
                                 properties::property_name(v.property) + " " + v.key + ": " +
                                 v.explanation);
        }
        if (f.reuses > 0)
          out.failures.push_back("seed " + std::to_string(seed) + " reused a generation");
        if (!r.liveness_reached)
          out.failures.push_back("seed " + std::to_string(seed) + " liveness not reached");
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < std::max(1u, jobs); ++j) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  std::sort(out.failed_seeds.begin(), out.failed_seeds.end());
  return out;
}

std::string render_reap_race(const ReapRaceResult& r) {
  std::string text =
      "reap race: " + std::to_string(r.runs) + " seeds, " + std::to_string(r.failed_seeds.size()) +
      " failed; " + std::to_string(r.events_published) + " events published, " +
      std::to_string(r.events_committed) + " committed; " + std::to_string(r.reaps) + " reaps; " +
      std::to_string(r.raced_publishes) + " publishes re-created their key within " +
      std::to_string(kReapRaceWindowMs) + " ms of its reap (closest at most " +
      (r.closest_ms == ~0ull ? std::string("none") : std::to_string(r.closest_ms) + " ms") + "); " +
      std::to_string(r.generation_reuses) + " generations reused\n";
  for (const auto& f : r.failures) text += "  " + f + "\n";
  for (std::uint64_t seed : r.failed_seeds) {
    text += "  rerun: seqby sim --seed " + std::to_string(seed) + " (case: reap_race_case)\n";
  }
  return text;
}

}  // namespace seqby::scenarios
