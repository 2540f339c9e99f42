// The hunter catches every known-broken variant (issue 4, DESIGN section 7): for each variant of
// all_variants() but `correct`, hunt() over seeds 1..60 finds a counterexample, the shrunk case
// saved as a case file and loaded back still violates the same property with the same history,
// and `correct` holds every property on those same seeds. New variants join without a change
// here. Each caught variant prints its seed, property, sizes and replay line.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "seqby/core/variant.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/hunt.h"

namespace seqby {
namespace {

constexpr std::uint64_t kSeedFirst = 1;
constexpr std::uint64_t kSeedLast = 60;

std::vector<std::string> broken_variants() {
  std::vector<std::string> names;
  for (Variant v : all_variants()) {
    if (v != Variant::correct) names.emplace_back(variant_name(v));
  }
  return names;
}

class VariantsHunted : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantsHunted, CaughtShrunkAndReplayed) {
  scenarios::HuntOptions options;
  options.variant = GetParam();
  options.seed_first = kSeedFirst;
  options.seed_last = kSeedLast;
  const scenarios::HuntResult found = scenarios::hunt(options);
  ASSERT_TRUE(found.found) << options.variant << " held over seeds " << kSeedFirst << ".."
                           << kSeedLast;
  const char* property = properties::property_name(found.property);
  std::cout << "variant " << found.variant << " caught at seed " << found.seed << " by " << property
            << "; original " << scenarios::describe_size(found.original_size) << "; shrunk "
            << scenarios::describe_size(found.shrunk_size) << " in " << found.shrink_runs
            << " runs\n";

  // The saved case is the counterexample: it loads, and its run violates the same property
  // with the very history the hunt recorded.
  std::string dir = ::testing::TempDir() + "seqby-hunted.XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const Result<scenarios::SavedHunt> saved = scenarios::save_hunt(found, dir);
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  std::cout << "replay: seqby replay " << saved.value().case_path << "\n";
  const Result<sim::SimCase> loaded = scenarios::load_case(saved.value().case_path);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const scenarios::RunResult replayed = scenarios::run_case(loaded.value());
  EXPECT_TRUE(replayed.report.status(found.property).violated()) << replayed.summary;
  EXPECT_EQ(replayed.history_sha256, found.shrunk_run.history_sha256);
  EXPECT_LE(found.shrunk_size.events, found.original_size.events);
  EXPECT_LE(found.shrunk_size.faults(), found.original_size.faults());
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(AllBroken, VariantsHunted, ::testing::ValuesIn(broken_variants()),
                         [](const auto& info) { return info.param; });

TEST(VariantsHunted, CorrectHoldsOnTheSameSeeds) {
  scenarios::HuntOptions options;
  options.variant = sim::kCorrectVariant;
  options.seed_first = kSeedFirst;
  options.seed_last = kSeedLast;
  const scenarios::HuntResult result = scenarios::hunt(options);
  EXPECT_FALSE(result.found) << "correct violates " << properties::property_name(result.property)
                             << " at seed " << result.seed << ": " << result.explanation;
  EXPECT_EQ(result.seeds_tried, kSeedLast - kSeedFirst + 1);
}

}  // namespace
}  // namespace seqby
