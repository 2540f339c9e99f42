// The harness catches every known-broken variant (DESIGN section 7): for each, seeds of the
// default case run until one fails, within a bound; the failing seed is printed with the property
// that caught it and its replay line, and `correct` passes that same seed.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "seqby/properties/checker.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"

namespace seqby {
namespace {

constexpr std::uint64_t kSeedFirst = 1;
constexpr std::uint64_t kSeedsMax = 50;

struct Caught {
  std::uint64_t seed = 0;  // 0: not caught within kSeedsMax seeds
  std::string property;
};

Caught first_failure(const std::string& variant, const sim::CaseTemplate& tmpl) {
  for (std::uint64_t seed = kSeedFirst; seed < kSeedFirst + kSeedsMax; ++seed) {
    sim::SimCase c = sim::generate_case(seed, tmpl);
    c.variant = variant;
    const scenarios::RunResult result = scenarios::run_case(c);
    if (result.passed) continue;
    Caught caught{seed, "(none named)"};
    if (!result.report.violations.empty()) {
      caught.property = properties::property_name(result.report.violations.front().property);
    }
    std::cout << "variant " << variant << " caught at seed " << seed << " by property "
              << caught.property << "; replay: seqby sim --seed " << seed << " --variant "
              << variant << "\n";
    return caught;
  }
  return {};
}

void expect_caught(const std::string& variant, const sim::CaseTemplate& tmpl,
                   const std::string& property) {
  const Caught caught = first_failure(variant, tmpl);
  ASSERT_NE(caught.seed, 0u) << variant << " passed " << kSeedsMax << " seeds";
  EXPECT_EQ(caught.property, property);
  sim::SimCase c = sim::generate_case(caught.seed, tmpl);
  const scenarios::RunResult correct = scenarios::run_case(c);
  EXPECT_TRUE(correct.passed) << "correct fails seed " << caught.seed << ":\n" << correct.summary;
}

TEST(VariantsCaught, NoFenceIsCaught) { expect_caught("no_fence", sim::CaseTemplate{}, "fence"); }

TEST(VariantsCaught, DlqContinueIsCaught) {
  sim::CaseTemplate tmpl;
  tmpl.poison_rate_ppm_max = 20'000;  // poison heads are what this variant mishandles
  expect_caught("dlq_continue", tmpl, "poison_halt");
}

}  // namespace
}  // namespace seqby
