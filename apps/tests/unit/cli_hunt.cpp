// `seqby hunt --variant NAME [--seeds A..B] [--property P] [--json] [--save DIR]`: exit 1 with a
// saved, shrunk counterexample that `seqby replay` reproduces to the same history; exit 0 when the
// range holds none; exit 2 for bad usage, naming the known variants.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_run.h"
#include "seqby/testing/variant.h"
#include "temp_dir_test.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;
using testing::slurp;

using CliHunt = testing::TempDirTest;

TEST_F(CliHunt, UnknownVariantExitsTwoNamingTheKnownOnes) {
  const auto run = run_seqby({"hunt", "--variant", "no_such"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--variant 'no_such': unknown variant (known: "), std::string::npos)
      << run.err;
  for (seqby::testing::Variant v : seqby::testing::all_variants()) {
    EXPECT_NE(run.err.find(std::string(seqby::testing::variant_name(v))), std::string::npos)
        << run.err;
  }
}

TEST_F(CliHunt, MissingVariantOrBadSeedsExitTwo) {
  EXPECT_EQ(run_seqby({"hunt"}).exit_code, 2);
  const auto run = run_seqby({"hunt", "--variant", "no_fence", "--seeds", "9..3"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("9..3"), std::string::npos) << run.err;
}

TEST_F(CliHunt, UnknownPropertyExitsTwoNamingTheKnownOnes) {
  const auto run = run_seqby({"hunt", "--variant", "no_fence", "--property", "speed"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--property 'speed': unknown property (known: order, fence, exclusion"),
            std::string::npos)
      << run.err;
}

TEST_F(CliHunt, PropertyNamesWhatCountsAsACounterexample) {
  const auto run = run_seqby({"hunt", "--variant", "shared_group", "--property", "exclusion",
                              "--seeds", "1..60", "--json", "--save", dir_});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["property"], "exclusion");
  EXPECT_EQ(j["correct_passes_shrunk"], true);
}

TEST_F(CliHunt, CorrectHoldsOverTheRangeAndExitsZero) {
  const auto run = run_seqby({"hunt", "--variant", "correct", "--seeds", "1..5", "--save", dir_});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(run.out.rfind("hunt: variant correct, 5 seeds tried, ", 0), 0u) << run.out;
  EXPECT_TRUE(run.out.ends_with(" ms\nno counterexample found\n")) << run.out;
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(CliHunt, NoFenceTextNamesThePropertySizesWitnessesAndReplayLine) {
  const auto run = run_seqby({"hunt", "--variant", "no_fence", "--seeds", "1..60", "--save", dir_});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  for (const char* part :
       {"found: seed ", "original: events=", "shrunk:   events=", "witness records:\n  #",
        "faults of the shrunk case:\n", "replay: seqby replay "}) {
    EXPECT_NE(run.out.find(part), std::string::npos) << part << " in\n" << run.out;
  }
}

TEST_F(CliHunt, JsonCounterexampleReplaysToTheSavedHistory) {
  const auto run = run_seqby(
      {"hunt", "--variant", "dlq_continue", "--seeds", "1..60", "--json", "--save", dir_});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["variant"], "dlq_continue");
  EXPECT_EQ(j["found"], true);
  EXPECT_EQ(j["property"], "poison_halt");
  EXPECT_LE(j["seed"].get<std::uint64_t>(), 60u);
  EXPECT_EQ(j["seeds_tried"], j["seed"]);
  for (const char* size : {"original", "shrunk"}) {
    for (const char* field : {"events", "faults", "instances", "keys"}) {
      EXPECT_TRUE(j[size][field].is_number_unsigned()) << size << "." << field;
    }
  }
  EXPECT_LE(j["shrunk"]["events"], j["original"]["events"]);
  EXPECT_TRUE(j["shrink_runs"].is_number_unsigned());
  EXPECT_TRUE(j["wall_ms"].is_number_unsigned());
  const std::string case_path = j["case_path"];
  EXPECT_EQ(j["replay"], "seqby replay " + case_path);

  const std::string replayed = dir_ + "/replayed.jsonl";
  const auto replay = run_seqby({"replay", case_path, "--history", replayed});
  EXPECT_EQ(replay.exit_code, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("poison_halt   VIOLATED"), std::string::npos) << replay.out;
  EXPECT_EQ(slurp(replayed), slurp(j["history_path"].get<std::string>()));
}

}  // namespace
}  // namespace seqby::apps
