// The decision journal of a real worker, read straight from Redis: `seqby check --redis` judges
// it (every property holds on a clean run) and `seqby timeline --redis` draws it as the page
// `seqby timeline` draws from a file, with every key of the run as a lane. Without a journal both
// exit 2 and say so; the page is not written. Every wait is bounded; the worker is stopped by pid.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "seqby/runtime/subprocess.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "wait_and_read.h"

namespace seqby::apps {
namespace {

using redis::Redirect;
using redis::SpawnOptions;
using redis::Subprocess;
using seqby::testing::read_file;
using seqby::testing::RedisServer;

bool wait_for(const std::function<bool()>& done, std::uint64_t max_ms) {
  return seqby::testing::wait_for(done, max_ms, 100);
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(JournalViews, CheckAndTimelineReadARealWorkersJournalFromRedis) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  char dir_template[] = "/tmp/seqby-journal-views-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string category = "jv" + std::to_string(::getpid());

  // Without a journal: exit 2, said, nothing written.
  const std::string early_page = dir + "/early.html";
  const scenarios::CommandRun none = scenarios::run_command(
      kSeqby, {"timeline", "--redis", server.url(), "--category", category, "-o", early_page});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no journal records for category " + category), std::string::npos)
      << none.err;
  EXPECT_FALSE(std::filesystem::exists(early_page));

  for (const char* key : {"a", "b", "c"}) {
    const scenarios::CommandRun published =
        scenarios::run_command(kSeqby, {"publish", "--redis", server.url(), "--category", category,
                                        "--key", key, "--count", "5", "--journal-maxlen", "10000"});
    ASSERT_EQ(published.exit_code, 0) << published.err;
  }
  SpawnOptions o;
  o.in = Redirect::null();
  o.out = Redirect::null();
  o.err = Redirect::file(dir + "/worker.log");
  Result<Subprocess> worker =
      Subprocess::spawn({kSeqby, "worker", "--redis", server.url(), "--category", category,
                         "--group", "g", "--sequential-by", "client_id", "--owner-id", "w1",
                         "--journal-maxlen", "10000", "--discovery-interval-ms", "200"},
                        o);
  ASSERT_TRUE(worker.ok()) << worker.error().message;

  // 15 accepted commits in the journal: every event handled.
  const std::string saved = dir + "/journal.jsonl";
  const bool all = wait_for(
      [&] {
        const scenarios::CommandRun check = scenarios::run_command(
            kSeqby, {"check", "--redis", server.url(), "--category", category, "--save", saved});
        return check.exit_code == 0 && count_of(read_file(saved), "\"op\":\"commit\"") >= 15;
      },
      30'000);
  EXPECT_TRUE(all) << read_file(saved) << "\n" << read_file(dir + "/worker.log");
  EXPECT_EQ(worker.value().terminate(20'000), 0) << read_file(dir + "/worker.log");

  const scenarios::CommandRun check = scenarios::run_command(
      kSeqby, {"check", "--redis", server.url(), "--category", category, "--json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const nlohmann::json report = nlohmann::json::parse(check.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << check.out;

  const std::string page = dir + "/journal.html";
  const scenarios::CommandRun drawn = scenarios::run_command(
      kSeqby, {"timeline", "--redis", server.url(), "--category", category, "-o", page});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  EXPECT_EQ(drawn.out, "timeline: " + page + "\n");
  const std::string html = read_file(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 200);
  for (const char* key : {"a", "b", "c"}) {
    EXPECT_NE(html.find("\"" + category + ":" + key), std::string::npos)
        << "no lane for key " << key;
  }
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "the page must be self-contained";

  // The same page as drawing the saved journal file.
  const scenarios::CommandRun from_file =
      scenarios::run_command(kSeqby, {"timeline", saved, "-o", dir + "/from-file.html"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_NE(read_file(dir + "/from-file.html").find("\"" + category + ":a"), std::string::npos);

  std::filesystem::remove_all(dir);
}

TEST(JournalViews, TimelineRedisOptionsThatDoNotFitExitTwo) {
  const scenarios::CommandRun both =
      scenarios::run_command(kSeqby, {"timeline", "h.jsonl", "--redis", "redis://127.0.0.1:1"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("give either HISTORY.jsonl or --redis URL"), std::string::npos)
      << both.err;
  const scenarios::CommandRun no_category =
      scenarios::run_command(kSeqby, {"timeline", "--redis", "redis://127.0.0.1:1"});
  EXPECT_EQ(no_category.exit_code, 2);
  EXPECT_NE(no_category.err.find("--category C is required"), std::string::npos) << no_category.err;
}

// --cluster reads every master's journals: a server that is no cluster node is said so (exit 2,
// nothing judged), and --cluster without --redis does not fit.
TEST(JournalViews, CheckClusterOnAServerThatIsNoClusterNodeExitsTwoNamingWhy) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const scenarios::CommandRun check = scenarios::run_command(
      kSeqby, {"check", "--redis", server.url(), "--cluster", "--category", "orders"});
  EXPECT_EQ(check.exit_code, 2) << check.out << check.err;
  EXPECT_NE(check.err.find("CLUSTER SLOTS"), std::string::npos) << check.err;
  EXPECT_EQ(check.out, "");
  const scenarios::CommandRun without_redis =
      scenarios::run_command(kSeqby, {"check", "/dev/null", "--cluster"});
  EXPECT_EQ(without_redis.exit_code, 2);
  EXPECT_NE(without_redis.err.find("apply only with --redis"), std::string::npos)
      << without_redis.err;
}

}  // namespace
}  // namespace seqby::apps
