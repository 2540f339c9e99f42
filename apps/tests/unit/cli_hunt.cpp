// `seqby hunt --variant NAME [--seeds A..B] [--property P] [--json] [--save DIR]`: exit 1 with a
// saved, shrunk counterexample that `seqby replay` reproduces to the same history; exit 0 when the
// range holds none; exit 2 for bad usage, naming the known variants.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
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

// Without --property, a first failure whose witness stays over the targets does not hide a
// small witness of another property a few seeds on: the smallest is kept, and the report says
// which property each seed violates. Seeds 8001..: batch_unfenced on process-manager cases first
// fails at 8031, a lost event whose shrunk case keeps 49 events of 5 keys; seed 8041 shows the
// stale owner entering a next event in about 10. (If the simulated histories change, choose
// another range whose first failure is of one property and whose smallest witness is of
// another.)
TEST_F(CliHunt, ASmallerWitnessOfAnotherPropertyIsKeptAndSaidSo) {
  const auto run = run_seqby({"hunt", "--variant", "batch_unfenced", "--process-manager", "--seeds",
                              "8001..8200", "--json", "--save", dir_});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_NE(j["seed_property"], j["property"]) << run.out;
  EXPECT_NE(j["seed"], j["witness_seed"]);
  EXPECT_GE(j["witnesses_shrunk"].get<std::uint32_t>(), 2u);
  EXPECT_LE(j["shrunk"]["events"].get<std::uint64_t>(), 12u) << run.out;
  const std::string property = j["property"];
  EXPECT_NE(run.err.find("violates " + property + " at seed " +
                         std::to_string(j["witness_seed"].get<std::uint64_t>())),
            std::string::npos)
      << run.err;
  // The saved case is the witness: it violates the property reported, not the first seed's.
  const auto replay = run_seqby({"replay", j["case_path"].get<std::string>()});
  EXPECT_EQ(replay.exit_code, 1) << replay.out << replay.err;
  const std::string column(14 - std::min<std::size_t>(property.size(), 13), ' ');
  EXPECT_NE(replay.out.find("  " + property + column + "VIOLATED"), std::string::npos)
      << replay.out;
}

// A shrink stuck where no single reduction fails under its seed tries each under a few other
// seeds (other link draws) before giving up. Seed 7020 of batch_unfenced on process-manager cases
// (alone: no further witness) shrinks to 14 events and 5 faults under its own draws; under others
// two faults go, and the witness is within the targets (7 events, 3 faults). (If the simulated
// histories change, choose another seed whose shrink reports "the shrink moved to other link
// draws".)
TEST_F(CliHunt, AStuckShrinkDropsAFaultUnderOtherLinkDraws) {
  const auto run = run_seqby({"hunt", "--variant", "batch_unfenced", "--process-manager", "--seeds",
                              "7020..7020", "--json", "--save", dir_});
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["witnesses_shrunk"], 1);
  EXPECT_LE(j["shrunk"]["faults"].get<std::uint64_t>(), 3u) << run.out;
  EXPECT_LE(j["shrunk"]["events"].get<std::uint64_t>(), 12u) << run.out;
  const auto saved = nlohmann::json::parse(slurp(j["case_path"].get<std::string>()));
  EXPECT_NE(saved["seed"], 7020) << "the shrink never left the seed's own draw";
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
