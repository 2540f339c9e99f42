// The places that hold engine limits take them from kEngineLimitFields, with their deliberate
// overrides only: a case (stop_wait_max_ms 30000), the real-Redis driver's workers (short
// leases). A case file's "engine" object is the table's case-file fields, in table order; a case
// runs its engine with those limits; a case's variant is a Variant, an unknown name refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seqby/core/engine_options.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {
namespace {

TEST(EngineLimitCopies, ACaseDiffersFromTheEngineDefaultsOnlyInStopWait) {
  const sim::CaseEngineOptions c;
  EngineLimits expected;
  expected.stop_wait_max_ms = 30000;
  EXPECT_EQ(static_cast<const EngineLimits&>(c), expected);
  EXPECT_EQ(EngineOptions{}.stop_wait_max_ms, 60000u);
}

TEST(EngineLimitCopies, TheDriversWorkersDifferOnlyInTheirShortLeases) {
  const WorkerSettings s;
  EngineLimits expected;
  expected.lease_ttl_ms = 1000;
  expected.heartbeat_interval_ms = 250;
  expected.discovery_interval_ms = 250;
  EXPECT_EQ(static_cast<const EngineLimits&>(s), expected);
}

TEST(EngineLimitCopies, ACaseRunsItsEngineWithTheLimitsOfItsFile) {
  sim::SimCase c = sim::generate_case(3);
  std::uint64_t value = 11;
  for (const EngineLimitField& field : kEngineLimitFields) field.set(c.engine, value++);
  c.variant = testing::Variant::no_fence;
  const EngineOptions o = sim::engine_options_for(c, "w1");
  for (const EngineLimitField& field : kEngineLimitFields) {
    const std::uint64_t expected =
        field.case_file == CaseFileField::absent ? field.default_value : field.get(c.engine);
    EXPECT_EQ(field.get(o), expected) << field.name;
  }
  // The variant is not an engine option: the world builds the instances' steps and broker
  // options from it (seqby::testing), and no_fence's are the unfenced scripts.
  EXPECT_TRUE(testing::redis_broker_options_for(c.variant).unfenced);
}

TEST(EngineLimitCopies, ACaseFilesEngineObjectIsTheTablesCaseFields) {
  const nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(case_to_json(sim::generate_case(3)));
  std::vector<std::string> names;
  for (auto it = j["engine"].begin(); it != j["engine"].end(); ++it) names.push_back(it.key());
  std::vector<std::string> expected;
  for (const EngineLimitField& field : kEngineLimitFields) {
    if (field.case_file != CaseFileField::absent) expected.emplace_back(field.name);
  }
  EXPECT_EQ(names, expected);
  EXPECT_EQ(j["engine"]["stop_wait_max_ms"], 30000);
  EXPECT_EQ(j["engine"]["poll_interval_ms"], 200);  // the generator's template
}

TEST(EngineLimitCopies, OptionalEngineFieldsMayBeLeftOffAndKeepTheirDefault) {
  sim::CaseTemplate t;
  t.beside_one_in =
      0;  // a beside group makes the case's group reap: reap_idle_ms not at its default
  sim::SimCase c = sim::generate_case(3, t);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(case_to_json(c));
  j["engine"].erase("reap_idle_ms");
  j["engine"].erase("partitions_warn_threshold");
  const Result<sim::SimCase> back = case_from_json(j.dump(2), "case.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().engine, c.engine);
  j["engine"].erase("retry_backoff_ms");
  const Result<sim::SimCase> missing = case_from_json(j.dump(2), "case.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "case.json: field 'engine.retry_backoff_ms': missing");
}

TEST(EngineLimitCopies, AVariantIsParsedWhenTheCaseIsRead) {
  sim::SimCase c = sim::generate_case(3);
  c.variant = testing::Variant::batch_unfenced;
  const std::string text = case_to_json(c);
  EXPECT_NE(text.find("\"variant\": \"batch_unfenced\""), std::string::npos);
  const Result<sim::SimCase> back = case_from_json(text, "case.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value().variant, testing::Variant::batch_unfenced);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  j["variant"] = 3;
  const Result<sim::SimCase> number = case_from_json(j.dump(2), "case.json");
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.error().message, "case.json: field 'variant': expected a string, got 3");
}

}  // namespace
}  // namespace seqby::scenarios
