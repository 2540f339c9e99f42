// The default campaign catches every known-broken variant (DESIGN section 7): for each variant
// of testing::all_variants() but `correct`, seeds of the default case (what `seqby sim --variant
// NAME` runs) are tried until one fails, within a bound; the failing seed is printed with the
// property that caught it and its rerun line, and `correct` passes that same seed. New variants
// join without a change here; `seqby hunt` and the property label shrink what is caught.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "seqby/properties/checker.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"
#include "seqby/testing/variant.h"

namespace seqby {
namespace {

constexpr std::uint64_t kSeedFirst = 1;
constexpr std::uint64_t kSeedsMax = 50;

std::vector<std::string> broken_variants() {
  std::vector<std::string> names;
  for (testing::Variant v : testing::all_variants()) {
    if (v != testing::Variant::correct) names.emplace_back(testing::variant_name(v));
  }
  return names;
}

class VariantsCaught : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantsCaught, ByTheDefaultCampaignWhereCorrectHolds) {
  const std::string variant = GetParam();
  scenarios::RunOptions quick;
  quick.compute_history_sha256 = false;
  for (std::uint64_t seed = kSeedFirst; seed < kSeedFirst + kSeedsMax; ++seed) {
    sim::SimCase c = sim::generate_case(seed);
    c.variant = testing::parse_variant(variant).value();
    const scenarios::RunResult result = scenarios::run_case(c, quick);
    if (result.passed) continue;
    ASSERT_FALSE(result.report.violations.empty()) << result.summary;
    std::cout << "variant " << variant << " caught at seed " << seed << " by property "
              << properties::property_name(result.report.violations.front().property)
              << "; rerun: seqby sim --seed " << seed << " --variant " << variant << "\n";
    c.variant = testing::Variant::correct;
    const scenarios::RunResult correct = scenarios::run_case(c, quick);
    EXPECT_TRUE(correct.passed) << "correct fails seed " << seed << ":\n" << correct.summary;
    return;
  }
  FAIL() << variant << " passed " << kSeedsMax << " seeds of the default campaign";
}

INSTANTIATE_TEST_SUITE_P(AllBroken, VariantsCaught, ::testing::ValuesIn(broken_variants()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace seqby
