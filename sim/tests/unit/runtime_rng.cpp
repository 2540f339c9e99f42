// Rng: fixed streams per seed, bounded draws in range, sub-streams independent of the order in
// which they are derived and of what the parent drew before.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "seqby/sim/rng.h"

namespace seqby::sim {
namespace {

std::vector<std::uint64_t> draw(Rng rng, int count) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < count; i++) out.push_back(rng.next_u64());
  return out;
}

TEST(RuntimeRng, SameSeedSameStreamDifferentSeedDifferentStream) {
  EXPECT_EQ(draw(Rng(42), 16), draw(Rng(42), 16));
  EXPECT_NE(draw(Rng(42), 16), draw(Rng(43), 16));
}

TEST(RuntimeRng, SubStreamsDoNotDependOnDerivationOrderOrParentDraws) {
  Rng first(7);
  Rng link_a = first.derive("link/a");
  Rng link_b = first.derive("link/b");

  Rng second(7);
  for (int i = 0; i < 100; i++) second.next_u64();  // the parent drawing changes nothing
  Rng late_b = second.derive("link/b");
  Rng late_a = second.derive("link/a");

  EXPECT_EQ(draw(link_a, 8), draw(late_a, 8));
  EXPECT_EQ(draw(link_b, 8), draw(late_b, 8));
  EXPECT_NE(draw(link_a, 8), draw(link_b, 8));
  EXPECT_NE(draw(Rng(7).derive("x").derive("y"), 4), draw(Rng(7).derive("y").derive("x"), 4));
}

TEST(RuntimeRng, UniformStaysInRangeAndReachesBothEnds) {
  Rng rng(1);
  bool saw_lo = false, saw_hi = false;
  for (int i = 0; i < 10000; i++) {
    const std::uint64_t v = rng.uniform(10, 14);
    ASSERT_GE(v, 10u);
    ASSERT_LE(v, 14u);
    saw_lo |= v == 10;
    saw_hi |= v == 14;
    const std::int64_t s = rng.uniform_signed(-3, 3);
    ASSERT_GE(s, -3);
    ASSERT_LE(s, 3);
  }
  EXPECT_TRUE(saw_lo && saw_hi);
  EXPECT_EQ(rng.uniform(5, 5), 5u);
}

TEST(RuntimeRng, ChanceHonoursItsEdgesAndRoughlyItsRate) {
  Rng rng(3);
  int hits = 0;
  for (int i = 0; i < 100000; i++) {
    ASSERT_FALSE(rng.chance_ppm(0));
    ASSERT_TRUE(rng.chance_ppm(1'000'000));
    ASSERT_FALSE(rng.chance(0.0));
    ASSERT_TRUE(rng.chance(1.0));
    hits += rng.chance_ppm(250'000) ? 1 : 0;
  }
  EXPECT_GT(hits, 24000);
  EXPECT_LT(hits, 26000);
}

TEST(RuntimeRng, PickChoosesEveryElement) {
  Rng rng(9);
  const std::array<int, 3> items{4, 5, 6};
  std::array<int, 3> seen{};
  for (int i = 0; i < 300; i++) seen[rng.pick(std::span<const int>(items)) - 4]++;
  for (int count : seen) EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace seqby::sim
