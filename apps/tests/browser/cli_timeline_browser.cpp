// The timeline page in a real browser: Debian's headless Chromium loads the page `seqby sim`
// wrote beside a failing no_fence case, runs its script, and dumps the DOM (--dump-dom). The
// witness marks must be there, carry exactly the record indexes `seqby check --json` names for
// each violated property, and be highlighted; a passing history's page shows no violation. The
// time to first paint of a 50,000-record history is printed (a figure, never an assertion).
// Each browser gets a private --user-data-dir, runs in its own process group and is killed by
// that group's id when it overruns its time limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"

extern char** environ;

namespace seqby::apps {
namespace {

namespace fs = std::filesystem;
using apps::testing::run_seqby;
using apps::testing::slurp;

constexpr int kBrowserSecondsMax = 90;

// The chromium binary on PATH, or "".
std::string find_chromium() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path candidate = fs::path(dir) / name;
      if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
  }
  return "";
}

struct BrowserRun {
  bool finished = false;  // exited by itself within the time limit
  int exit_code = -1;
  std::string out;
};

// Runs headless chromium with `args` (after the common flags), stdout captured, in a process
// group of its own; kills that group when it runs past kBrowserSecondsMax.
BrowserRun run_chromium(const std::string& binary, const std::string& profile_dir,
                        const std::vector<std::string>& args) {
  std::vector<std::string> all = {binary,
                                  "--headless",
                                  "--disable-gpu",
                                  "--no-sandbox",
                                  "--no-first-run",
                                  "--disable-dev-shm-usage",
                                  "--user-data-dir=" + profile_dir};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out_path = profile_dir + "/stdout.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  BrowserRun run;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) return run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kBrowserSecondsMax);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      run.finished = true;
      run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(-pid, SIGKILL);  // helpers the browser left behind in its group, if any
  run.out = slurp(out_path);
  return run;
}

struct Witness {
  std::uint64_t record = 0;
  std::string property;
  std::string classes;
};

// The div.witness elements of a dumped DOM.
std::vector<Witness> witnesses_in(const std::string& dom) {
  std::vector<Witness> out;
  const std::regex div(
      R"re(<div class="(witness[^"]*)" data-record="(\d+)" data-property="([a-z_]+)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), div); it != std::sregex_iterator();
       ++it) {
    out.push_back(Witness{std::stoull((*it)[2]), (*it)[3], (*it)[1]});
  }
  return out;
}

// (property, witnesses as "a b c") of each div.violation.
std::vector<std::pair<std::string, std::string>> violations_in(const std::string& dom) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::regex div(
      R"re(<div class="violation" data-property="([a-z_]+)" data-witnesses="([0-9 ]*)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), div); it != std::sregex_iterator();
       ++it) {
    out.emplace_back((*it)[1], (*it)[2]);
  }
  return out;
}

std::string body_attribute(const std::string& dom, const std::string& name) {
  const std::regex body("<body[^>]*\\s" + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(dom, m, body) ? m[1].str() : "";
}

class TimelineInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    ASSERT_FALSE(chromium_.empty())
        << "chromium not found on PATH: this test needs Debian's chromium package "
           "(apt-get install chromium; make deps installs it)";
    std::string pattern = ::testing::TempDir() + "seqby-browser.XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The DOM of `page` after its script ran.
  std::string dump_dom(const std::string& page) {
    const std::string profile = dir_ + "/profile-" + std::to_string(++profiles_);
    fs::create_directories(profile);
    const BrowserRun run = run_chromium(chromium_, profile, {"--dump-dom", "file://" + page});
    EXPECT_TRUE(run.finished) << "chromium ran past " << kBrowserSecondsMax << " s on " << page;
    EXPECT_EQ(run.exit_code, 0);
    return run.out;
  }
  // A passing or failing history written by an in-process run of generated case `seed`.
  std::string write_history(const std::vector<HistoryRecord>& history, const std::string& name) {
    const std::string path = dir_ + "/" + name;
    std::ofstream file(path, std::ios::binary);
    properties::write_history(file, history);
    return path;
  }

  std::string chromium_;
  std::string dir_;
  int profiles_ = 0;
};

