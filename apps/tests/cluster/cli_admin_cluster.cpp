// `seqby admin --cluster --key-layout cluster` on a real Redis Cluster (tests/support/
// redis_cluster.h: 3 masters, 3 replicas). `seqby publish --cluster` writes two partitions in the
// cluster layout, C:{K}, each served by another master than the other and than the index
// C:__partitions__; a real `seqby worker --cluster` serves them and halts on a poison event. Given
// one node as --redis, admin lists both partitions with their lengths and the halt, inspects the
// halted head, skips it (the worker then commits the next event), moves a second poison head to
// C:{K}:dlq and lists and shows it there; both resolutions are in the unit's journal. dlq-replay
// copies the entry back to the stream between a publish's intent steps (the index is in another
// slot) and leaves no intent open; --cluster without --key-layout cluster is a usage error (exit
// 2). Every wait is bounded.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "seqby/broker/cluster_slot.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/cluster_link.h"
#include "seqby/hiredis/journal.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::apps {
namespace {

using nlohmann::json;
using redis::Reply;
using scenarios::CommandRun;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::scenarios::RedisCluster;

constexpr const char* kCategory = "ledger";
constexpr const char* kGroup = "g";

PartitionRef partition_of(const std::string& key) {
  return PartitionRef{kCategory, key, KeyLayout::cluster};
}

// Commands of the test's own, routed to each key's slot.
struct Reader {
  explicit Reader(const RedisCluster& cluster) : link(runtime, cluster.seed()) {}
  Result<Reply> run(redis::Command command) {
    return runtime.block_on(link.execute(std::move(command)));
  }
  std::string text(redis::Command command) {
    Result<Reply> reply = run(std::move(command));
    return reply.ok() && reply.value().kind == Reply::Kind::bulk ? reply.value().str : "";
  }
  std::int64_t integer(redis::Command command) {
    Result<Reply> reply = run(std::move(command));
    return reply.ok() && reply.value().kind == Reply::Kind::integer ? reply.value().integer : -1;
  }
  // The ids of C:{K}'s entries, oldest first.
  std::vector<std::string> ids(const PartitionRef& p) {
    std::vector<std::string> out;
    Result<Reply> entries = run({"XRANGE", p.stream(), "-", "+"});
    if (!entries.ok() || entries.value().kind != Reply::Kind::array) return out;
    for (const Reply& entry : entries.value().elements) out.push_back(entry.elements[0].str);
    return out;
  }
  redis::RealRuntime runtime;
  redis::HiredisClusterLink link;
};

class CliAdminCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cluster_.ok()) << cluster_.error();
    seed_ = "redis://127.0.0.1:" + std::to_string(cluster_.ports().front());
  }

  CommandRun publish(const std::string& key, const std::string& data) {
    return scenarios::run_command(
        kSeqby, {"publish", "--redis", seed_, "--cluster", "--key-layout", "cluster", "--category",
                 kCategory, "--key", key, "--data", data, "--journal-maxlen",
                 std::to_string(redis::kTestJournalMaxlen)});
  }

  CommandRun admin(std::vector<std::string> args) {
    args.insert(args.begin(),
                {"admin", "--redis", seed_, "--cluster", "--key-layout", "cluster", "--json"});
    return scenarios::run_command(kSeqby, args);
  }

  // `admin` answering exit 0 with one JSON object; null otherwise (with a failure recorded).
  json admin_json(const std::vector<std::string>& args) {
    const CommandRun done = admin(args);
    EXPECT_EQ(done.exit_code, 0) << done.err << done.out;
    if (done.exit_code != 0) return nullptr;
    return json::parse(done.out, nullptr, false);
  }

  RedisCluster cluster_;
  std::string seed_;
};

