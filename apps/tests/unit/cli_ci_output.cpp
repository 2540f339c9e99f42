// CI-native output (issue 16 item 4): `--junit FILE` on `seqby sim`, `hunt` and `scenario run`
// writes one test case per seed or scenario, a failing one carrying its violation and replay
// line; `sim --shard I/N` splits a seed range into disjoint parts that cover it; the progress
// line (seeds done, failures, ETA) appears on a terminal and nothing but the summary otherwise.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "temp_dir_test.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;
using testing::slurp;

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The <testcase> element of `name` (up to its end), "" when there is none.
std::string testcase_of(const std::string& xml, const std::string& name) {
  const std::size_t at = xml.find("name=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const std::size_t self_closed = xml.find("/>", at);
  const std::size_t closed = xml.find("</testcase>", at);
  const std::size_t open_end = xml.find('>', at);
  if (self_closed != std::string::npos && self_closed < open_end + 1) {
    return xml.substr(at, self_closed - at + 2);
  }
  return closed == std::string::npos ? "" : xml.substr(at, closed - at);
}

using CliCiOutput = testing::TempDirTest;

TEST_F(CliCiOutput, SimJunitHasOneCasePerSeedAndEachFailureCarriesItsViolationAndReplayLine) {
  const std::string junit = dir_ + "/sim.xml";
  const auto run = run_seqby({"sim", "--seeds", "0..3", "--variant", "no_fence", "--json",
                              "--save-failures", dir_ + "/failures", "--junit", junit});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const nlohmann::json summary = nlohmann::json::parse(run.out);
  const std::vector<std::uint64_t> failed = summary["failed_seeds"];
  ASSERT_FALSE(failed.empty()) << "no_fence is caught on some of seeds 0..3";
  const std::string xml = slurp(junit);
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 0), 0u);
  EXPECT_EQ(count_of(xml, "<testcase "), 4u) << xml;
  EXPECT_EQ(count_of(xml, "<failure "), failed.size()) << xml;
  EXPECT_NE(xml.find("tests=\"4\" failures=\"" + std::to_string(failed.size()) + "\""),
            std::string::npos);
  const std::set<std::uint64_t> failing(failed.begin(), failed.end());
  for (std::uint64_t seed = 0; seed <= 3; ++seed) {
    const std::string element = testcase_of(xml, "seed " + std::to_string(seed));
    ASSERT_FALSE(element.empty()) << "seed " << seed << " has no test case:\n" << xml;
    if (failing.count(seed) == 0) {
      EXPECT_EQ(element.find("<failure"), std::string::npos) << element;
      continue;
    }
    // The message is the seed's first violation; the details hold every one.
    const nlohmann::json* first = nullptr;
    for (const nlohmann::json& v : summary["violations"]) {
      if (v["seed"] == seed && first == nullptr) first = &v;
    }
    ASSERT_NE(first, nullptr) << "seed " << seed << " failed with no violation in --json";
    const std::string property = (*first)["property"];
    const std::string key = (*first)["key"];
    EXPECT_NE(element.find("<failure message=\"" + property + " key " + key + ": "),
              std::string::npos)
        << element;
    EXPECT_NE(element.find("violation: seed " + std::to_string(seed) + " " + property),
              std::string::npos)
        << element;
    EXPECT_NE(element.find("replay: seqby replay " + dir_ + "/failures/seed-" +
                           std::to_string(seed) + ".json"),
              std::string::npos)
        << element;
    EXPECT_NE(
        element.find("rerun:  seqby sim --seed " + std::to_string(seed) + " --variant no_fence"),
        std::string::npos)
        << element;
  }
  // Escaped: no explanation's quote reaches the XML raw (fence explanations say "a stale
  // owner's steps").
  EXPECT_EQ(xml.find("owner's"), std::string::npos);
  if (run.out.find("owner's") != std::string::npos) {
    EXPECT_NE(xml.find("owner&apos;s"), std::string::npos);
  }
}

TEST_F(CliCiOutput, PassingSimJunitHasNoFailure) {
  const std::string junit = dir_ + "/ok.xml";
  const auto run = run_seqby({"sim", "--seeds", "5..6", "--junit", junit});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string xml = slurp(junit);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"0\""), std::string::npos) << xml;
  EXPECT_EQ(count_of(xml, "<failure"), 0u);
  EXPECT_FALSE(testcase_of(xml, "seed 5").empty());
  EXPECT_FALSE(testcase_of(xml, "seed 6").empty());
}

