// The simulated server in a case file (CaseServer): a case saved from a cluster run names its key
// layout and shards, reads them back, and a case of one flat server is the file it always was;
// a bad server is refused naming the field.
#include <gtest/gtest.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "seqby/scenarios/case_io.h"

namespace seqby::scenarios {
namespace {

sim::SimCase small_case() {
  sim::CaseTemplate t;
  t.key_count = 2;
  t.event_count = 6;
  return sim::generate_case(4, t);
}

// The case written for one flat server, then given `server_json` as its "server" member; the
// error message of reading it back ("" if it loaded).
std::string load_with_server(const nlohmann::ordered_json& server_json) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(case_to_json(small_case()));
  j["server"] = server_json;
  CaseServer server;
  Result<sim::SimCase> r = case_from_json(j.dump(2), "case.json", &server);
  return r.ok() ? "" : r.error().message;
}

TEST(CaseIoServer, AClusterCaseNamesItsServerAfterItsVariantAndReadsItBack) {
  const sim::SimCase c = small_case();
  const CaseServer cluster{KeyLayout::cluster, 3};
  const std::string text = case_to_json(c, cluster);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  ASSERT_TRUE(j.contains("server")) << text;
  EXPECT_EQ(j["server"],
            nlohmann::ordered_json::parse(R"({"key_layout": "cluster", "cluster_shards": 3})"));
  auto variant = j.find("variant");
  ASSERT_NE(variant, j.end());
  EXPECT_EQ(std::next(variant).key(), "server");

  CaseServer read;
  Result<sim::SimCase> back = case_from_json(text, "case.json", &read);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(read, cluster);
  EXPECT_EQ(case_to_json(back.value(), read), text);
  EXPECT_EQ(back.value().events, c.events);

  // The cluster layout on one server (no shards) is a server of its own too.
  const CaseServer one_node{KeyLayout::cluster, 0};
  ASSERT_TRUE(case_from_json(case_to_json(c, one_node), "case.json", &read).ok());
  EXPECT_EQ(read, one_node);
}

TEST(CaseIoServer, OneFlatServerIsLeftOffAndAFileWithoutOneReadsAsIt) {
  const sim::SimCase c = small_case();
  const std::string text = case_to_json(c, CaseServer{});
  EXPECT_EQ(text, case_to_json(c));
  EXPECT_FALSE(nlohmann::ordered_json::parse(text).contains("server")) << text;
  CaseServer read{KeyLayout::cluster, 5};  // overwritten by the file's (none: one flat server)
  ASSERT_TRUE(case_from_json(text, "case.json", &read).ok());
  EXPECT_EQ(read, CaseServer{});
}

TEST(CaseIoServer, ABadServerIsRefusedNamingTheField) {
  EXPECT_EQ(load_with_server(R"({"key_layout": "cluster", "cluster_shards": 2})"_json), "");
  EXPECT_EQ(load_with_server(R"({"key_layout": "ring"})"_json),
            "case.json: field 'server.key_layout': unknown key layout \"ring\" (known: flat, "
            "cluster)");
  EXPECT_EQ(load_with_server(R"({"key_layout": "flat", "cluster_shards": 3})"_json),
            "case.json: field 'server': a simulated cluster of 3 shards needs the cluster key "
            "layout (with flat names a partition and its index are in different slots)");
  EXPECT_EQ(load_with_server(R"({"key_layout": "cluster", "cluster_shards": 17})"_json),
            "case.json: field 'server': at most 16 shards, got 17");
  EXPECT_EQ(load_with_server(R"({"key_layout": "cluster", "shards": 3})"_json),
            "case.json: field 'server.shards': unknown field");
  EXPECT_EQ(load_with_server(R"({"cluster_shards": "3"})"_json),
            "case.json: field 'server.cluster_shards': expected an unsigned integer, got \"3\"");
  EXPECT_EQ(load_with_server(3), "case.json: field 'server': expected an object, got 3");
}

}  // namespace
}  // namespace seqby::scenarios
