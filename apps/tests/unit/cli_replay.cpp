// seqby replay of a case a simulated-cluster run saved (`seqby sim --key-layout cluster
// --cluster-shards N`): a case file names its case, not the server it ran on, so the replay line
// carries the server's flags, and the replay with them gives the very history the failing run
// saved; without them the case runs on one flat server, where it is another run (a cluster-only
// failure used to "replay" there and pass). Bad server flags are exit status 2.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "cli_run.h"
#include "temp_dir_test.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;
using testing::slurp;

using CliReplay = testing::TempDirTest;

TEST_F(CliReplay, ACaseSavedOnASimulatedClusterReplaysItsHistoryWithTheFlagsOfItsReplayLine) {
  // no_fence fails on most seeds of a simulated cluster too.
  const auto sim =
      run_seqby({"sim", "--seeds", "1..8", "--key-layout", "cluster", "--cluster-shards", "3",
                 "--variant", "no_fence", "--save-failures", dir_});
  ASSERT_EQ(sim.exit_code, 1) << sim.out << sim.err;
  std::smatch m;
  const std::regex line(
      "replay: seqby replay (\\S+\\.json) --key-layout cluster --cluster-shards 3\n");
  ASSERT_TRUE(std::regex_search(sim.out, m, line)) << sim.out;
  const std::string case_path = m[1].str();
  const std::string saved_history = case_path.substr(0, case_path.size() - 5) + ".jsonl";
  ASSERT_FALSE(slurp(saved_history).empty()) << saved_history;

  const std::string replayed = dir_ + "/replayed.jsonl";
  const auto replay = run_seqby({"replay", case_path, "--key-layout", "cluster", "--cluster-shards",
                                 "3", "--history", replayed});
  EXPECT_EQ(replay.exit_code, 1) << replay.out << replay.err;
  EXPECT_EQ(slurp(replayed), slurp(saved_history)) << "the replay is another run";
  EXPECT_NE(replay.out.find("replay: seqby replay " + case_path +
                            " --key-layout cluster --cluster-shards 3\n"),
            std::string::npos)
      << replay.out;

  const std::string flat = dir_ + "/flat.jsonl";
  const auto on_one_server = run_seqby({"replay", case_path, "--history", flat});
  EXPECT_NE(on_one_server.exit_code, 2) << on_one_server.err;
  EXPECT_NE(slurp(flat), slurp(saved_history))
      << "on one flat server the case ran exactly as on the simulated cluster";
}

TEST_F(CliReplay, BadServerFlagsAreExitTwoNamingTheFlag) {
  const std::string case_path = dir_ + "/none.json";
  std::ofstream(case_path) << "{}";
  const auto layout = run_seqby({"replay", case_path, "--key-layout", "ring"});
  EXPECT_EQ(layout.exit_code, 2);
  EXPECT_NE(layout.err.find("seqby replay: --key-layout 'ring': unknown layout"), std::string::npos)
      << layout.err;
  const auto shards = run_seqby({"replay", case_path, "--cluster-shards", "3"});
  EXPECT_EQ(shards.exit_code, 2);
  EXPECT_NE(shards.err.find("seqby replay: --cluster-shards 3: a simulated cluster needs "
                            "--key-layout cluster"),
            std::string::npos)
      << shards.err;
}

}  // namespace
}  // namespace seqby::apps
