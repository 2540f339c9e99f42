// The operator tooling against a real redis-server (ADR decision 6; seqby/hiredis/admin.h): what
// `partitions` and `inspect` report for a halted partition, that skip and dlq act only on the
// head and leave every key untouched when they refuse, that the admin scripts answer the same on
// the simulated Redis, and the shapes of `seqby admin --json` with its exit codes. A halted
// partition is set up by hand as the engine leaves it: the head delivered and pending for the
// owner's consumer, the lease `O:N`, and the halt record C:K:__halt__:G; one test has a real
// `seqby worker` halt and resume instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.h"
#include "redis_server.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/broker/scripts.h"
#include "seqby/hiredis/admin.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby/sim/sim_redis.h"
#include "seqby_binary.h"

namespace seqby::redis {
namespace {

using seqby::testing::RedisServer;

constexpr const char* kGroup = "billing";
constexpr const char* kReason = "handler failed: poison event";

class AdminCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    auto config = parse_redis_url(server_.url());
    ASSERT_TRUE(config.ok());
    redis_ = std::make_unique<BlockingRedis>(config.value());
    admin_ = std::make_unique<Admin>(*redis_);
    // A category of its own per test: the server may be shared.
    category_ =
        std::string("admin-") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    // The shared server outlives a run: a repeated test (ctest --repeat, a rerun) finds what its
    // previous run left under the category, so every test starts from an empty category.
    run({"DEL", category_});  // a plain, unpartitioned category's stream
    for (const Reply& key : run({"KEYS", category_ + ":*"}).elements) run({"DEL", key.str});
  }

  Reply run(const Command& command) {
    Result<Reply> reply = redis_->execute(command);
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_FALSE(reply.ok() && reply.value().is_error()) << to_string(reply.value());
    return reply.ok() ? reply.value() : Reply::nil();
  }

  std::string stream(const std::string& key) const { return category_ + ":" + key; }

  // Publishes events 1-1 .. 1-count on C:K (type charge, data {"client_id":K,"seq":n}).
  void publish(const std::string& key, int count) {
    for (int seq = 1; seq <= count; ++seq) {
      const std::string data =
          "{\"client_id\":\"" + key + "\",\"seq\":" + std::to_string(seq) + "}";
      run({"XADD", stream(key), "1-" + std::to_string(seq), "type", "charge", "data", data});
    }
    run({"SADD", category_ + ":__partitions__", key});
  }

  // The owner `w1:3` reads `deliveries` entries of C:K for `group` (they stay pending).
  void deliver(const std::string& key, const std::string& group, int deliveries) {
    run({"XGROUP", "CREATE", stream(key), group, "0", "MKSTREAM"});
    run({"XREADGROUP", "GROUP", group, "w1:3", "COUNT", std::to_string(deliveries), "STREAMS",
         stream(key), ">"});
  }

  // C:K as the engine leaves it halted on 1-1 after three deliveries.
  void halted(const std::string& key, int events) {
    publish(key, events);
    deliver(key, kGroup, 1);
    for (int again = 0; again < 2; ++again) {
      run({"XCLAIM", stream(key), kGroup, "w1:3", "0", "1-1"});
    }
    run({"SET", stream(key) + ":__lease__", "w1:3", "PX", "60000"});
    run({"SET", stream(key) + ":__fence__", "3"});
    run({"HSET", halt_key_name({category_, key}, kGroup), "id", "1-1", "reason", kReason,
         "since_ms", "1764538800000", "owner", "w1:3", "delivery_count", "3"});
  }

  // Every key of the category with its DUMP: equal snapshots mean nothing changed.
  std::vector<std::string> snapshot() {
    Reply keys = run({"KEYS", category_ + "*"});
    std::vector<std::string> out;
    for (const Reply& key : keys.elements) out.push_back(key.str);
    std::sort(out.begin(), out.end());
    const std::size_t count = out.size();
    for (std::size_t i = 0; i < count; ++i) out.push_back(to_string(run({"DUMP", out[i]})));
    return out;
  }

  RedisServer server_;
  std::unique_ptr<BlockingRedis> redis_;
  std::unique_ptr<Admin> admin_;
  std::string category_;
};

