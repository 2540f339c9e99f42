// Real `seqby worker` processes and `seqby publish` against one redis-server, through the
// scenario driver (seqby/scenarios/redis_driver.h). The ADR's engine scenarios with two workers,
// SIGKILL and SIGSTOP/SIGCONT run in scenarios/tests/redis/two_instance_scenarios.cpp; this file
// keeps what is about the commands and the wire format: a publisher that is not seqby (plain
// XADD of DESIGN.md section 3's entry format plus SADD to the index) is served in order, and
// `seqby publish` writes exactly the documented entries or nothing. Every wait is bounded.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli_run.h"
#include "redis_server.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/naming.h"
#include "seqby/properties/checker.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::redis {
namespace {

using scenarios::RedisScenarioDriver;
using seqby::testing::RedisServer;

class TwoInstance : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    driver_ = std::make_unique<RedisScenarioDriver>(
        server_.url(), kSeqby, ::testing::UnitTest::GetInstance()->current_test_info()->name());
    const Status ready = driver_->ready();
    ASSERT_TRUE(ready.ok()) << ready.error().message;
  }

  RedisServer server_;
  std::unique_ptr<RedisScenarioDriver> driver_;
};

TEST_F(TwoInstance, APublisherThatIsNotSeqbyIsServedInOrder) {
  constexpr std::int64_t kCount = 10;
  RedisScenarioDriver& d = *driver_;
  const std::vector<std::string> keys = {"client-A", "client-B"};
  std::map<std::string, std::vector<std::string>> ids;
  // Raw commands only: XADD C:K * type T data JSON, then SADD C:__partitions__ K. The publish
  // history record is the test's own bookkeeping for the checker (before any worker starts).
  for (std::int64_t seq = 1; seq <= kCount; ++seq) {
    for (const std::string& key : keys) {
      const std::string data =
          "{\"client_id\":\"" + key + "\",\"seq\":" + std::to_string(seq) + ",\"delay_ms\":5}";
      const Reply id =
          d.run({"XADD", d.category() + ":" + key, "*", "type", "charge", "data", data});
      ASSERT_EQ(id.kind, Reply::Kind::bulk) << to_string(id);
      ASSERT_EQ(d.run({"SADD", d.category() + ":__partitions__", key}).kind, Reply::Kind::integer);
      ids[key].push_back(id.str);
      HistoryRecord publish;
      publish.node = "raw-publisher";
      publish.op = HistoryOp::publish;
      publish.category = d.category();
      publish.key = key;
      publish.event_id = id.str;
      publish.seq = seq;
      d.append_history(publish);
    }
  }
  ASSERT_NE(d.start_worker("w1"), nullptr);
  ASSERT_NE(d.start_worker("w2"), nullptr);

  const bool done = d.wait_until(
      [&] { return d.last_seq("client-A") == kCount && d.last_seq("client-B") == kCount; });
  ASSERT_TRUE(done) << "not every event was committed within " << d.wait_max_ms()
                    << " ms: client-A at " << d.last_seq("client-A") << ", client-B at "
                    << d.last_seq("client-B") << "\n"
                    << d.logs();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();

  for (const std::string& key : keys) {
    EXPECT_EQ(d.effects(key), ids[key]) << key << ": effects are the entry ids in publish order";
  }
  Result<std::vector<HistoryRecord>> history = d.read_history();
  ASSERT_TRUE(history.ok()) << history.error().message;
  std::map<std::string, std::vector<std::int64_t>> commits;
  for (const HistoryRecord& r : history.value()) {
    if (r.op == HistoryOp::commit) commits[r.key].push_back(r.seq);
  }
  const std::vector<std::int64_t> one_to_count = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  for (const std::string& key : keys) EXPECT_EQ(commits[key], one_to_count) << key;
  const properties::CheckReport report = properties::check_history(history.value(), {});
  EXPECT_TRUE(report.ok()) << properties::render_report_text(report, &history.value());
}

TEST_F(TwoInstance, PublishRefusesABadKeyNamingTheRuleAndWritesNothing) {
  const auto result = apps::testing::run_seqby(
      {"publish", "--redis", server_.url(), "--category", driver_->category(), "--key", "a:b"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("rule no_colon"), std::string::npos) << result.err;
  EXPECT_EQ(driver_->run({"EXISTS", partition_index_name(driver_->category())}).integer, 0);
  EXPECT_TRUE(driver_->category_keys().empty());
}

TEST_F(TwoInstance, PublishCountWritesNumberedEventsAndPrintsTheirIds) {
  const std::string& category = driver_->category();
  const auto result = apps::testing::run_seqby({"publish", "--redis", server_.url(), "--category",
                                                category, "--key", "client-A", "--count", "3",
                                                "--field", "delay_ms=5", "--type", "charge"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Reply entries =
      driver_->run({"XRANGE", PartitionRef{category, "client-A"}.stream(), "-", "+"});
  ASSERT_EQ(entries.elements.size(), 3u) << to_string(entries);
  std::string ids;
  for (std::size_t i = 0; i < entries.elements.size(); ++i) {
    const Reply& entry = entries.elements[i];
    ids += entry.elements[0].str + "\n";
    const std::vector<Reply>& fields = entry.elements[1].elements;
    ASSERT_EQ(fields.size(), 4u);
    EXPECT_EQ(fields[1].str, "charge");
    EXPECT_EQ(fields[3].str, "{\"delay_ms\":5,\"seq\":" + std::to_string(i + 1) + "}");
  }
  EXPECT_EQ(result.out, ids);
  const Reply members = driver_->run({"SMEMBERS", PartitionRef{category, "client-A"}.index()});
  ASSERT_EQ(members.elements.size(), 1u);
  EXPECT_EQ(members.elements[0].str, "client-A");
}

}  // namespace
}  // namespace seqby::redis
