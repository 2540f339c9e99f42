// seqby replay of a case a simulated-cluster run saved (`seqby sim --key-layout cluster
// --cluster-shards N`): the case file names the server it ran on, so `seqby replay CASE.json`
// alone gives the very history the failing run saved, and its replay line needs no flags (a
// case file that did not say so used to "replay" on one flat server, where a cluster-only
// failure passed). Flags move a case to another server, said on stderr and kept in the replay
// line. Bad server flags are exit status 2.
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

TEST_F(CliReplay, ACaseSavedOnASimulatedClusterReplaysItsHistoryWithoutFlags) {
  // no_fence fails on most seeds of a simulated cluster too.
  const auto sim =
      run_seqby({"sim", "--seeds", "1..8", "--key-layout", "cluster", "--cluster-shards", "3",
                 "--variant", "no_fence", "--save-failures", dir_});
  ASSERT_EQ(sim.exit_code, 1) << sim.out << sim.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(sim.out, m, std::regex("replay: seqby replay (\\S+\\.json)\n")))
      << sim.out;
  const std::string case_path = m[1].str();
  const std::string saved_history = case_path.substr(0, case_path.size() - 5) + ".jsonl";
  ASSERT_FALSE(slurp(saved_history).empty()) << saved_history;

  const std::string replayed = dir_ + "/replayed.jsonl";
  const auto replay = run_seqby({"replay", case_path, "--history", replayed});
  EXPECT_EQ(replay.exit_code, 1) << replay.out << replay.err;
  EXPECT_EQ(replay.err, "");
  EXPECT_EQ(slurp(replayed), slurp(saved_history)) << "the replay is another run";
  EXPECT_NE(replay.out.find("replay: seqby replay " + case_path + "\n"), std::string::npos)
      << replay.out;

  // `seqby sim --scenario CASE.json` reruns the case on its server too.
  const std::string rerun_dir = dir_ + "/rerun";
  const auto rerun = run_seqby({"sim", "--scenario", case_path, "--save-failures", rerun_dir});
  EXPECT_EQ(rerun.exit_code, 1) << rerun.out << rerun.err;
  const std::string case_name = std::filesystem::path(saved_history).filename().string();
  EXPECT_EQ(slurp(rerun_dir + "/" + case_name), slurp(saved_history));

  // The flags of the case's own server change nothing.
  const std::string same = dir_ + "/same.jsonl";
  const auto with_flags = run_seqby(
      {"replay", case_path, "--key-layout", "cluster", "--cluster-shards", "3", "--history", same});
  EXPECT_EQ(with_flags.err, "");
  EXPECT_EQ(slurp(same), slurp(saved_history));

  const std::string flat = dir_ + "/flat.jsonl";
  const auto on_one_server =
      run_seqby({"replay", case_path, "--key-layout", "flat", "--history", flat});
  EXPECT_NE(on_one_server.exit_code, 2) << on_one_server.err;
  EXPECT_NE(on_one_server.err.find("ran on '--key-layout cluster --cluster-shards 3'; replaying "
                                   "it on '--key-layout flat' as the flags ask"),
            std::string::npos)
      << on_one_server.err;
  EXPECT_NE(slurp(flat), slurp(saved_history))
      << "on one flat server the case ran exactly as on the simulated cluster";
  if (on_one_server.exit_code == 1) {
    EXPECT_NE(on_one_server.out.find("replay: seqby replay " + case_path + " --key-layout flat\n"),
              std::string::npos)
        << on_one_server.out;
  }
}

TEST_F(CliReplay, BadServerFlagsAreExitTwoNamingTheFlag) {
  const std::string case_path = dir_ + "/none.json";
  std::ofstream(case_path) << "{}";
  const auto layout = run_seqby({"replay", case_path, "--key-layout", "ring"});
  EXPECT_EQ(layout.exit_code, 2);
  EXPECT_NE(layout.err.find("seqby replay: --key-layout 'ring': unknown layout"), std::string::npos)
      << layout.err;

  // Shards on a case of one flat server: the flags name no simulated server.
  const auto sim =
      run_seqby({"sim", "--seed", "1", "--variant", "no_fence", "--save-failures", dir_});
  ASSERT_EQ(sim.exit_code, 1) << sim.out << sim.err;
  const std::string flat_case = dir_ + "/seed-1.json";
  const auto shards = run_seqby({"replay", flat_case, "--cluster-shards", "3"});
  EXPECT_EQ(shards.exit_code, 2);
  EXPECT_NE(shards.err.find("seqby replay: --key-layout flat --cluster-shards 3: a simulated "
                            "cluster of 3 shards needs the cluster key layout"),
            std::string::npos)
      << shards.err;
  EXPECT_EQ(shards.out, "");
}

}  // namespace
}  // namespace seqby::apps