TEST_F(AdminCommands, PartitionsListsEachPartitionSortedWithItsHalt) {
  halted("client-B", 3);
  publish("client-A", 2);
  deliver("client-A", kGroup, 2);
  run({"XACK", stream("client-A"), kGroup, "1-1", "1-2"});

  Result<CategoryView> view = admin_->partitions(category_);
  ASSERT_TRUE(view.ok()) << view.error().message;
  ASSERT_EQ(view.value().partitions.size(), 2u);
  const PartitionView& a = view.value().partitions[0];
  const PartitionView& b = view.value().partitions[1];
  EXPECT_EQ(a.key, "client-A");
  EXPECT_FALSE(a.lease.has_value());
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].pending, 0u);
  EXPECT_EQ(a.groups[0].lag, 0);
  EXPECT_FALSE(a.groups[0].head.has_value());
  EXPECT_FALSE(a.groups[0].halt.has_value());

  EXPECT_EQ(b.key, "client-B");
  EXPECT_EQ(b.length, 3u);
  ASSERT_TRUE(b.lease.has_value());
  EXPECT_EQ(b.lease->owner, "w1");
  EXPECT_EQ(b.lease->generation, 3u);
  EXPECT_GT(b.lease->ttl_ms, 0);
  ASSERT_EQ(b.groups.size(), 1u);
  const GroupView& g = b.groups[0];
  EXPECT_EQ(g.name, kGroup);
  EXPECT_EQ(g.pending, 1u);
  EXPECT_EQ(g.lag, 2);  // 1-2 and 1-3 not yet delivered
  ASSERT_TRUE(g.head.has_value());
  EXPECT_EQ(g.head->id, "1-1");
  EXPECT_EQ(g.head->consumer, "w1:3");
  EXPECT_EQ(g.head->delivery_count, 3u);
  ASSERT_TRUE(g.halt.has_value());
  EXPECT_EQ(g.halt->id, "1-1");
  EXPECT_EQ(g.halt->reason, kReason);
  EXPECT_EQ(g.halt->since_ms, 1764538800000);
  EXPECT_EQ(g.halt->owner, "w1:3");
}

TEST_F(AdminCommands, APerGroupLeaseIsShownOnItsGroup) {
  publish("client-A", 1);
  deliver("client-A", kGroup, 1);
  run({"SET", stream("client-A") + ":__lease__:" + kGroup, "w2:7", "PX", "60000"});
  Result<CategoryView> view = admin_->partitions(category_);
  ASSERT_TRUE(view.ok()) << view.error().message;
  const PartitionView& a = view.value().partitions.at(0);
  EXPECT_FALSE(a.lease.has_value());
  ASSERT_TRUE(a.groups.at(0).lease.has_value());
  EXPECT_EQ(a.groups[0].lease->owner, "w2");
  EXPECT_EQ(a.groups[0].lease->generation, 7u);
}

// A process manager's group on C:K is held through its lease for correlation value K.
TEST_F(AdminCommands, AProcessManagersLeaseIsShownOnItsGroup) {
  const std::string pm = "pm" + category_.substr(category_.find('-') + 1);
  publish("order-7", 1);
  deliver("order-7", pm, 1);
  run({"SET", lease_key_name(pm_lease_category(pm), "order-7"), "w4:2", "PX", "60000"});
  Result<CategoryView> view = admin_->partitions(category_);
  ASSERT_TRUE(view.ok()) << view.error().message;
  const PartitionView& p = view.value().partitions.at(0);
  EXPECT_FALSE(p.lease.has_value());
  ASSERT_TRUE(p.groups.at(0).lease.has_value());
  EXPECT_EQ(p.groups[0].lease->owner, "w4");
  EXPECT_EQ(p.groups[0].lease->generation, 2u);
  Result<InspectView> inspected = admin_->inspect(category_, "order-7", pm);
  ASSERT_TRUE(inspected.ok()) << inspected.error().message;
  ASSERT_TRUE(inspected.value().lease.has_value());
  EXPECT_EQ(inspected.value().lease->owner, "w4");
  run({"DEL", lease_key_name(pm_lease_category(pm), "order-7")});
}

TEST_F(AdminCommands, AnUnknownCategoryIsNotFound) {
  Result<CategoryView> view = admin_->partitions(category_);
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.error().code, Errc::not_found);
  EXPECT_EQ(view.error().message, "unknown category \"" + category_ + "\": " + category_ +
                                      ":__partitions__ is empty and there is no stream " +
                                      category_);
  run({"XADD", category_, "*", "type", "t", "data", "{}"});  // a plain, unpartitioned category
  Result<CategoryView> plain = admin_->partitions(category_);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(plain.value().partitions.empty());
}

