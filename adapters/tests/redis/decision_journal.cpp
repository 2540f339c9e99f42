// The decision journal on a real redis-server (seqby/hiredis/journal.h): real `seqby worker`
// processes with --journal-maxlen, SIGKILLed at moments drawn from a seed (never chosen as safe),
// and the journal judged by the same checker as the simulator. Exactness is checked against the
// server's own state: per key, the accepted commits the journal holds are exactly the seqs the
// sink accepted, 1..n, once each. Also the record handler's in-progress marker (a lost exit reply
// leaves its own marker, which is never an overlap; another owner's is), and `seqby check
// --redis`. Every wait is bounded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "cli_run.h"
#include "redis_server.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/journal.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby/sim/rng.h"
#include "seqby/testing/record_handler.h"
#include "seqby_binary.h"

namespace seqby::redis {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using seqby::testing::RedisServer;

constexpr std::int64_t kEventsPerKey = 60;
const std::vector<std::string> kKeys = {"a", "b", "c"};

std::vector<PublishSpec> events(std::int64_t from, std::int64_t to) {
  std::vector<PublishSpec> specs;
  for (std::int64_t seq = from; seq <= to; ++seq) {
    for (const std::string& key : kKeys) specs.push_back(PublishSpec{key, seq, 10});
  }
  return specs;
}

TEST(DecisionJournal, KillsAtRandomMomentsLoseNoDecisionAndTheJournalIsJudgedExactly) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "journal_kills");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  ASSERT_GT(d.settings().journal_maxlen, 0u);
  ASSERT_NE(d.start_worker("w1"), nullptr);
  ASSERT_NE(d.start_worker("w2"), nullptr);
  ASSERT_TRUE(d.publish(events(1, kEventsPerKey)).ok());

  // Three kills, each at a moment drawn from the seed while the workers are busy, each followed
  // by a fresh worker under a new owner id.
  sim::Rng random(20261201);
  int next_worker = 3;
  for (int kill = 0; kill < 3; ++kill) {
    const std::uint64_t wait_ms = 50 + random.below(200);
    d.wait_until([] { return false; }, wait_ms);
    std::vector<scenarios::WorkerProcess*> running = d.running_workers();
    ASSERT_FALSE(running.empty());
    d.crash(running[random.below(running.size())]->owner());
    std::int64_t committed = 0;
    for (const std::string& key : kKeys) committed += d.last_seq(key);
    // The kill struck a busy run (else it proves nothing).
    EXPECT_LT(committed, kEventsPerKey * static_cast<std::int64_t>(kKeys.size()))
        << "kill " << kill;
    ASSERT_NE(d.start_worker("w" + std::to_string(next_worker++)), nullptr);
  }
  const bool done = d.wait_until([&] {
    for (const std::string& key : kKeys) {
      if (d.last_seq(key) < kEventsPerKey) return false;
    }
    return true;
  });
  ASSERT_TRUE(done) << d.logs();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();

  Result<std::vector<HistoryRecord>> history = d.read_history();
  ASSERT_TRUE(history.ok()) << history.error().message;
  const properties::CheckReport report = properties::check_history(history.value(), {});
  EXPECT_TRUE(report.ok()) << properties::render_report_text(report, &history.value());

  std::map<std::string, std::vector<std::int64_t>> commits;
  std::map<std::string, std::int64_t> publishes;
  std::size_t crashes = 0;
  for (const HistoryRecord& r : history.value()) {
    if (r.op == HistoryOp::commit) commits[r.key].push_back(r.seq);
    if (r.op == HistoryOp::publish) ++publishes[r.key];
    if (r.op == HistoryOp::fault && r.detail.starts_with("crash")) ++crashes;
  }
  EXPECT_EQ(crashes, 3u);
  for (const std::string& key : kKeys) {
    // The sink accepted 1..n exactly once each (it accepts only last + 1), and the journal holds
    // exactly those commits, in that order: none lost, none invented, none reordered.
    std::vector<std::int64_t> expected;
    for (std::int64_t seq = 1; seq <= kEventsPerKey; ++seq) expected.push_back(seq);
    EXPECT_EQ(d.last_seq(key), kEventsPerKey);
    EXPECT_EQ(d.effects(key).size(), static_cast<std::size_t>(kEventsPerKey));
    EXPECT_EQ(commits[key], expected) << "key " << key;
    EXPECT_EQ(publishes[key], kEventsPerKey) << "key " << key;
  }
  // What a graceful stop could not write is counted in its stop line: here nothing.
  EXPECT_NE(d.logs().find("journal_notes_unwritten=0"), std::string::npos) << d.logs();
  EXPECT_EQ(d.logs().find("journal_notes_failed=1"), std::string::npos) << d.logs();
}

