// The hunter catches every known-broken variant (issue 4, DESIGN section 7): for each variant of
// testing::all_variants() but `correct`, hunt() over seeds 1..60 finds a counterexample, the shrunk
// case saved as a case file and loaded back still violates the same property with the same history,
// and `correct` holds every property on those same seeds. New variants join without a change
// here. Each caught variant prints its seed, property, sizes and replay line.
// The process-manager form: the hunting template with a process manager over order and payment
// (correlation values as keys). Every broken variant violates a property on one of its seeds
// 1..kPmSeedLast, no_fence and shared_group through pm_exclusion, fence or order; the case,
// saved and loaded back, violates it again; `correct` holds every property on those seeds.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/hunt.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"
#include "seqby/testing/variant.h"

namespace seqby {
namespace {

constexpr std::uint64_t kSeedFirst = 1;
constexpr std::uint64_t kSeedLast = 60;
constexpr std::uint64_t kPmSeedLast = 20;

std::vector<std::string> broken_variants() {
  std::vector<std::string> names;
  for (testing::Variant v : testing::all_variants()) {
    if (v != testing::Variant::correct) names.emplace_back(testing::variant_name(v));
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
  std::cout << "variant " << found.variant << " caught at seed " << found.witness_seed << " by "
            << property << "; original " << scenarios::describe_size(found.original_size)
            << "; shrunk " << scenarios::describe_size(found.shrunk_size) << " in "
            << found.shrink_runs << " runs\n";

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
  options.variant = "correct";
  options.seed_first = kSeedFirst;
  options.seed_last = kSeedLast;
  const scenarios::HuntResult result = scenarios::hunt(options);
  EXPECT_FALSE(result.found) << "correct violates " << properties::property_name(result.property)
                             << " at seed " << result.seed << ": " << result.explanation;
  EXPECT_EQ(result.seeds_tried, kSeedLast - kSeedFirst + 1);
}

// --- process managers ---------------------------------------------------------------------

using properties::Property;

sim::CaseTemplate pm_template() {
  sim::CaseTemplate t = scenarios::hunt_template();
  t.pm_categories = {"order", "payment"};
  return t;
}

sim::SimCase pm_case(std::uint64_t seed, const std::string& variant) {
  sim::SimCase c = sim::generate_case(seed, pm_template());
  c.variant = testing::parse_variant(variant).value();
  return c;
}

scenarios::RunResult run_quick(const sim::SimCase& c) {
  scenarios::RunOptions options;
  options.compute_history_sha256 = false;
  return scenarios::run_case(c, options);
}

std::string violated_names(const properties::CheckReport& report) {
  std::string names;
  for (std::size_t i = 0; i < properties::kPropertyCount; ++i) {
    if (!report.properties[i].violated()) continue;
    names += (names.empty() ? "" : ",") + std::string(properties::property_name(Property(i)));
  }
  return names;
}

// Which properties catch a variant on process-manager cases: any, except for the variants whose
// failure is two owners of one correlation value at once.
std::set<Property> pm_catching(const std::string& variant) {
  if (variant == "no_fence" || variant == "shared_group") {
    return {Property::pm_exclusion, Property::fence, Property::order};
  }
  std::set<Property> all;
  for (std::size_t i = 0; i < properties::kPropertyCount; ++i) all.insert(Property(i));
  return all;
}

class VariantsHuntedPm : public ::testing::TestWithParam<std::string> {};

TEST_P(VariantsHuntedPm, CaughtOnProcessManagerCasesAndReplayed) {
  const std::string variant = GetParam();
  const std::set<Property> catching = pm_catching(variant);
  for (std::uint64_t seed = kSeedFirst; seed <= kPmSeedLast; ++seed) {
    const sim::SimCase c = pm_case(seed, variant);
    const scenarios::RunResult run = run_quick(c);
    const Property* caught = nullptr;
    for (const properties::Finding& f : run.report.violations) {
      if (catching.count(f.property) > 0) {
        caught = &f.property;
        break;
      }
    }
    if (caught == nullptr) continue;
    std::cout << "variant " << variant << " caught on process-manager cases at seed " << seed
              << " (" << seed - kSeedFirst + 1 << " seeds) by "
              << properties::property_name(*caught) << "; violated: " << violated_names(run.report)
              << "\n";
    // The case file keeps the process manager: loaded back, the case violates it again.
    std::string dir = ::testing::TempDir() + "seqby-hunted-pm.XXXXXX";
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    const std::string path = dir + "/" + variant + ".json";
    ASSERT_TRUE(scenarios::save_case(c, path).ok());
    const Result<sim::SimCase> loaded = scenarios::load_case(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded.value().pm_categories, c.pm_categories);
    EXPECT_TRUE(run_quick(loaded.value()).report.status(*caught).violated());
    std::filesystem::remove_all(dir);
    return;
  }
  FAIL() << variant << " held on process-manager cases over seeds " << kSeedFirst << ".."
         << kPmSeedLast;
}

INSTANTIATE_TEST_SUITE_P(AllBroken, VariantsHuntedPm, ::testing::ValuesIn(broken_variants()),
                         [](const auto& info) { return info.param; });

TEST(VariantsHuntedPm, CorrectHoldsOnTheSameSeeds) {
  for (std::uint64_t seed = kSeedFirst; seed <= kPmSeedLast; ++seed) {
    const scenarios::RunResult run = run_quick(pm_case(seed, "correct"));
    EXPECT_TRUE(run.report.status(Property::pm_exclusion).checked) << "seed " << seed;
    EXPECT_TRUE(run.passed) << "seed " << seed << ": " << run.summary;
  }
}

}  // namespace
}  // namespace seqby