TEST_F(AdminCommands, AnIndexedKeyWhoseStreamIsGoneIsListedAsSuch) {
  publish("client-A", 1);
  run({"SADD", category_ + ":__partitions__", "ghost"});
  Result<CategoryView> view = admin_->partitions(category_);
  ASSERT_TRUE(view.ok()) << view.error().message;
  ASSERT_EQ(view.value().partitions.size(), 2u);
  const PartitionView& ghost = view.value().partitions[1];
  EXPECT_EQ(ghost.key, "ghost");
  EXPECT_FALSE(ghost.stream_exists);
  EXPECT_EQ(ghost.length, 0u);
  EXPECT_TRUE(ghost.groups.empty());
  Result<InspectView> inspect = admin_->inspect(category_, "ghost", "");
  ASSERT_FALSE(inspect.ok());
  EXPECT_EQ(inspect.error().code, Errc::not_found);
  EXPECT_EQ(inspect.error().message, "partition \"ghost\" is in " + category_ +
                                         ":__partitions__ but its stream " + stream("ghost") +
                                         " does not exist");
}

TEST_F(AdminCommands, InspectShowsTheHeadEventItsHolderAndTheLastError) {
  halted("client-B", 3);
  Result<InspectView> view = admin_->inspect(category_, "client-B", "");
  ASSERT_TRUE(view.ok()) << view.error().message;
  const InspectView& v = view.value();
  EXPECT_EQ(v.group, kGroup);  // the only group
  ASSERT_TRUE(v.status.head.has_value());
  EXPECT_EQ(v.status.head->id, "1-1");
  EXPECT_EQ(v.status.head->delivery_count, 3u);
  EXPECT_EQ(v.status.head->consumer, "w1:3");
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"type", "charge"}, {"data", "{\"client_id\":\"client-B\",\"seq\":1}"}};
  EXPECT_EQ(v.fields, fields);
  ASSERT_TRUE(v.status.halt.has_value());
  EXPECT_EQ(v.status.halt->reason, kReason);
  ASSERT_TRUE(v.lease.has_value());
  EXPECT_EQ(v.lease->owner, "w1");
}

TEST_F(AdminCommands, InspectOfAPartitionThatIsNotHaltedRecordsNoError) {
  publish("client-A", 2);
  deliver("client-A", kGroup, 1);
  Result<InspectView> view = admin_->inspect(category_, "client-A", kGroup);
  ASSERT_TRUE(view.ok()) << view.error().message;
  ASSERT_TRUE(view.value().status.head.has_value());
  EXPECT_EQ(view.value().status.head->id, "1-1");
  EXPECT_FALSE(view.value().status.halt.has_value());
}

TEST_F(AdminCommands, AnUnknownOrInvalidKeyIsBadInput) {
  publish("client-A", 1);
  Result<InspectView> unknown = admin_->inspect(category_, "client-Z", "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, Errc::not_found);
  EXPECT_EQ(unknown.error().message, "unknown partition: no stream " + stream("client-Z") +
                                         " and \"client-Z\" is not in " + category_ +
                                         ":__partitions__");
  Result<SkipOutcome> invalid = admin_->skip(category_, "a:b", "", "1-1");
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code, Errc::invalid);
  EXPECT_NE(invalid.error().message.find("rule no_colon"), std::string::npos);
}

TEST_F(AdminCommands, TheGroupMustBeNamedWhenThereAreSeveral) {
  publish("client-A", 1);
  deliver("client-A", kGroup, 1);
  deliver("client-A", "audit", 1);
  Result<InspectView> ambiguous = admin_->inspect(category_, "client-A", "");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().code, Errc::invalid);
  EXPECT_EQ(ambiguous.error().message,
            stream("client-A") + " has 2 groups; choose one with --group: audit, billing");
  Result<SkipOutcome> unknown = admin_->skip(category_, "client-A", "shipping", "1-1");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, Errc::invalid);
  EXPECT_EQ(unknown.error().message,
            "no group \"shipping\" on " + stream("client-A") + "; its groups: audit, billing");
}

