// `seqby scenario list | run NAME [--redis URL]`: the command reaches the scenario catalog, names
// the scenarios, and maps unknown names and bad URLs to exit status 2 (runs on a real server are
// in scenarios/tests/redis/two_instance_scenarios.cpp).
#include <gtest/gtest.h>

#include <string>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

const char* const kDomainScenarios[] = {"registration_validation", "capability_gating",
                                        "one_key_per_category", "unsafe_keys"};

TEST(CliScenario, ListNamesTheDomainScenarios) {
  const auto run = run_seqby({"scenario", "list"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* name : kDomainScenarios) {
    EXPECT_NE(run.out.find(std::string(name) + " "), std::string::npos) << name << " in\n"
                                                                        << run.out;
  }
}

TEST(CliScenario, RunUnknownNameExitsTwoListingKnownNames) {
  const auto run = run_seqby({"scenario", "run", "no_such"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown scenario 'no_such'"), std::string::npos) << run.err;
  for (const char* name : kDomainScenarios) {
    EXPECT_NE(run.err.find(name), std::string::npos) << name << " in\n" << run.err;
  }
}

TEST(CliScenario, RunWithoutNameExitsTwo) {
  const auto run = run_seqby({"scenario", "run"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("NAME is required"), std::string::npos) << run.err;
}

TEST(CliScenario, RunOnTheSimulatorPrintsItsChecksAndTheVerdict) {
  const auto run = run_seqby({"scenario", "run", "unsafe_keys", "--seed", "3"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("scenario unsafe_keys (sim, seed 3): passed\n"), std::string::npos)
      << run.out;
}

TEST(CliScenario, RunWithABadRedisUrlExitsTwoNamingIt) {
  const auto run = run_seqby({"scenario", "run", "per_key_order", "--redis", "http://nowhere"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--redis"), std::string::npos) << run.err;
}

TEST(CliScenario, ListNamesTheEngineScenarios) {
  const auto run = run_seqby({"scenario", "list"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* name : {"per_key_order", "no_concurrent_entry", "cross_key_parallelism",
                           "poison_halt", "crash_failover", "stall_failover"}) {
    EXPECT_NE(run.out.find(std::string(name) + " "), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace seqby::apps
