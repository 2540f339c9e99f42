// The four broker-free scenarios of the ADR's acceptance list, run as `seqby scenario run NAME`
// would run them: each passes, and its printed checks name every rule it covers.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {
namespace {

std::string run(std::string_view name) {
  const Scenario* scenario = find_scenario(name);
  EXPECT_NE(scenario, nullptr) << name;
  if (!scenario) return {};
  EXPECT_TRUE(scenario->run_sim != nullptr);
  std::ostringstream out;
  ScenarioContext ctx{out, "", 1, ""};
  ScenarioResult result = scenario->run_sim(ctx);
  EXPECT_TRUE(result.passed()) << out.str();
  EXPECT_EQ(out.str().find("FAIL"), std::string::npos) << out.str();
  return out.str();
}

void expect_mentions(const std::string& out, const std::vector<std::string>& needles) {
  for (const std::string& needle : needles) {
    EXPECT_NE(out.find(needle), std::string::npos) << "missing \"" << needle << "\" in\n" << out;
  }
}

TEST(DomainScenarios, RegistrationValidation) {
  const std::string out = run("registration_validation");
  expect_mentions(out, {"ok  handler 'notify' sequential_by=client_id on type without client_id: "
                        "rejected at registration: handler 'notify' declares "
                        "sequential_by=\"client_id\" but event type 'AccountOpened' (category "
                        "'account') has no field 'client_id'",
                        "correlate spec has no entry for handled type 'PaymentReceived'",
                        "which the type does not have", "only a process manager may",
                        "ok  handler 'notify' sequential_by=client_id on types that carry"});
}

TEST(DomainScenarios, CapabilityGating) {
  const std::string out = run("capability_gating");
  expect_mentions(out,
                  {"does not advertise STREAM_PARTITIONING", "inline broker", "accepted as a no-op",
                   "in submission order", "at most 1 in the handler at once"});
}

TEST(DomainScenarios, OneKeyPerCategory) {
  const std::string out = run("one_key_per_category");
  expect_mentions(
      out, {"ok  handlers by_client then by_order", "ok  handlers by_order then by_client",
            "ok  handler by_client then process manager",
            "ok  process manager correlating 'order' by order_id then handler",
            "a category is partitioned by exactly one key", "its correlation field 'order_id'"});
}

TEST(DomainScenarios, UnsafeKeys) {
  const std::string out = run("unsafe_keys");
  expect_mentions(out, {"rule not_null", "rule not_empty", "rule no_colon", "rule not_reserved",
                        "\"dlq\"", "\"backfill\"", "\"__partitions__\"", "rule not_sentinel",
                        "rule max_length", "rule no_control_chars", "no outbox record created",
                        "ABANDONED", "records behind the abandoned one still publish"});
}

}  // namespace
}  // namespace seqby::scenarios