TEST_F(AdminCommands, SkipAcknowledgesTheHeadAndTheNextEventFollows) {
  halted("client-B", 3);
  Result<SkipOutcome> done = admin_->skip(category_, "client-B", "", "1-1");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(done.value().halted);
  EXPECT_EQ(run({"XPENDING", stream("client-B"), kGroup}).elements.at(0).integer, 0);
  EXPECT_EQ(run({"EXISTS", halt_key_name({category_, "client-B"}, kGroup)}).integer, 0);
  EXPECT_EQ(run({"EXISTS", stream("client-B") + ":dlq"}).integer, 0);
  // The owner's next read gets the next event, in order.
  Reply next = run(
      {"XREADGROUP", "GROUP", kGroup, "w1:3", "COUNT", "1", "STREAMS", stream("client-B"), ">"});
  EXPECT_EQ(next.elements.at(0).elements.at(1).elements.at(0).elements.at(0).str, "1-2");
}

TEST_F(AdminCommands, SkipRefusesAnIdThatIsNotTheHeadAndChangesNothing) {
  halted("client-B", 3);
  run({"XREADGROUP", "GROUP", kGroup, "w1:3", "COUNT", "1", "STREAMS", stream("client-B"), ">"});
  const std::vector<std::string> before = snapshot();

  Result<SkipOutcome> not_head = admin_->skip(category_, "client-B", "", "1-2");
  ASSERT_FALSE(not_head.ok());
  EXPECT_EQ(not_head.error().code, Errc::refused);
  EXPECT_EQ(not_head.error().message,
            "1-2 is not the head of group billing on " + stream("client-B") + ": the head is 1-1");
  Result<DlqOutcome> dlq_not_head = admin_->dlq(category_, "client-B", "", "1-3");
  ASSERT_FALSE(dlq_not_head.ok());
  EXPECT_EQ(dlq_not_head.error().code, Errc::refused);
  EXPECT_EQ(dlq_not_head.error().message,
            "1-3 is not the head of group billing on " + stream("client-B") + ": the head is 1-1");
  Result<SkipOutcome> unknown = admin_->skip(category_, "client-B", "", "9-9");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, Errc::not_found);
  EXPECT_EQ(unknown.error().message, "no entry 9-9 in " + stream("client-B"));
  Result<DlqOutcome> malformed = admin_->dlq(category_, "client-B", "", "head");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().code, Errc::invalid);
  EXPECT_EQ(malformed.error().message, "\"head\" is not a stream entry id (MS-SEQ)");

  EXPECT_EQ(snapshot(), before);
}

TEST_F(AdminCommands, NothingPendingIsARefusal) {
  publish("client-A", 1);
  deliver("client-A", kGroup, 1);
  run({"XACK", stream("client-A"), kGroup, "1-1"});
  const std::vector<std::string> before = snapshot();
  Result<DlqOutcome> done = admin_->dlq(category_, "client-A", "", "1-1");
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code, Errc::refused);
  EXPECT_EQ(done.error().message,
            "1-1 is not the head of group billing on " + stream("client-A") + ": nothing pending");
  EXPECT_EQ(snapshot(), before);
}

TEST_F(AdminCommands, DlqMovesTheHeadWithItsProvenanceAndAcknowledgesIt) {
  halted("client-B", 2);
  Result<DlqOutcome> done = admin_->dlq(category_, "client-B", "", "1-1");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done.value().dlq, stream("client-B") + ":dlq");
  EXPECT_TRUE(done.value().halted);
  Reply moved = run({"XRANGE", stream("client-B") + ":dlq", "-", "+"});
  ASSERT_EQ(moved.elements.size(), 1u);
  EXPECT_EQ(moved.elements[0].elements.at(0).str, done.value().dlq_id);
  std::vector<std::string> fields;
  for (const Reply& f : moved.elements[0].elements.at(1).elements) fields.push_back(f.str);
  const std::vector<std::string> expected = {
      "type",      "charge", "data",           "{\"client_id\":\"client-B\",\"seq\":1}",
      "source_id", "1-1",    "group",          kGroup,
      "reason",    kReason,  "delivery_count", "3"};
  EXPECT_EQ(fields, expected);
  EXPECT_EQ(run({"XPENDING", stream("client-B"), kGroup}).elements.at(0).integer, 0);
  EXPECT_EQ(run({"EXISTS", halt_key_name({category_, "client-B"}, kGroup)}).integer, 0);
  EXPECT_EQ(run({"XLEN", stream("client-B")}).integer, 2);  // the partition keeps its history
  // The DLQ is not a partition: the listing does not show it.
  Result<CategoryView> view = admin_->partitions(category_);
  ASSERT_TRUE(view.ok());
  ASSERT_EQ(view.value().partitions.size(), 1u);
  EXPECT_EQ(view.value().partitions[0].key, "client-B");
}

