// One short `seqby chaos` run as CI runs it (make test, label redis): real worker processes on a
// private redis-server chaos starts itself, every nemesis striking at least once, then healing,
// the liveness phase and the judges. The run must hold (exit 0) with every nemesis fired, and
// commit every committable event it published; its --junit report is that one passing seed. A
// second run's workers batch their steps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

TEST(CliChaosRun, EveryNemesisFiresAndTheRunHolds) {
  const std::string failures = std::string(SEQBY_BINARY_DIR) + "/chaos-failures";
  const std::string junit = std::string(SEQBY_BINARY_DIR) + "/chaos-junit.xml";
  std::filesystem::remove(junit);
  const auto run = run_seqby({"chaos", "--seed", "1", "--duration-s", "15", "--json",
                              "--save-failures", failures, "--junit", junit});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::ifstream report(junit);
  std::ostringstream xml;
  xml << report.rdbuf();
  EXPECT_NE(xml.str().find("tests=\"1\" failures=\"0\""), std::string::npos) << xml.str();
  EXPECT_NE(xml.str().find("classname=\"seqby.chaos\" name=\"seed 1\""), std::string::npos)
      << xml.str();
  const auto summary = nlohmann::json::parse(run.out);
  EXPECT_EQ(summary["runs"], 1);
  EXPECT_EQ(summary["failed"], 0);
  EXPECT_TRUE(summary["violations"].empty()) << run.out;
  for (const char* kind :
       {"kill", "stop", "client_kill", "client_pause", "server_restart", "script_flush", "proxy"}) {
    EXPECT_GE(summary["faults"][kind].get<int>(), 1) << kind << " never fired:\n" << run.out;
  }
  EXPECT_GT(summary["events_published"].get<int>(), 0);
  EXPECT_GT(summary["events_committed"].get<int>(), 0);
  EXPECT_GE(summary["properties_checked"]["sink_order"].get<int>(), 1);
  EXPECT_GE(summary["properties_checked"]["sink_no_loss"].get<int>(), 1);
}

// The same with workers that carry the steps of many partitions in one script
// (--step-batch-max: fenced_steps, each step journaled by its own part of it): the judges read
// the journals those scripts wrote.
TEST(CliChaosRun, WorkersThatBatchTheirStepsHoldTheRun) {
  const std::string failures = std::string(SEQBY_BINARY_DIR) + "/chaos-failures-batched";
  const auto run = run_seqby({"chaos", "--seed", "2", "--duration-s", "10", "--keys", "16",
                              "--step-batch-max", "32", "--json", "--save-failures", failures});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const auto summary = nlohmann::json::parse(run.out);
  EXPECT_EQ(summary["runs"], 1);
  EXPECT_EQ(summary["failed"], 0);
  EXPECT_TRUE(summary["violations"].empty()) << run.out;
  EXPECT_GT(summary["events_committed"].get<int>(), 0);
  EXPECT_GE(summary["properties_checked"]["order"].get<int>(), 1);
}

}  // namespace
}  // namespace seqby::apps