TEST_F(CliCiOutput, ShardsOfARangeAreDisjointAndCoverIt) {
  std::set<std::uint64_t> seen;
  std::uint64_t runs = 0;
  const std::regex said(R"(shard (\d+)/3: seeds (\d+)\.\.(\d+))");
  for (int shard = 1; shard <= 3; ++shard) {
    const auto run =
        run_seqby({"sim", "--seeds", "10..17", "--shard", std::to_string(shard) + "/3", "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    runs += nlohmann::json::parse(run.out)["runs"].get<std::uint64_t>();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(run.err, match, said)) << run.err;
    EXPECT_EQ(match[1].str(), std::to_string(shard));
    const std::uint64_t first = std::stoull(match[2].str());
    const std::uint64_t last = std::stoull(match[3].str());
    ASSERT_LE(first, last);
    for (std::uint64_t seed = first; seed <= last; ++seed) {
      EXPECT_TRUE(seen.insert(seed).second) << "seed " << seed << " is in two shards";
    }
  }
  EXPECT_EQ(runs, 8u);
  EXPECT_EQ(seen, (std::set<std::uint64_t>{10, 11, 12, 13, 14, 15, 16, 17}));
}

TEST_F(CliCiOutput, BadShardOrJunitPathExitsTwoNamingItAndRunsNothing) {
  for (const std::string shard : {"0/3", "4/3", "a/3", "3", "9/9"}) {
    const auto run = run_seqby({"sim", "--seeds", "1..4", "--shard", shard});
    EXPECT_EQ(run.exit_code, 2) << shard;
    EXPECT_NE(run.err.find("--shard '" + shard + "'"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "") << shard;
  }
  const std::string missing = dir_ + "/no/such/dir/out.xml";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"sim", "--seed", "1", "--junit", missing},
        std::vector<std::string>{"hunt", "--variant", "no_fence", "--seeds", "1..2", "--junit",
                                 missing},
        std::vector<std::string>{"scenario", "run", "per_key_order", "--junit", missing}}) {
    const auto run = run_seqby(command);
    EXPECT_EQ(run.exit_code, 2) << command[0];
    EXPECT_NE(run.err.find("--junit '" + missing + "'"), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "") << command[0] << " ran before refusing its --junit path";
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/no"));
}

TEST_F(CliCiOutput, HuntJunitHasEverySearchedSeedAndTheCounterexampleWithItsReplayLine) {
  const std::string junit = dir_ + "/hunt.xml";
  const auto run = run_seqby({"hunt", "--variant", "no_fence", "--seeds", "1..40", "--json",
                              "--save", dir_ + "/saved", "--junit", junit});
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const nlohmann::json summary = nlohmann::json::parse(run.out);
  const std::uint64_t seed = summary["seed"];
  const std::uint64_t tried = summary["seeds_tried"];
  const std::string xml = slurp(junit);
  EXPECT_EQ(count_of(xml, "<testcase "), tried) << xml;
  EXPECT_EQ(count_of(xml, "<failure "), 1u) << xml;
  const std::string element = testcase_of(xml, "seed " + std::to_string(seed));
  EXPECT_NE(element.find("no_fence violates " + summary["property"].get<std::string>()),
            std::string::npos)
      << element;
  EXPECT_NE(element.find("replay: seqby replay " + summary["case_path"].get<std::string>()),
            std::string::npos)
      << element;
}

TEST_F(CliCiOutput, ScenarioRunJunitIsOneCase) {
  const std::string junit = dir_ + "/scenario.xml";
  const auto run = run_seqby({"scenario", "run", "per_key_order", "--junit", junit});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string xml = slurp(junit);
  EXPECT_EQ(count_of(xml, "<testcase "), 1u) << xml;
  EXPECT_FALSE(testcase_of(xml, "per_key_order (sim, seed 1)").empty()) << xml;
  EXPECT_EQ(count_of(xml, "<failure"), 0u);
}

// What the runs reached (properties/reached.h), in --json and in the text summary; what the
// default generator never reaches (no operator acts in its cases, no partition is reaped) is
// said under "reached never", as faults that never fired are.
TEST_F(CliCiOutput, SummaryCountsTheReachedSituationsAndNamesTheUnreached) {
  const auto json = run_seqby({"sim", "--seeds", "0..2", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json reached = nlohmann::json::parse(json.out)["reached"];
  for (const char* name : {"stale_owner_refused", "reclaim_moved", "commit_reply_lost",
                           "rerun_after_failover", "halt_resolved_by_skip", "halt_resolved_by_dlq",
                           "reap_raced_publish", "pm_switched_streams", "instances_in_parallel"}) {
    ASSERT_TRUE(reached.contains(name)) << name << " missing from " << reached.dump();
  }
  EXPECT_GT(reached["stale_owner_refused"].get<int>(), 0) << reached.dump();
  EXPECT_GT(reached["instances_in_parallel"].get<int>(), 0) << reached.dump();
  EXPECT_EQ(reached["pm_switched_streams"].get<int>(), 0) << "no process manager in these cases";

  const auto text = run_seqby({"sim", "--seeds", "0..2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("\nreached: stale_owner_refused=" +
                          std::to_string(reached["stale_owner_refused"].get<int>()) + " "),
            std::string::npos)
      << text.out;
  EXPECT_TRUE(
      std::regex_search(text.out, std::regex("\nreached never: [a-z_ ]*pm_switched_streams")))
      << text.out;
}

// Through a pseudo-terminal (script(1), util-linux): the progress line with seeds done, failures
// so far and an ETA. Without a terminal, stderr stays empty and stdout is the summary alone.
TEST_F(CliCiOutput, ProgressLineOnATerminalOnlyWithSeedsFailuresAndEta) {
  const std::string typescript = dir_ + "/typescript";
  const std::string command = std::string(SEQBY_BINARY_DIR) +
                              "/seqby sim --seeds 0..3 --variant no_fence --save-failures " + dir_ +
                              "/f";
  const auto through_terminal =
      std::system(("script -qfec '" + command + "' " + typescript + " > /dev/null").c_str());
  EXPECT_NE(through_terminal, -1);
  const std::string seen = slurp(typescript);
  EXPECT_NE(seen.find("4/4 seeds, "), std::string::npos) << seen;
  EXPECT_TRUE(std::regex_search(seen, std::regex(R"(4/4 seeds, [1-4] failed, ETA 0 s)"))) << seen;
  EXPECT_NE(seen.find("1/4 seeds, "), std::string::npos) << seen;

  const auto plain = run_seqby(
      {"sim", "--seeds", "0..3", "--variant", "no_fence", "--save-failures", dir_ + "/f2"});
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(plain.out.find("seeds, "), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.rfind("FAILED: 4 runs, ", 0), 0u) << plain.out;
}

}  // namespace
}  // namespace seqby::apps