TEST_F(AdminCommands, AHeadNotHaltedCanStillBeSkippedAndSaysSo) {
  publish("client-A", 1);
  deliver("client-A", kGroup, 1);
  Result<DlqOutcome> done = admin_->dlq(category_, "client-A", kGroup, "1-1");
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_FALSE(done.value().halted);
  Reply moved = run({"XRANGE", stream("client-A") + ":dlq", "-", "+"});
  ASSERT_EQ(moved.elements.size(), 1u);
  const std::vector<Reply>& fields = moved.elements[0].elements.at(1).elements;
  ASSERT_EQ(fields.size(), 12u);
  EXPECT_EQ(fields[8].str, "reason");
  EXPECT_EQ(fields[9].str, "");  // none recorded
}

TEST_F(AdminCommands, AnUnreachableRedisIsAClosedError) {
  RedisConfig config;
  config.port = 1;  // nothing listens there
  config.connect_timeout_ms = 500;
  BlockingRedis nowhere(config);
  Admin admin(nowhere);
  Result<CategoryView> view = admin.partitions("orders");
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.error().code, Errc::closed);
  EXPECT_NE(view.error().message.find("redis://127.0.0.1:1"), std::string::npos)
      << view.error().message;
}

// The admin scripts on the simulated Redis answer exactly as on the real one (DLQ ids aside,
// which come from `*`): a refusal, an unknown id, a dlq, a skip, nothing pending.
TEST_F(AdminCommands, TheScriptsAnswerTheSameOnTheSimulatedRedis) {
  class FixedClock : public Clock {
   public:
    std::uint64_t now_ms() override { return 1'764'538'800'000; }
  } clock;
  sim::SimRedis sim(clock);
  const std::string s = stream("k");
  const std::string halt = halt_key_name({category_, "k"}, kGroup);
  const std::string skip = script_source("admin_skip");
  const std::string dlq = script_source("admin_dlq");
  const std::vector<Command> commands = {
      {"XADD", s, "1-1", "type", "charge", "data", "{\"seq\":1}"},
      {"XADD", s, "1-2", "type", "charge", "data", "{\"seq\":2}"},
      {"XADD", s, "1-3", "type", "charge", "data", "{\"seq\":3}"},
      {"XGROUP", "CREATE", s, kGroup, "0"},
      {"EVAL", skip, "2", s, halt, kGroup, "1-1"},  // nothing pending
      {"XREADGROUP", "GROUP", kGroup, "w:1", "COUNT", "2", "STREAMS", s, ">"},
      {"HSET", halt, "id", "1-1", "reason", "boom"},
      {"EVAL", skip, "2", s, halt, kGroup, "1-2"},             // not the head
      {"EVAL", dlq, "3", s, halt, s + ":dlq", kGroup, "7-7"},  // no such entry
      {"EVAL", dlq, "3", s, halt, s + ":dlq", kGroup, "1-1"},
      {"XRANGE", s + ":dlq", "-", "+"},
      {"EXISTS", halt},
      {"XDEL", s, "1-2"},
      {"EVAL", skip, "2", s, halt, kGroup, "1-2"},  // pending though deleted: still the head
      {"XPENDING", s, kGroup},
  };
  for (const Command& command : commands) {
    Result<Reply> real = redis_->execute(command);
    ASSERT_TRUE(real.ok()) << real.error().message;
    Reply expected = real.value();
    Reply simulated = sim.execute(command);
    // The DLQ entry id is the server's `*` id: compare its shape only.
    for (Reply* reply : {&expected, &simulated}) {
      if (command[0] == "EVAL" && command[1] == dlq && reply->kind == Reply::Kind::array) {
        reply->elements.at(0).str = "<dlq id>";
      }
      if (command[0] == "XRANGE") {
        for (Reply& entry : reply->elements) entry.elements.at(0).str = "<dlq id>";
      }
    }
    EXPECT_EQ(to_string(simulated), to_string(expected)) << command[0] << " " << command.back();
  }
}