TEST_F(CliAdminCluster, PartitionsInspectSkipAndDlqReachEachKeysSlot) {
  // Three masters: the index's and one per partition (ASSERTed, so the test means what it says:
  // whatever node --redis names, most commands meet MOVED first).
  const PartitionRef halting = partition_of("acct-2");
  const PartitionRef healthy = partition_of("acct-3");
  const std::optional<std::uint16_t> index_master =
      cluster_.master_of_slot(redis::key_slot(healthy.index()));
  const std::optional<std::uint16_t> healthy_master =
      cluster_.master_of_slot(redis::key_slot(healthy.stream()));
  const std::optional<std::uint16_t> halting_master =
      cluster_.master_of_slot(redis::key_slot(halting.stream()));
  ASSERT_TRUE(index_master && healthy_master && halting_master);
  ASSERT_NE(*index_master, *healthy_master);
  ASSERT_NE(*index_master, *halting_master);
  ASSERT_NE(*healthy_master, *halting_master);
  for (int seq = 1; seq <= 3; ++seq) {
    const CommandRun done = publish(healthy.key, "{\"seq\":" + std::to_string(seq) + "}");
    ASSERT_EQ(done.exit_code, 0) << done.err;
  }
  // acct-2: a poison event (the record handler fails it every time: the partition halts), then
  // its correction, seq 1 again, which the worker commits once the poison is skipped; then a
  // second poison (seq 2) for `dlq`.
  for (const char* data :
       {R"({"seq":1,"poison":true})", R"({"seq":1})", R"({"seq":2,"poison":true})"}) {
    const CommandRun done = publish(halting.key, data);
    ASSERT_EQ(done.exit_code, 0) << done.err;
  }

  WorkerSettings settings;
  settings.group = kGroup;
  settings.sequential_by = "id";
  settings.lease_ttl_ms = 5000;
  settings.heartbeat_interval_ms = 500;
  settings.discovery_interval_ms = 250;
  settings.retry_count_max = 1;
  settings.retry_backoff_ms = 20;
  settings.reap_idle_ms = 0;
  settings.journal_maxlen = redis::kTestJournalMaxlen;  // each unit's journal in its own slot
  settings.cluster = true;                              // --cluster --key-layout cluster
  WorkerProcess worker(kSeqby, seed_, kCategory, "seqby:history", "w1", settings,
                       cluster_.dir() + "/w1.log");
  ASSERT_TRUE(worker.started());
  Reader reader(cluster_);
  const std::string healthy_sink = sink_key_name(healthy, kGroup);
  const std::string halt = halt_key_name(halting, kGroup);
  ASSERT_TRUE(cluster_.wait_until(
      [&] {
        return reader.text({"HGET", healthy_sink, "last_seq"}) == "3" &&
               reader.integer({"EXISTS", halt}) == 1;
      },
      60000, "acct-1 committed and acct-2 halted"))
      << cluster_.error() << "\n"
      << worker.log();
  const std::vector<std::string> ids = reader.ids(halting);
  ASSERT_EQ(ids.size(), 3u);

  // partitions: both keys (sorted), with their lengths, leases, groups and the halt.
  json listed = admin_json({"partitions", kCategory});
  ASSERT_TRUE(listed.is_object());
  EXPECT_EQ(listed["partition_count"], 2);
  ASSERT_EQ(listed["partitions"].size(), 2u);
  const json& halted_view = listed["partitions"][0];
  const json& healthy_view = listed["partitions"][1];
  EXPECT_EQ(halted_view["key"], halting.key);
  EXPECT_EQ(halted_view["length"], 3);
  EXPECT_EQ(halted_view["lease"]["owner"], "w1");
  ASSERT_EQ(halted_view["groups"].size(), 1u);
  EXPECT_EQ(halted_view["groups"][0]["group"], kGroup);
  EXPECT_EQ(halted_view["groups"][0]["halted"], true);
  EXPECT_EQ(halted_view["groups"][0]["halt"]["id"], ids[0]);
  EXPECT_EQ(halted_view["groups"][0]["head"]["id"], ids[0]);
  EXPECT_EQ(healthy_view["key"], healthy.key);
  EXPECT_EQ(healthy_view["length"], 3);
  EXPECT_EQ(healthy_view["stream_exists"], true);
  EXPECT_EQ(healthy_view["lease"]["owner"], "w1");
  ASSERT_EQ(healthy_view["groups"].size(), 1u);
  EXPECT_EQ(healthy_view["groups"][0]["pending"], 0);
  EXPECT_EQ(healthy_view["groups"][0]["halted"], false);
  // The text form names the halted key too.
  const CommandRun table = scenarios::run_command(
      kSeqby,
      {"admin", "--redis", seed_, "--cluster", "--key-layout", "cluster", "halted", kCategory});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("category " + std::string(kCategory) + ": 1 halted of 2 partitions"),
            std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find(halting.key), std::string::npos) << table.out;

  // inspect: the halted head with its fields.
  json inspected = admin_json({"inspect", kCategory, halting.key});
  ASSERT_TRUE(inspected.is_object());
  EXPECT_EQ(inspected["group"], kGroup);
  EXPECT_EQ(inspected["length"], 3);
  EXPECT_EQ(inspected["halted"], true);
  EXPECT_EQ(inspected["head"]["id"], ids[0]);
  EXPECT_EQ(inspected["head"]["data"]["poison"], true);
  EXPECT_EQ(inspected["lease"]["owner"], "w1");
  const CommandRun inspect_text =
      scenarios::run_command(kSeqby, {"admin", "--redis", seed_, "--cluster", "--key-layout",
                                      "cluster", "inspect", kCategory, halting.key});
  ASSERT_EQ(inspect_text.exit_code, 0) << inspect_text.err;
  EXPECT_NE(inspect_text.out.find("partition " + halting.stream() + " group g\n"),
            std::string::npos)
      << inspect_text.out;

  // skip: the head acknowledged, the halt cleared; the worker goes on and commits the correction.
  json skipped = admin_json({"skip", kCategory, halting.key, ids[0]});
  ASSERT_TRUE(skipped.is_object());
  EXPECT_EQ(skipped["halt_cleared"], true);
  const std::string halting_sink = sink_key_name(halting, kGroup);
  // ... and halts again on the second poison (seq 2).
  ASSERT_TRUE(cluster_.wait_until(
      [&] {
        return reader.text({"HGET", halting_sink, "last_seq"}) == "1" &&
               reader.text({"HGET", halt, "id"}) == ids[2];
      },
      60000, "acct-2's correction committed and the second poison halted"))
      << cluster_.error() << "\n"
      << worker.log();
  EXPECT_EQ(reader.text({"HGET", effects_hash_name(halting, kGroup), "1"}), ids[1]);

  // dlq: the second poison moved to C:{K}:dlq, listed and shown there.
  json moved = admin_json({"dlq", kCategory, halting.key, ids[2]});
  ASSERT_TRUE(moved.is_object());
  EXPECT_EQ(moved["dlq"], halting.dlq());
  EXPECT_EQ(moved["halt_cleared"], true);
  json dlq = admin_json({"dlq-list", kCategory, halting.key});
  ASSERT_TRUE(dlq.is_object());
  EXPECT_EQ(dlq["dlq"], halting.dlq());
  EXPECT_EQ(dlq["length"], 1);
  ASSERT_EQ(dlq["entries"].size(), 1u);
  EXPECT_EQ(dlq["entries"][0]["fields"]["source_id"], ids[2]);
  EXPECT_EQ(dlq["entries"][0]["fields"]["group"], kGroup);
  const std::string dlq_id = moved["dlq_id"];
  json shown = admin_json({"dlq-show", kCategory, halting.key, dlq_id});
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown["data"]["seq"], 2);
  // The operator's resolutions are in the unit's journal (its slot), as on one server.
  Result<Reply> journal = reader.run({"XRANGE", journal_stream_name(halting), "-", "+"});
  ASSERT_TRUE(journal.ok());
  std::vector<std::string> resolutions;  // the journal's skip and dlq records, in order
  for (const Reply& entry : journal.value().elements) {
    const std::vector<Reply>& fields = entry.elements[1].elements;
    for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
      const std::string& value = fields[f + 1].str;
      if (fields[f].str == "op" && (value == "skip" || value == "dlq")) {
        resolutions.push_back(value);
      }
    }
  }
  EXPECT_EQ(resolutions, (std::vector<std::string>{"skip", "dlq"}));

  // dlq-replay: the copy is appended to the stream in the unit's slot between an intent opened
  // and closed in the index's slot (as a publish), the DLQ entry deleted, no intent left open.
  const CommandRun replay =
      admin({"dlq-replay", kCategory, halting.key, dlq_id, "--after-later-events"});
  EXPECT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_EQ(reader.integer({"XLEN", halting.dlq()}), 0);
  EXPECT_EQ(reader.integer({"XLEN", halting.stream()}), 4);
  EXPECT_EQ(reader.integer({"SISMEMBER", halting.index(), halting.key}), 1);
  EXPECT_EQ(reader.integer({"HEXISTS", publishing_hash_name(kCategory), halting.key}), 0);
  Result<Reply> last = reader.run({"XREVRANGE", halting.stream(), "+", "-", "COUNT", "1"});
  ASSERT_TRUE(last.ok() && last.value().elements.size() == 1);
  const std::vector<Reply>& copied = last.value().elements[0].elements[1].elements;
  std::string copied_data;
  for (std::size_t f = 0; f + 1 < copied.size(); f += 2) {
    if (copied[f].str == "data") copied_data = copied[f + 1].str;
    EXPECT_NE(copied[f].str, "source_id") << "the DLQ's own fields are not copied";
  }
  EXPECT_NE(copied_data.find("\"seq\":2"), std::string::npos) << copied_data;
  // A second replay of the same id finds nothing and closes its own intent again.
  const CommandRun again =
      admin({"dlq-replay", kCategory, halting.key, dlq_id, "--after-later-events"});
  EXPECT_EQ(again.exit_code, 2) << again.out << again.err;
  EXPECT_EQ(reader.integer({"HEXISTS", publishing_hash_name(kCategory), halting.key}), 0);

  // An unknown key is still named as such, from its own slot and the index's.
  const CommandRun unknown = admin({"inspect", kCategory, "acct-9"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown partition: no stream " + partition_of("acct-9").stream()),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(worker.terminate(), 0) << worker.log();
}

TEST(CliAdminClusterUsage, ClusterWithoutTheClusterLayoutIsAUsageError) {
  // Nothing listens on port 1: the refusal comes before any connection.
  for (const std::vector<std::string>& layout :
       {std::vector<std::string>{}, std::vector<std::string>{"--key-layout", "flat"}}) {
    std::vector<std::string> args{"admin", "--redis", "redis://127.0.0.1:1", "--cluster"};
    args.insert(args.end(), layout.begin(), layout.end());
    args.insert(args.end(), {"partitions", kCategory});
    const CommandRun done = scenarios::run_command(kSeqby, args);
    EXPECT_EQ(done.exit_code, 2);
    EXPECT_EQ(done.err,
              "seqby admin: --cluster needs --key-layout cluster (with the flat names a "
              "partition's keys and its category's index are in different hash slots)\n");
  }
  const CommandRun bad =
      scenarios::run_command(kSeqby, {"admin", "--redis", "redis://127.0.0.1:1", "--key-layout",
                                      "slots", "partitions", kCategory});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "seqby admin: --key-layout: unknown layout 'slots'; known: flat, cluster\n");
}

}  // namespace
}  // namespace seqby::apps
