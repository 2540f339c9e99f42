// One short `seqby chaos` run as CI runs it (make test, label redis): real worker processes on a
// private redis-server chaos starts itself, every nemesis striking at least once, then healing,
// the liveness phase and the judges. The run must hold (exit 0) with every nemesis fired, and
// commit every committable event it published.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "../unit/cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

TEST(CliChaosRun, EveryNemesisFiresAndTheRunHolds) {
  const std::string failures = std::string(SEQBY_BINARY_DIR) + "/chaos-failures";
  const auto run = run_seqby(
      {"chaos", "--seed", "1", "--duration-s", "15", "--json", "--save-failures", failures});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
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

}  // namespace
}  // namespace seqby::apps
