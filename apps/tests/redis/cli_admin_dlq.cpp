// `seqby admin halted | dlq-list | dlq-show | dlq-purge` and `partitions` on a reaped category
// (issue 15 item 4) against a real redis-server, through the built command: each command's output
// and exit status, and that bad input exits 2 with a clear message and changes nothing. A halted
// partition is set up by hand as the engine leaves it (the head delivered three times and pending,
// the lease, the halt record), then moved to the DLQ by `seqby admin dlq`.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.h"
#include "redis_server.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/blocking_redis.h"

namespace seqby::apps {
namespace {

using seqby::apps::testing::run_seqby;
using seqby::apps::testing::RunResult;
using seqby::testing::RedisServer;

constexpr const char* kGroup = "billing";
constexpr const char* kReason = "handler failed: poison event";

class CliAdminDlq : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    auto config = redis::parse_redis_url(server_.url());
    ASSERT_TRUE(config.ok());
    redis_ = std::make_unique<redis::BlockingRedis>(config.value());
    category_ =
        std::string("dlqtools-") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (const redis::Reply& key : run({"KEYS", category_ + ":*"}).elements) run({"DEL", key.str});
  }

  redis::Reply run(const redis::Command& command) {
    Result<redis::Reply> reply = redis_->execute(command);
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_FALSE(reply.ok() && reply.value().is_error()) << to_string(reply.value());
    return reply.ok() ? reply.value() : redis::Reply::nil();
  }

  std::string stream(const std::string& key) const { return category_ + ":" + key; }

  // C:K with events 1-1 .. 1-`events`, halted on 1-1 after three deliveries, `since_s` ago.
  void halted(const std::string& key, int events, std::int64_t since_s) {
    for (int seq = 1; seq <= events; ++seq) {
      const std::string data =
          "{\"client_id\":\"" + key + "\",\"seq\":" + std::to_string(seq) + "}";
      run({"XADD", stream(key), "1-" + std::to_string(seq), "type", "charge", "data", data});
    }
    run({"SADD", category_ + ":__partitions__", key});
    run({"XGROUP", "CREATE", stream(key), kGroup, "0"});
    run({"XREADGROUP", "GROUP", kGroup, "w1:3", "COUNT", "1", "STREAMS", stream(key), ">"});
    for (int again = 0; again < 2; ++again)
      run({"XCLAIM", stream(key), kGroup, "w1:3", "0", "1-1"});
    run({"SET", stream(key) + ":__lease__", "w1:3", "PX", "60000"});
    const redis::Reply time = run({"TIME"});
    const std::int64_t now_ms = std::stoll(time.elements[0].str) * 1000;
    run({"HSET", halt_key_name({category_, key}, kGroup), "id", "1-1", "reason", kReason,
         "since_ms", std::to_string(now_ms - since_s * 1000), "owner", "w1:3", "delivery_count",
         "3"});
  }

  RunResult admin(std::vector<std::string> args) {
    args.insert(args.begin(), {"admin", "--redis", server_.url()});
    return run_seqby(args);
  }

  // Every key of the category with its DUMP: equal snapshots mean nothing changed.
  std::vector<std::string> snapshot() {
    std::vector<std::string> out;
    for (const redis::Reply& key : run({"KEYS", category_ + "*"}).elements) out.push_back(key.str);
    std::sort(out.begin(), out.end());
    const std::size_t count = out.size();
    for (std::size_t i = 0; i < count; ++i) out.push_back(to_string(run({"DUMP", out[i]})));
    return out;
  }

  RedisServer server_;
  std::unique_ptr<redis::BlockingRedis> redis_;
  std::string category_;
};

