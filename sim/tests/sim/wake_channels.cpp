// Wake channels, simulated (docs/ARCHITECTURE.md "Idle partitions are woken"): past
// wake_read_partitions_max idle streams an instance spreads its idle workers over more blocking
// reads, each on a wake link of its own, and every channel's read wakes its own workers. With the
// limit at one stream per read, more reads block at once than there are instances (one each at
// the default), and the checker judges the histories like any other.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios {
namespace {

// The most blocking reads held by the simulated server at once during the case's active phase.
std::size_t most_blocked_at_once(const sim::SimCase& c) {
  sim::World world(c);
  world.start();
  std::size_t most = 0;
  world.run_until(
      [&] {
        most = std::max(most, world.redis().blocked_count());
        return false;
      },
      c.run_ms);
  return most;
}

TEST(WakeChannels, PastTheLimitIdleWorkersBlockOnMoreReadsThanInstances) {
  const sim::SimCase c = sim::generate_case(3);
  ASSERT_GT(c.keys.size(), c.instance_count) << "the case must hold more keys than instances";
  // The default limit (256 streams per read) keeps every instance (a beside group's too) on one
  // read.
  EXPECT_LE(most_blocked_at_once(c), sim::world_instance_count(c));
  sim::SimCase spread = c;
  spread.engine.wake_read_partitions_max = 1;
  EXPECT_GT(most_blocked_at_once(spread), sim::world_instance_count(c));
}

TEST(WakeChannels, OneStreamPerReadHoldsEveryPropertyUnderTheDefaultFaults) {
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    sim::SimCase c = sim::generate_case(seed);
    c.engine.wake_read_partitions_max = 1;
    const RunResult r = run_case(c);
    EXPECT_TRUE(r.passed) << "seed " << seed << " (wake_read_partitions_max 1)\n" << r.summary;
    EXPECT_TRUE(r.liveness_reached) << "seed " << seed;
  }
}

TEST(WakeChannels, OneStreamPerReadHoldsEveryPropertyForAProcessManager) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    sim::SimCase c = sim::generate_case(seed, sim::process_manager_template());
    c.engine.wake_read_partitions_max = 1;
    const RunResult r = run_case(c);
    EXPECT_TRUE(r.passed) << "seed " << seed << " (process manager, wake_read_partitions_max 1)\n"
                          << r.summary;
  }
}

}  // namespace
}  // namespace seqby::scenarios
