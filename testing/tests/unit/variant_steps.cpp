// seqby::testing's variants: every name parses back to its variant, make_engine_steps gives each
// one its steps (a broken engine step is a derived EngineSteps, a broken broker step keeps the
// design's) and redis_broker_options_for its broker options (the defaults but for the unfenced
// scripts and the group at `$`).
#include <gtest/gtest.h>

#include <string>
#include <typeinfo>

#include "seqby/testing/variant.h"

namespace seqby::testing {
namespace {

TEST(VariantSteps, EveryNameParsesBackAndAnUnknownOneIsRefused) {
  ASSERT_EQ(all_variants().size(), 8u);
  EXPECT_EQ(all_variants().front(), Variant::correct);
  for (const Variant variant : all_variants()) {
    EXPECT_EQ(parse_variant(variant_name(variant)), variant) << variant_name(variant);
  }
  EXPECT_FALSE(parse_variant("no_fencing").has_value());
  EXPECT_FALSE(parse_variant("").has_value());
}

TEST(VariantSteps, EveryVariantHasItsSteps) {
  for (const Variant variant : all_variants()) {
    const std::unique_ptr<EngineSteps> steps = make_engine_steps(variant);
    ASSERT_NE(steps, nullptr) << variant_name(variant);
    // Broken in the engine: its own steps; broken in the broker (or correct): the design's.
    const bool in_broker = variant == Variant::correct || variant == Variant::no_fence ||
                           variant == Variant::group_at_dollar;
    EXPECT_EQ(typeid(*steps) == typeid(EngineSteps), in_broker) << variant_name(variant);
  }
}

TEST(VariantSteps, OnlyTheUnfencedVariantsRunTheUnfencedScripts) {
  const redis::RedisBrokerOptions design;
  for (const Variant variant : all_variants()) {
    const redis::RedisBrokerOptions options = redis_broker_options_for(variant);
    const bool unfenced = variant == Variant::no_fence || variant == Variant::shared_group ||
                          variant == Variant::message_lock;
    EXPECT_EQ(options.unfenced, unfenced) << variant_name(variant);
    EXPECT_EQ(options.group_start_id, variant == Variant::group_at_dollar ? "$" : "0")
        << variant_name(variant);
    EXPECT_EQ(options.reclaim_count_per_call, design.reclaim_count_per_call);
  }
  EXPECT_FALSE(design.unfenced);
  EXPECT_EQ(design.group_start_id, "0");
}

}  // namespace
}  // namespace seqby::testing