// `seqby admin --json`: one JSON object on stdout, its shape, and the exit codes.
TEST_F(AdminCommands, TheCommandPrintsOneJsonObjectPerAction) {
  using apps::testing::run_seqby;
  halted("client-B", 2);
  const std::string url = server_.url();

  auto partitions = run_seqby(
      {"admin", "--redis", url, "--json", "partitions", category_, "--warn-threshold", "0"});
  ASSERT_EQ(partitions.exit_code, 0) << partitions.err;
  nlohmann::json p = nlohmann::json::parse(partitions.out);
  EXPECT_EQ(p["partition_count"], 1);
  EXPECT_EQ(p["warning"],
            "category " + category_ + " has 1 live partitions, more than the warn threshold 0");
  const nlohmann::json& part = p["partitions"][0];
  EXPECT_EQ(part["key"], "client-B");
  EXPECT_EQ(part["length"], 2);
  EXPECT_EQ(part["lease"]["owner"], "w1");
  EXPECT_EQ(part["lease"]["generation"], 3);
  EXPECT_EQ(part["groups"][0]["group"], kGroup);
  EXPECT_EQ(part["groups"][0]["pending"], 1);
  EXPECT_EQ(part["groups"][0]["lag"], 1);
  EXPECT_EQ(part["groups"][0]["head"]["id"], "1-1");
  EXPECT_EQ(part["groups"][0]["head"]["delivery_count"], 3);
  EXPECT_EQ(part["groups"][0]["halted"], true);
  EXPECT_EQ(part["groups"][0]["halt"]["reason"], kReason);
  EXPECT_EQ(part["groups"][0]["halt"]["since_ms"], 1764538800000);

  auto inspect = run_seqby({"admin", "--redis", url, "--json", "inspect", category_, "client-B"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  nlohmann::json i = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(i["group"], kGroup);
  EXPECT_EQ(i["head"]["id"], "1-1");
  EXPECT_EQ(i["head"]["type"], "charge");
  EXPECT_EQ(i["head"]["data"]["seq"], 1);
  EXPECT_EQ(i["head"]["consumer"], "w1:3");
  EXPECT_EQ(i["last_error"], kReason);

  auto refused =
      run_seqby({"admin", "--redis", url, "--json", "skip", category_, "client-B", "1-2"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  nlohmann::json r = nlohmann::json::parse(refused.out);
  EXPECT_EQ(r["error"]["code"], "refused");
  EXPECT_EQ(r["error"]["message"], "1-2 is not the head of group billing on " + stream("client-B") +
                                       ": the head is 1-1; nothing changed");

  auto dlq = run_seqby({"admin", "--redis", url, "--json", "dlq", category_, "client-B", "1-1"});
  ASSERT_EQ(dlq.exit_code, 0) << dlq.err;
  nlohmann::json d = nlohmann::json::parse(dlq.out);
  EXPECT_EQ(d["action"], "dlq");
  EXPECT_EQ(d["id"], "1-1");
  EXPECT_EQ(d["dlq"], stream("client-B") + ":dlq");
  EXPECT_EQ(d["halt_cleared"], true);

  run({"XREADGROUP", "GROUP", kGroup, "w1:3", "COUNT", "1", "STREAMS", stream("client-B"), ">"});
  auto skip = run_seqby(
      {"admin", "--json", "skip", category_, "client-B", "1-2", "--group", kGroup, "--redis", url});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  nlohmann::json k = nlohmann::json::parse(skip.out);
  EXPECT_EQ(k["action"], "skip");
  EXPECT_EQ(k["id"], "1-2");
  EXPECT_EQ(k["halt_cleared"], false);

  auto unknown = run_seqby({"admin", "--redis", url, "--json", "inspect", category_, "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(nlohmann::json::parse(unknown.out)["error"]["code"], "not_found");
  EXPECT_NE(unknown.err.find("unknown partition: no stream " + stream("nope")), std::string::npos)
      << unknown.err;
}

// Without --json: a table per partition and group, then the halts with their reasons, then the
// partition-count warning; inspect shows the head's fields and the last error.
TEST_F(AdminCommands, TheTablesNameTheHaltAndTheWarning) {
  using apps::testing::run_seqby;
  halted("client-B", 2);
  const std::string url = server_.url();
  auto partitions =
      run_seqby({"admin", "--redis", url, "partitions", category_, "--warn-threshold", "0"});
  ASSERT_EQ(partitions.exit_code, 0) << partitions.err;
  EXPECT_EQ(partitions.out.rfind("category " + category_ + ": 1 partitions", 0), 0u)
      << partitions.out;
  EXPECT_NE(partitions.out.find("\nclient-B         w1:3"), std::string::npos) << partitions.out;
  EXPECT_NE(partitions.out.find("\nhalted:\n  client-B / billing: halted on 1-1 since "
                                "2025-11-30T21:40:00.000Z"),
            std::string::npos)
      << partitions.out;
  EXPECT_NE(partitions.out.find("by w1:3 after 3 deliveries: " + std::string(kReason) +
                                "\nwarning: category " + category_ +
                                " has 1 live partitions, more than the warn threshold 0\n"),
            std::string::npos)
      << partitions.out;

  auto inspect = run_seqby({"admin", "--redis", url, "inspect", category_, "client-B"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("  head        1-1, delivered 3 times, held by w1:3"),
            std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("  type        charge\n  data        "
                             "{\"client_id\":\"client-B\",\"seq\":1}\n"),
            std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("  last error  " + std::string(kReason) + "\n"), std::string::npos)
      << inspect.out;
}

// With a real `seqby worker`: the halt record the engine writes is what `seqby admin` reads, and
// after the operator skips one halted head and moves another to the DLQ the owner goes on with
// the next event of each key, in order (the publisher re-sends the corrected events).
TEST(AdminWithAWorker, TheOwnerGoesOnAfterSkipAndDlq) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  scenarios::RedisScenarioDriver d(server.url(), kSeqby, "admin_worker");
  ASSERT_TRUE(d.ready().ok());
  ASSERT_NE(d.start_worker("w1"), nullptr);
  Result<std::vector<std::string>> ids =
      d.publish({{"client-B", 1, 0, false}, {"client-B", 2, 0, true}, {"client-C", 1, 0, true}});
  ASSERT_TRUE(ids.ok()) << ids.error().message;
  const std::string poison_b = ids.value()[1];
  const std::string poison_c = ids.value()[2];
  auto admin_json = [&d](std::vector<std::string> args) {
    args.insert(args.begin(), {"admin", "--redis", d.url(), "--json"});
    return scenarios::run_command(d.seqby_binary(), args);
  };
  auto halted = [&d](const std::string& key) {
    return d.run({"EXISTS", halt_key_name({d.category(), key}, d.group())}).integer == 1;
  };
  ASSERT_TRUE(d.wait_until([&] { return halted("client-B") && halted("client-C"); })) << d.logs();

  auto inspect = admin_json({"inspect", d.category(), "client-B"});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  nlohmann::json i = nlohmann::json::parse(inspect.out);
  EXPECT_EQ(i["head"]["id"], poison_b);
  EXPECT_EQ(i["halted"], true);
  EXPECT_EQ(i["halt"]["id"], poison_b);
  EXPECT_EQ(i["head"]["delivery_count"], d.settings().retry_count_max + 1);
  EXPECT_EQ(i["last_error"], "poison");  // the record handler's error

  auto skip = admin_json({"skip", d.category(), "client-B", poison_b});
  ASSERT_EQ(skip.exit_code, 0) << skip.err;
  auto dlq = admin_json({"dlq", d.category(), "client-C", poison_c});
  ASSERT_EQ(dlq.exit_code, 0) << dlq.err;
  EXPECT_EQ(d.dlq_length("client-C"), 1);

  Result<std::vector<std::string>> resent =
      d.publish({{"client-B", 2, 0, false}, {"client-B", 3, 0, false}, {"client-C", 1, 0, false}});
  ASSERT_TRUE(resent.ok()) << resent.error().message;
  ASSERT_TRUE(d.wait_until([&] {
    return d.last_seq("client-B") == 3 && d.last_seq("client-C") == 1;
  })) << d.logs();
  const std::vector<std::string> b = {ids.value()[0], resent.value()[0], resent.value()[1]};
  EXPECT_EQ(d.effects("client-B"), b);
  EXPECT_EQ(d.effects("client-C"), std::vector<std::string>{resent.value()[2]});
  EXPECT_FALSE(halted("client-B"));
  EXPECT_FALSE(halted("client-C"));
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

}  // namespace
}  // namespace seqby::redis
