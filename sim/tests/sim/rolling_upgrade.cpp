// A rolling upgrade, simulated (docs/ARCHITECTURE.md "Rolling upgrade"): instances of the previous
// release's protocol (three scripts per event, polling, leases one at a time) and of this one
// serve the same partitions at once, with the default swarm of faults, and the checker judges the
// mixed histories like any other. Both protocols must have held and handed over the same keys,
// or the campaign proved nothing.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {
namespace {

// Instance i's owner ids are "i<i>-g<incarnation>" (sim/src/world.cpp).
bool is_previous_release(const std::string& node, std::uint32_t previous_instances) {
  for (std::uint32_t i = 0; i < previous_instances; ++i) {
    if (node.rfind("i" + std::to_string(i) + "-", 0) == 0) return true;
  }
  return false;
}

TEST(RollingUpgrade, MixedInstancesOnTheSamePartitionsHoldEveryProperty) {
  std::uint64_t keys_held_by_both = 0;
  std::uint64_t handovers_between = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    sim::SimCase c = sim::generate_case(seed);
    c.previous_release_instances = 1 + static_cast<std::uint32_t>(seed % 2);  // 1 or 2 of 3
    ASSERT_LE(c.previous_release_instances, c.instance_count);
    const RunResult r = run_case(c);
    EXPECT_TRUE(r.passed) << "seed " << seed << " (previous_release_instances "
                          << c.previous_release_instances << ")\n"
                          << r.summary;
    std::map<std::string, std::set<bool>> held_by;  // key -> {previous?}
    std::map<std::string, bool> last_holder;
    for (const auto& rec : r.history) {
      if (rec.op != HistoryOp::acquire || rec.key.empty()) continue;
      const bool previous = is_previous_release(rec.node, c.previous_release_instances);
      held_by[rec.key].insert(previous);
      auto last = last_holder.find(rec.key);
      if (last != last_holder.end() && last->second != previous) ++handovers_between;
      last_holder[rec.key] = previous;
    }
    for (const auto& [key, kinds] : held_by) keys_held_by_both += kinds.size() == 2 ? 1 : 0;
  }
  EXPECT_GT(keys_held_by_both, 0u) << "no key was held by both protocols";
  EXPECT_GT(handovers_between, 0u) << "no key passed between the two protocols";
}

}  // namespace
}  // namespace seqby::scenarios