TEST_F(TimelineInBrowser, WitnessMarksOfAFailingRunCarryTheCheckersRecordsHighlighted) {
  // Seed 0 of the no_fence variant fails fence: a stale owner's ack and read are accepted.
  const auto sim = run_seqby(
      {"sim", "--variant", "no_fence", "--seed", "0", "--save-failures", dir_ + "/failures"});
  ASSERT_EQ(sim.exit_code, 1) << sim.out << sim.err;
  const std::string page = dir_ + "/failures/seed-0.html";
  ASSERT_NE(sim.out.find("timeline: " + page + "\n"), std::string::npos) << sim.out;
  const auto check = run_seqby({"check", dir_ + "/failures/seed-0.jsonl", "--json"});
  ASSERT_EQ(check.exit_code, 1) << check.err;
  const nlohmann::json report = nlohmann::json::parse(check.out);
  ASSERT_FALSE(report["violations"].empty());

  const std::string dom = dump_dom(page);
  ASSERT_EQ(body_attribute(dom, "data-rendered"), "true") << dom.substr(0, 2000);

  // One div.violation per violation, in the checker's order, naming its witnesses.
  const auto violations = violations_in(dom);
  ASSERT_EQ(violations.size(), report["violations"].size());
  std::set<std::pair<std::string, std::uint64_t>> expected;
  for (std::size_t i = 0; i < violations.size(); ++i) {
    const nlohmann::json& v = report["violations"][i];
    std::string witnesses;
    for (const auto& w : v["witnesses"]) {
      witnesses += (witnesses.empty() ? "" : " ") + std::to_string(w.get<std::uint64_t>());
      expected.emplace(v["property"].get<std::string>(), w.get<std::uint64_t>());
    }
    EXPECT_EQ(violations[i].first, v["property"].get<std::string>());
    EXPECT_EQ(violations[i].second, witnesses);
  }
  EXPECT_NE(dom.find("stale owner's steps must be refused"), std::string::npos);

  // The witness marks: exactly the checker's (property, record) pairs, every one highlighted.
  const std::vector<Witness> marks = witnesses_in(dom);
  std::set<std::pair<std::string, std::uint64_t>> shown;
  for (const Witness& w : marks) {
    shown.emplace(w.property, w.record);
    EXPECT_NE((" " + w.classes + " ").find(" highlighted "), std::string::npos)
        << "witness #" << w.record << " is not highlighted: class=\"" << w.classes << "\"";
  }
  EXPECT_EQ(shown, expected);
  std::cout << "witness marks: " << marks.size() << " for " << violations.size() << " violations\n";
}

TEST_F(TimelineInBrowser, APassingRunShowsNoViolation) {
  const scenarios::RunResult run = scenarios::run_case(sim::generate_case(1));
  ASSERT_TRUE(run.passed) << run.summary;
  const std::string history = write_history(run.history, "passing.jsonl");
  const auto timeline = run_seqby({"timeline", history});
  ASSERT_EQ(timeline.exit_code, 0) << timeline.err;

  const std::string dom = dump_dom(dir_ + "/passing.html");
  ASSERT_EQ(body_attribute(dom, "data-rendered"), "true") << dom.substr(0, 2000);
  EXPECT_TRUE(violations_in(dom).empty());
  EXPECT_TRUE(witnesses_in(dom).empty());
  EXPECT_EQ(dom.find("class=\"violation"), std::string::npos);
  EXPECT_NE(dom.find("<div id=\"violations\" data-count=\"0\" class=\"ok\">No property violated."),
            std::string::npos);
}

TEST_F(TimelineInBrowser, FiftyThousandRecordsRenderAndTheirFirstPaintIsMeasured) {
  sim::CaseTemplate t;
  t.event_count = 8'000;
  t.publish_span_ms = 160'000;
  t.run_ms = 170'000;
  scenarios::RunOptions quick;
  quick.compute_history_sha256 = false;
  scenarios::RunResult run = scenarios::run_case(sim::generate_case(3, t), quick);
  ASSERT_GE(run.history.size(), 50'000u);
  run.history.resize(50'000);
  const std::string history = write_history(run.history, "large.jsonl");
  const auto timeline = run_seqby({"timeline", history});
  ASSERT_EQ(timeline.exit_code, 0) << timeline.err;

  const auto start = std::chrono::steady_clock::now();
  const std::string dom = dump_dom(dir_ + "/large.html");
  const auto browser_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  ASSERT_EQ(body_attribute(dom, "data-rendered"), "true");
  EXPECT_EQ(body_attribute(dom, "data-records"), "50000");
  std::cout << "first paint of 50000 records: " << body_attribute(dom, "data-first-paint-ms")
            << " ms after navigation start (JSON parse " << body_attribute(dom, "data-parse-ms")
            << " ms; page " << fs::file_size(dir_ + "/large.html") / 1024
            << " KiB; whole headless chromium run " << browser_ms << " ms)\n";
}

}  // namespace
}  // namespace seqby::apps