TEST(DecisionJournal, TheMarkerOfTheUnitsOwnOwnerIsNeverAnOverlapAndAnotherOwnersIs) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "journal_marker");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  ASSERT_NE(d.start_worker("w1"), nullptr);
  ASSERT_TRUE(d.publish({PublishSpec{"a", 1}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("a") >= 1; })) << d.logs();

  // A marker w1 left behind (its exit's reply lost): w1's next event replaces it silently.
  const std::string marker = inprogress_key_name(PartitionRef{d.category(), "a"}, d.group());
  d.run({"SET", marker, "w1:1-1", "PX", "60000"});
  ASSERT_TRUE(d.publish({PublishSpec{"a", 2}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("a") >= 2; })) << d.logs();
  // Another owner's marker: an overlap, journaled by the enter script itself.
  d.run({"SET", marker, "intruder:1-1", "PX", "60000"});
  ASSERT_TRUE(d.publish({PublishSpec{"a", 3}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("a") >= 3; })) << d.logs();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();

  Result<std::vector<HistoryRecord>> history = d.read_history();
  ASSERT_TRUE(history.ok()) << history.error().message;
  std::vector<std::string> overlaps;
  std::size_t enters = 0;
  std::size_t exits = 0;
  for (const HistoryRecord& r : history.value()) {
    if (r.op == HistoryOp::warn && r.detail.starts_with(seqby::testing::kInProgressOverlap)) {
      overlaps.push_back(r.detail);
    }
    enters += r.op == HistoryOp::enter;
    exits += r.op == HistoryOp::exit;
  }
  EXPECT_EQ(overlaps, std::vector<std::string>{"inprogress_overlap holder=intruder:1-1"});
  EXPECT_EQ(enters, 3u);
  EXPECT_EQ(exits, 3u);
}

TEST(DecisionJournal, SeqbyCheckJudgesTheJournalStraightFromRedisAndSavesIt) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "journal_check");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  ASSERT_NE(d.start_worker("w1"), nullptr);
  ASSERT_TRUE(d.publish(events(1, 3)).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("c") >= 3 && d.last_seq("a") >= 3; }));
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();

  const std::string saved = apps::testing::temp_path();
  const apps::testing::RunResult held = apps::testing::run_seqby(
      {"check", "--redis", server.url(), "--category", d.category(), "--save", saved});
  EXPECT_EQ(held.exit_code, 0) << held.out << held.err;
  const apps::testing::RunResult file = apps::testing::run_seqby({"check", saved});
  EXPECT_EQ(file.exit_code, 0) << file.out << file.err;
  Result<std::vector<HistoryRecord>> read = properties::read_history_file(saved);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_GT(read.value().size(), 9u);  // 9 publishes and everything the worker decided
  std::remove(saved.c_str());

  // A category without a journal is bad input naming it; so is a missing --category.
  const apps::testing::RunResult none =
      apps::testing::run_seqby({"check", "--redis", server.url(), "--category", "nothere"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no journal records for category nothere"), std::string::npos)
      << none.err;
  const apps::testing::RunResult usage =
      apps::testing::run_seqby({"check", "--redis", server.url()});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("--category"), std::string::npos) << usage.err;
}

}  // namespace
}  // namespace seqby::redis
