// `seqby timeline HISTORY.jsonl [-o FILE.html]`: writes one self-contained page (no network, the
// data inline and unable to end its script element early), prints "timeline: PATH", exits 2 on
// bad input with nothing written; a failing `seqby sim` and `seqby replay` write the page beside
// the saved case and print its path on the line after the replay line.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_run.h"
#include "temp_dir_test.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;
using testing::slurp;
namespace fs = std::filesystem;

// The text of the page's data element.
std::string data_of(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"timeline-data\">";
  const std::size_t at = page.find(open);
  if (at == std::string::npos) return "";
  const std::size_t end = page.find("</script>", at);
  return page.substr(at + open.size(), end - at - open.size());
}

class CliTimeline : public testing::TempDirTest {
 protected:
  // A failing no_fence seed saved under dir_/failures; returns the sim run.
  testing::RunResult failing_sim() {
    return run_seqby(
        {"sim", "--variant", "no_fence", "--seed", "0", "--save-failures", dir_ + "/failures"});
  }
};

TEST_F(CliTimeline, FailingSimWritesThePageBesideTheCaseAndPrintsItAfterTheReplayLine) {
  const auto run = failing_sim();
  ASSERT_EQ(run.exit_code, 1) << run.out << run.err;
  const std::string page_path = dir_ + "/failures/seed-0.html";
  const std::string replay = "replay: seqby replay " + dir_ + "/failures/seed-0.json\n";
  EXPECT_NE(run.out.find(replay + "timeline: " + page_path + "\n"), std::string::npos) << run.out;
  ASSERT_TRUE(fs::exists(page_path));

  const std::string page = slurp(page_path);
  const nlohmann::json data = nlohmann::json::parse(data_of(page));
  EXPECT_EQ(data["format"], "seqby-timeline-1");
  ASSERT_FALSE(data["violations"].empty());
  // The page's violations are the checker's, as `seqby check --json` names them.
  const auto check = run_seqby({"check", dir_ + "/failures/seed-0.jsonl", "--json"});
  ASSERT_EQ(check.exit_code, 1) << check.err;
  const nlohmann::json report = nlohmann::json::parse(check.out);
  ASSERT_EQ(data["violations"].size(), report["violations"].size());
  for (std::size_t i = 0; i < report["violations"].size(); ++i) {
    EXPECT_EQ(data["violations"][i]["property"], report["violations"][i]["property"]);
    EXPECT_EQ(data["violations"][i]["witnesses"], report["violations"][i]["witnesses"]);
    EXPECT_EQ(data["violations"][i]["explanation"], report["violations"][i]["explanation"]);
  }
  // 16 keys of one group: 16 lanes; every record is in the page.
  EXPECT_EQ(data["lanes"].size(), 16u);
  std::ifstream history(dir_ + "/failures/seed-0.jsonl");
  std::size_t lines = 0;
  for (std::string line; std::getline(history, line);) lines += line.empty() ? 0 : 1;
  EXPECT_EQ(data["records"].size(), lines);
}

TEST_F(CliTimeline, ThePageIsSelfContained) {
  ASSERT_EQ(failing_sim().exit_code, 1);
  const std::string page = slurp(dir_ + "/failures/seed-0.html");
  ASSERT_FALSE(page.empty());
  // No external script, style, font or image, and no network address to fetch.
  for (const char* fetch : {"src=", "<link", "@import", "url(", "http://", "https://", "//cdn"}) {
    EXPECT_EQ(page.find(fetch), std::string::npos) << "the page fetches: " << fetch;
  }
  // The data cannot end its script element early or open a comment.
  const std::string data = data_of(page);
  ASSERT_FALSE(data.empty());
  EXPECT_EQ(data.find('<'), std::string::npos);
}

TEST_F(CliTimeline, TimelineCommandWritesBesideTheHistoryOrToOut) {
  ASSERT_EQ(failing_sim().exit_code, 1);
  const std::string history = dir_ + "/failures/seed-0.jsonl";
  fs::remove(dir_ + "/failures/seed-0.html");
  auto run = run_seqby({"timeline", history});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "timeline: " + dir_ + "/failures/seed-0.html\n");
  EXPECT_TRUE(fs::exists(dir_ + "/failures/seed-0.html"));

  run = run_seqby({"timeline", history, "-o", dir_ + "/view.html"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "timeline: " + dir_ + "/view.html\n");
  // Same history, same page.
  EXPECT_EQ(slurp(dir_ + "/view.html").size(), slurp(dir_ + "/failures/seed-0.html").size());
}

TEST_F(CliTimeline, ReplayOfAFailingCaseWritesThePageAndPrintsIt) {
  ASSERT_EQ(failing_sim().exit_code, 1);
  const std::string page_path = dir_ + "/failures/seed-0.html";
  fs::remove(page_path);
  const auto run = run_seqby({"replay", dir_ + "/failures/seed-0.json"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.out.find("replay: seqby replay " + dir_ +
                         "/failures/seed-0.json\ntimeline: " + page_path + "\n"),
            std::string::npos)
      << run.out;
  EXPECT_TRUE(fs::exists(page_path));
}

TEST_F(CliTimeline, BadInputExitsTwoNamingItAndWritesNothing) {
  auto run = run_seqby({"timeline", dir_ + "/missing.jsonl"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("seqby timeline: " + dir_ + "/missing.jsonl: cannot open"),
            std::string::npos)
      << run.err;

  const std::string not_history = dir_ + "/case.jsonl";
  std::ofstream(not_history) << "{\"format\":\"seqby-case-1\"}\n";
  run = run_seqby({"timeline", not_history});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("case.jsonl:1: field 'format': unknown field"), std::string::npos)
      << run.err;

  const std::string empty = dir_ + "/empty.jsonl";
  std::ofstream{empty};
  run = run_seqby({"timeline", empty});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("no history records"), std::string::npos) << run.err;

  EXPECT_EQ(run_seqby({"timeline"}).exit_code, 2);  // HISTORY.jsonl is required
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_NE(entry.path().extension(), ".html") << entry.path();
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
}

}  // namespace
}  // namespace seqby::apps
