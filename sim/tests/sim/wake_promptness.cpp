// Idle partitions are woken by their new entries, not found by polling (docs/ARCHITECTURE.md
// "Idle partitions are woken"): with faults off and every idle recheck pushed past the run
// (idle_recheck_ms 10 minutes), each event is entered within a twentieth of a blocking read's
// time (kWakeBlockMsMax, 500 ms) of the moment it could first be handled: its publish, its
// handler's exit from the event before it on its key, or its key's acquire, whichever came last. A
// worker that starts waiting while its instance's blocking read is in flight must end that read so
// that its stream is watched; a waiter whose stream got an entry must be woken. On the simulator's
// World, virtual time. It kills these mutants of mutate/catalog.txt:
// waker-no-ring-for-new-waiter, waker-woken-not-rung.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seqby/core/broker.h"
#include "seqby/sim/sim_case.h"
#include "seqby/sim/world.h"

namespace seqby::sim {
namespace {

TEST(WakePromptness, EveryEventIsEnteredWithinAFractionOfABlockingReadOfBecomingDue) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    CaseTemplate tmpl;
    tmpl.faults = false;
    tmpl.poison_rate_ppm_max = 0;
    tmpl.event_count = 200;  // over 20 s on 16 keys: partitions go idle between their events
    tmpl.engine.idle_recheck_ms = 600'000;
    World world(generate_case(seed, tmpl));
    world.run();
    ASSERT_TRUE(world.stats().liveness_reached) << "seed " << seed;

    // An event is due at its publish, when its key's handler last exited, or when its key's
    // lease was last acquired (a new key waits for discovery), whichever is latest.
    std::map<std::string, std::uint64_t> published_ms;  // event id -> publish time
    std::map<std::string, std::uint64_t> exited_ms;     // key -> its handler's last exit
    std::map<std::string, std::uint64_t> acquired_ms;   // key -> its lease's last acquire
    std::map<std::string, bool> entered;                // event id -> entered before
    std::uint64_t worst_ms = 0;
    std::string worst;
    for (const HistoryRecord& r : world.take_history()) {
      if (r.op == HistoryOp::publish) published_ms[r.event_id] = r.time_ms;
      if (r.op == HistoryOp::exit) exited_ms[r.key] = r.time_ms;
      if (r.op == HistoryOp::acquire) acquired_ms[r.key] = r.time_ms;
      if (r.op != HistoryOp::enter || entered[r.event_id]) continue;
      entered[r.event_id] = true;
      auto publish = published_ms.find(r.event_id);
      ASSERT_NE(publish, published_ms.end()) << r.event_id;
      const std::uint64_t due_ms =
          std::max({publish->second, exited_ms[r.key], acquired_ms[r.key]});
      if (r.time_ms > due_ms && r.time_ms - due_ms > worst_ms) {
        worst_ms = r.time_ms - due_ms;
        worst = r.key + " " + r.event_id;
      }
    }
    std::printf("seed %llu: the longest wait was %llu ms (%s)\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(worst_ms),
                worst.c_str());
    EXPECT_LT(worst_ms, kWakeBlockMsMax / 20)
        << "seed " << seed << ": " << worst << " waited " << worst_ms << " ms after it was due";
  }
}

}  // namespace
}  // namespace seqby::sim