TEST_F(CliAdminDlq, HaltedListsEachHaltedPartitionWithReasonAndAge) {
  halted("client-B", 2, 42);
  run({"XADD", stream("client-A"), "1-1", "type", "charge", "data", "{}"});
  run({"SADD", category_ + ":__partitions__", "client-A"});

  RunResult text = admin({"halted", category_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("category " + category_ + ": 1 halted of 2 partitions (server time "),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("KEY              GROUP        HEAD                AGE_S DELIV "
                          "OWNER:GEN                REASON\n"),
            std::string::npos)
      << text.out;
  // The age is what the server clock says since the halt: 42 s, or 43 when a second ticked.
  const bool age_42 = text.out.find(
                          "client-B         billing      1-1                    42     3 "
                          "w1:3                     " +
                          std::string(kReason) + "\n") != std::string::npos;
  const bool age_43 = text.out.find(
                          "client-B         billing      1-1                    43     3 "
                          "w1:3                     " +
                          std::string(kReason) + "\n") != std::string::npos;
  EXPECT_TRUE(age_42 || age_43) << text.out;
  EXPECT_EQ(text.out.find("client-A"), std::string::npos) << text.out;

  RunResult as_json = admin({"--json", "halted", category_});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  nlohmann::json j = nlohmann::json::parse(as_json.out);
  EXPECT_EQ(j["partition_count"], 2);
  EXPECT_EQ(j["halted_count"], 1);
  ASSERT_EQ(j["halted"].size(), 1u);
  EXPECT_EQ(j["halted"][0]["key"], "client-B");
  EXPECT_EQ(j["halted"][0]["group"], kGroup);
  EXPECT_EQ(j["halted"][0]["id"], "1-1");
  EXPECT_EQ(j["halted"][0]["reason"], kReason);
  EXPECT_EQ(j["halted"][0]["delivery_count"], 3);
  EXPECT_GE(j["halted"][0]["halted_for_ms"].get<std::int64_t>(), 42000);
  EXPECT_LT(j["halted"][0]["halted_for_ms"].get<std::int64_t>(), 42000 + 60000);

  RunResult unknown = admin({"halted", category_ + "-nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("seqby admin halted: unknown category"), std::string::npos)
      << unknown.err;
  RunResult bad = admin({"halted", "a:b"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("seqby admin halted: "), std::string::npos) << bad.err;
}

TEST_F(CliAdminDlq, DlqListShowAndPurgeAnswerWhatTheDlqHolds) {
  halted("client-B", 3, 5);
  RunResult empty = admin({"dlq-list", category_, "client-B"});
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, stream("client-B") + ":dlq: 0 entries\n");

  RunResult moved = admin({"dlq", category_, "client-B", "1-1"});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  // The next head, delivered and failed again, moved too: two DLQ entries.
  run({"XREADGROUP", "GROUP", kGroup, "w1:3", "COUNT", "1", "STREAMS", stream("client-B"), ">"});
  RunResult moved2 = admin({"dlq", category_, "client-B", "1-2"});
  ASSERT_EQ(moved2.exit_code, 0) << moved2.err;

  RunResult list = admin({"--json", "dlq-list", category_, "client-B"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  nlohmann::json l = nlohmann::json::parse(list.out);
  EXPECT_EQ(l["dlq"], stream("client-B") + ":dlq");
  EXPECT_EQ(l["length"], 2);
  ASSERT_EQ(l["entries"].size(), 2u);
  const std::string first = l["entries"][0]["id"];
  const std::string second = l["entries"][1]["id"];
  EXPECT_EQ(l["entries"][0]["fields"]["source_id"], "1-1");
  EXPECT_EQ(l["entries"][0]["fields"]["reason"], kReason);
  EXPECT_EQ(l["entries"][1]["fields"]["source_id"], "1-2");
  EXPECT_EQ(l["entries"][1]["fields"]["reason"], "");  // its halt was not recorded

  RunResult table = admin({"dlq-list", category_, "client-B", "--count", "1"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out, stream("client-B") + ":dlq: 2 entries (the first 1 shown)\n" +
                           "ID                SOURCE_ID         GROUP        DELIV TYPE         "
                           "REASON\n" +
                           first + std::string(18 - first.size(), ' ') +
                           "1-1               billing          3 charge       " + kReason + "\n");

  RunResult show = admin({"dlq-show", category_, "client-B", first});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(show.out, "entry " + first + " of " + stream("client-B") +
                          ":dlq\n"
                          "  type            charge\n"
                          "  data            {\"client_id\":\"client-B\",\"seq\":1}\n"
                          "  source_id       1-1\n"
                          "  group           billing\n"
                          "  reason          " +
                          kReason +
                          "\n"
                          "  delivery_count  3\n");
  RunResult show_json = admin({"--json", "dlq-show", category_, "client-B", second});
  ASSERT_EQ(show_json.exit_code, 0) << show_json.err;
  EXPECT_EQ(nlohmann::json::parse(show_json.out)["data"]["seq"], 2);

  // Bad input: exit 2, a message naming it, nothing changed.
  const std::vector<std::string> before = snapshot();
  RunResult missing = admin({"dlq-show", category_, "client-B", "1-99"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "seqby admin dlq-show: no entry 1-99 in " + stream("client-B") + ":dlq\n");
  RunResult not_an_id = admin({"dlq-show", category_, "client-B", "first"});
  EXPECT_EQ(not_an_id.exit_code, 2);
  EXPECT_EQ(not_an_id.err,
            "seqby admin dlq-show: entry id \"first\" is not a stream entry id (MS-SEQ)\n");
  RunResult bad_before = admin({"dlq-purge", category_, "client-B", "--before", "yesterday"});
  EXPECT_EQ(bad_before.exit_code, 2);
  EXPECT_EQ(bad_before.err,
            "seqby admin dlq-purge: --before \"yesterday\" is not a stream entry id (MS-SEQ)\n");
  RunResult bad_key = admin({"dlq-purge", category_, "client:B"});
  EXPECT_EQ(bad_key.exit_code, 2);
  EXPECT_NE(bad_key.err.find("rule no_colon"), std::string::npos) << bad_key.err;
  RunResult stray = admin({"dlq-list", category_, "client-B", "--group", kGroup});
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_EQ(snapshot(), before);

  RunResult purge_before = admin({"dlq-purge", category_, "client-B", "--before", second});
  ASSERT_EQ(purge_before.exit_code, 0) << purge_before.err;
  EXPECT_EQ(purge_before.out, "purged 1 entry from " + stream("client-B") +
                                  ":dlq with an id before " + second + "; 1 left\n");
  RunResult gone = admin({"dlq-show", category_, "client-B", first});
  EXPECT_EQ(gone.exit_code, 2);
  RunResult purge_all = admin({"--json", "dlq-purge", category_, "client-B"});
  ASSERT_EQ(purge_all.exit_code, 0) << purge_all.err;
  nlohmann::json p = nlohmann::json::parse(purge_all.out);
  EXPECT_EQ(p["purged"], 1);
  EXPECT_EQ(p["left"], 0);
  EXPECT_EQ(run({"XLEN", stream("client-B") + ":dlq"}).integer, 0);
  // The partition itself is untouched: its stream keeps every event.
  EXPECT_EQ(run({"XLEN", stream("client-B")}).integer, 3);
}

TEST_F(CliAdminDlq, DlqReplayAppendsAfterLaterEventsOnlyWithTheFlag) {
  halted("client-B", 2, 5);
  RunResult moved = admin({"--json", "dlq", category_, "client-B", "1-1"});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  const std::string dlq_id = nlohmann::json::parse(moved.out)["dlq_id"];

  // Without the flag: exit 2 naming it, nothing changed.
  const std::vector<std::string> before = snapshot();
  RunResult refused = admin({"dlq-replay", category_, "client-B", dlq_id});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("give --after-later-events"), std::string::npos) << refused.err;
  RunResult missing = admin({"dlq-replay", category_, "client-B", "1-99", "--after-later-events"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err,
            "seqby admin dlq-replay: no entry 1-99 in " + stream("client-B") + ":dlq\n");
  EXPECT_EQ(snapshot(), before);

  RunResult replayed = admin({"dlq-replay", category_, "client-B", dlq_id, "--after-later-events"});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  // The copy is the last entry of C:K, after 1-2, with the original fields only.
  const redis::Reply last = run({"XREVRANGE", stream("client-B"), "+", "-", "COUNT", "1"});
  ASSERT_EQ(last.elements.size(), 1u);
  const std::string new_id = last.elements[0].elements[0].str;
  EXPECT_EQ(replayed.out, "replayed " + dlq_id + " of " + stream("client-B") +
                              ":dlq to the tail of " + stream("client-B") + " as " + new_id +
                              ", after every later event; deleted it from the DLQ\n");
  std::vector<std::string> fields;
  for (const redis::Reply& f : last.elements[0].elements[1].elements) fields.push_back(f.str);
  EXPECT_EQ(fields, (std::vector<std::string>{"type", "charge", "data",
                                              "{\"client_id\":\"client-B\",\"seq\":1}"}));
  EXPECT_EQ(run({"XLEN", stream("client-B")}).integer, 3);
  EXPECT_EQ(run({"XLEN", stream("client-B") + ":dlq"}).integer, 0);
  EXPECT_EQ(run({"SISMEMBER", category_ + ":__partitions__", "client-B"}).integer, 1);
  RunResult again = admin({"dlq-replay", category_, "client-B", dlq_id, "--after-later-events"});
  EXPECT_EQ(again.exit_code, 2);
}

TEST_F(CliAdminDlq, PartitionsOfACategoryWhosePartitionsWereAllReapedIsZero) {
  // What a reap leaves: the fence counter and the subscribers set, no index, no streams.
  run({"SADD", category_ + ":__subscribers__", kGroup});
  run({"SET", stream("client-A") + ":__fence__", "4"});
  RunResult text = admin({"partitions", category_});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.substr(0, text.out.find(" (server time")),
            "category " + category_ + ": 0 partitions");
  RunResult as_json = admin({"--json", "partitions", category_});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(nlohmann::json::parse(as_json.out)["partition_count"], 0);
  RunResult halted_none = admin({"halted", category_});
  ASSERT_EQ(halted_none.exit_code, 0) << halted_none.err;
  EXPECT_EQ(halted_none.out.substr(0, halted_none.out.find(" (server time")),
            "category " + category_ + ": 0 halted of 0 partitions");
  // A category nothing ever served is still unknown.
  RunResult unknown = admin({"partitions", category_ + "-never"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown category"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace seqby::apps
