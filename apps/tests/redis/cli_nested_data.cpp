// Event data is any JSON object (issue 15 item 0) on a real redis-server and real processes:
// `seqby publish` accepts nested objects, arrays and floats and stores them verbatim, refuses a
// partition key that is not a string or an integer (exit 2 naming the attribute, nothing
// written), and a real `seqby worker` serves such entries, whether `seqby publish` wrote them or
// a foreign publisher's plain XADD did, without halting their partition. Every wait is bounded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redis_server.h"
#include "seqby/core/keyspace.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::apps {
namespace {

using scenarios::CommandRun;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using seqby::testing::RedisServer;

// The `data` field of every entry of `stream`, in id order.
std::vector<std::string> data_fields(RedisScenarioDriver& d, const std::string& stream) {
  std::vector<std::string> out;
  const redis::Reply entries = d.run({"XRANGE", stream, "-", "+"});
  for (const redis::Reply& entry : entries.elements) {
    if (entry.elements.size() != 2) continue;
    const std::vector<redis::Reply>& fields = entry.elements[1].elements;
    for (std::size_t f = 0; f + 1 < fields.size(); f += 2) {
      if (fields[f].str == "data") out.push_back(fields[f + 1].str);
    }
  }
  return out;
}

TEST(CliNestedData, PublishStoresNestedDataVerbatimAndAWorkerServesIt) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "nested_publish");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string data = R"({"a":{"b":[1,2.5,null]},"f":1.5e3,"id":"k1","seq":1})";
  const CommandRun published =
      scenarios::run_command(kSeqby, {"publish", "--redis", d.url(), "--category", d.category(),
                                      "--key-field", "id", "--data", data});
  ASSERT_EQ(published.exit_code, 0) << published.err;
  const PartitionRef k1{d.category(), "k1"};
  EXPECT_EQ(data_fields(d, k1.stream()), std::vector<std::string>{data});
  EXPECT_EQ(d.run({"SISMEMBER", k1.index(), "k1"}).integer, 1);

  WorkerProcess* w = d.start_worker("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("k1") == 1; }))
      << "the worker never committed k1 seq 1\n"
      << d.logs();
  const std::string id = published.out.substr(0, published.out.find('\n'));
  EXPECT_EQ(d.effects("k1"), std::vector<std::string>{id});
  EXPECT_EQ(d.run({"EXISTS", halt_key_name(k1, d.group())}).integer, 0) << d.logs();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

TEST(CliNestedData, AForeignPublishersNestedEntryDoesNotHaltItsPartition) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "nested_foreign");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const PartitionRef k2{d.category(), "k2"};
  // A plain XADD, as any language's client writes it: fields in its own order, spaces, escapes.
  const std::vector<std::string> written = {
      R"({"id": "k2", "seq": 1, "deep": {"x": [{"y": 1e-3}, "\u00e9\n"], "z": {}}})",
      R"({"id":"k2","seq":2,"tags":["a",["b",[true,false]]],"price":-12.50})"};
  d.run({"XADD", k2.stream(), "*", "type", "foreign", "data", written[0]});
  d.run({"SADD", k2.index(), "k2"});
  WorkerProcess* w = d.start_worker("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("k2") == 1; }))
      << "the worker never committed k2 seq 1\n"
      << d.logs();
  d.run({"XADD", k2.stream(), "*", "type", "foreign", "data", written[1]});
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("k2") == 2; }))
      << "the partition did not go on to seq 2\n"
      << d.logs();
  EXPECT_EQ(d.effects("k2").size(), 2u);
  EXPECT_EQ(d.run({"EXISTS", halt_key_name(k2, d.group())}).integer, 0) << d.logs();
  EXPECT_EQ(data_fields(d, k2.stream()), written);
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

TEST(CliNestedData, PublishRefusesAKeyThatIsNotAStringOrAnIntegerAndWritesNothing) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "nested_badkey");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  struct Case {
    std::string data;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"id":{"k":1}})",
       "seqby publish: --key-field id: invalid partition key (an object): "
       "rule not_null: a key is a string or an integer\n"},
      {R"({"id":[1]})",
       "seqby publish: --key-field id: invalid partition key (an array): rule "
       "not_null: a key is a string or an integer\n"},
      {R"({"id":2.5})",
       "seqby publish: --key-field id: invalid partition key (a number that is not a 64-bit "
       "integer): rule not_null: a key is a string or an integer\n"},
      {R"({"x":1})",
       "seqby publish: --key-field id: invalid partition key (null): rule not_null: "
       "the key field is absent or null\n"},
      {R"({"id":"k1","a":{"b":[1,]}})",
       "seqby publish: --data: json: expected a value (null, true, false, a number, a string, an "
       "object or an array) at byte 23\n"},
  };
  for (const Case& c : cases) {
    const CommandRun run =
        scenarios::run_command(kSeqby, {"publish", "--redis", d.url(), "--category", d.category(),
                                        "--key-field", "id", "--data", c.data});
    EXPECT_EQ(run.exit_code, 2) << c.data;
    EXPECT_EQ(run.err, c.message) << c.data;
  }
  const CommandRun disagree = scenarios::run_command(
      kSeqby, {"publish", "--redis", d.url(), "--category", d.category(), "--key", "k9",
               "--key-field", "id", "--data", R"({"id":"k1"})"});
  EXPECT_EQ(disagree.exit_code, 2);
  EXPECT_EQ(disagree.err,
            "seqby publish: --key-field id: the data's key \"k1\" is not --key \"k9\"\n");
  EXPECT_TRUE(d.category_keys().empty());
  EXPECT_EQ(d.run({"EXISTS", partition_index_name(d.category())}).integer, 0);
}

}  // namespace
}  // namespace seqby::apps
