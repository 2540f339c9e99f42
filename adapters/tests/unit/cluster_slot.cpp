// Redis Cluster hash slots and command routing (seqby/broker/cluster_slot.h), against the values
// Redis documents (CLUSTER KEYSLOT examples, the cluster specification's hash tag cases); the
// cluster tests compare key_slot with a real node's CLUSTER KEYSLOT as well.
#include "seqby/broker/cluster_slot.h"

#include <gtest/gtest.h>

namespace seqby::redis {
namespace {

TEST(ClusterSlot, Crc16IsXmodem) {
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);  // the specification's check value
  EXPECT_EQ(crc16_xmodem(""), 0);
}

TEST(ClusterSlot, KeySlotMatchesRedisDocumentedValues) {
  EXPECT_EQ(key_slot("somekey"), 11058);
  EXPECT_EQ(key_slot("foo{hash_tag}"), 2515);
  EXPECT_EQ(key_slot("bar{hash_tag}"), 2515);
  EXPECT_EQ(key_slot("{user1}.following"), 8106);
  EXPECT_EQ(key_slot("a"), 15495);
  EXPECT_EQ(key_slot("b"), 3300);
}

TEST(ClusterSlot, HashTagFollowsTheSpecification) {
  EXPECT_EQ(hash_tag("{user1000}.following"), "user1000");
  EXPECT_EQ(hash_tag("{user1000}.followers"), "user1000");
  EXPECT_EQ(hash_tag("foo{}{bar}"), "foo{}{bar}");  // empty tag: the whole key
  EXPECT_EQ(hash_tag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(hash_tag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(hash_tag("no-tag"), "no-tag");
  EXPECT_EQ(hash_tag("open{only"), "open{only");
  // A partition's keys with a tagged key share one slot: orders:{p1}, its lease, fence, sink.
  EXPECT_EQ(key_slot("orders:{p1}"), key_slot("orders:{p1}:__lease__"));
  EXPECT_EQ(key_slot("orders:{p1}"), key_slot("orders:{p1}:__sink__:g"));
  EXPECT_EQ(key_slot("orders:{p1}"), key_slot("p1"));
}

TEST(ClusterSlot, SingleKeyCommandsRouteByTheirKey) {
  CommandRoute get = route_command({"get", "somekey"});
  EXPECT_EQ(get.kind, CommandRoute::Kind::slot);
  EXPECT_EQ(get.slot, 11058);
  CommandRoute xgroup = route_command({"XGROUP", "CREATE", "somekey", "g", "0", "MKSTREAM"});
  EXPECT_EQ(xgroup.kind, CommandRoute::Kind::slot);
  EXPECT_EQ(xgroup.slot, 11058);
  CommandRoute xinfo = route_command({"XINFO", "GROUPS", "somekey"});
  EXPECT_EQ(xinfo.slot, 11058);
  CommandRoute xpending = route_command({"XPENDING", "somekey", "g", "-", "+", "1"});
  EXPECT_EQ(xpending.keys, std::vector<std::string>{"somekey"});
}

TEST(ClusterSlot, ScriptsRouteByTheKeysAfterNumkeys) {
  CommandRoute route =
      route_command({"EVALSHA", "abc", "2", "o:{p}", "o:{p}:__lease__", "argv1", "a"});
  EXPECT_EQ(route.kind, CommandRoute::Kind::slot);
  EXPECT_EQ(route.slot, key_slot("p"));
  EXPECT_EQ(route.keys, (std::vector<std::string>{"o:{p}", "o:{p}:__lease__"}));
  // ARGV "a" is not a key: no CROSSSLOT for it.
  EXPECT_EQ(route_command({"EVAL", "return 1", "0"}).kind, CommandRoute::Kind::any_master);
  EXPECT_EQ(route_command({"EVALSHA", "abc", "3", "k"}).kind, CommandRoute::Kind::refused);
  EXPECT_EQ(route_command({"EVALSHA", "abc", "x", "k"}).kind, CommandRoute::Kind::refused);
}

TEST(ClusterSlot, StreamReadsRouteByTheStreamsAfterStreams) {
  CommandRoute read =
      route_command({"XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "o:{p}", ">"});
  EXPECT_EQ(read.kind, CommandRoute::Kind::slot);
  EXPECT_EQ(read.keys, std::vector<std::string>{"o:{p}"});
  CommandRoute wake =
      route_command({"XREAD", "COUNT", "1", "BLOCK", "100", "STREAMS", "a", "b", "0-0", "0-0"});
  ASSERT_EQ(wake.kind, CommandRoute::Kind::refused);
  EXPECT_EQ(wake.refusal.rfind("CROSSSLOT", 0), 0u) << wake.refusal;
  EXPECT_NE(wake.refusal.find("\"a\" slot 15495"), std::string::npos) << wake.refusal;
  EXPECT_NE(wake.refusal.find("\"b\" slot 3300"), std::string::npos) << wake.refusal;
  EXPECT_EQ(route_command({"XREAD", "STREAMS", "a"}).kind, CommandRoute::Kind::refused);
}

TEST(ClusterSlot, MultiKeyCommandsAcrossSlotsAreRefusedNamingTheKeys) {
  CommandRoute route = route_command({"MGET", "a", "b"});
  ASSERT_EQ(route.kind, CommandRoute::Kind::refused);
  EXPECT_EQ(route.refusal.rfind("CROSSSLOT", 0), 0u);
  EXPECT_NE(route.refusal.find("MGET"), std::string::npos);
  EXPECT_EQ(route_command({"DEL", "x{t}", "y{t}"}).kind, CommandRoute::Kind::slot);
  EXPECT_EQ(route_command({"MSET", "x{t}", "1", "y{t}", "2"}).kind, CommandRoute::Kind::slot);
  EXPECT_EQ(route_command({"MSET", "a", "1", "b", "2"}).kind, CommandRoute::Kind::refused);
}

TEST(ClusterSlot, CommandsWithoutKeysOrOfEveryNodeOrOfOneConnection) {
  EXPECT_EQ(route_command({"PING"}).kind, CommandRoute::Kind::any_master);
  EXPECT_EQ(route_command({"TIME"}).kind, CommandRoute::Kind::any_master);
  EXPECT_EQ(route_command({"SCRIPT", "LOAD", "return 1"}).kind, CommandRoute::Kind::all_masters);
  EXPECT_EQ(route_command({"SCRIPT", "FLUSH"}).kind, CommandRoute::Kind::all_masters);
  EXPECT_EQ(route_command({"KEYS", "*"}).kind, CommandRoute::Kind::all_masters);
  for (const Command& command : std::vector<Command>{{"MULTI"},
                                                     {"WATCH", "k"},
                                                     {"SELECT", "1"},
                                                     {"WAIT", "1", "100"},
                                                     {"SCAN", "0"},
                                                     {"SCRIPT", "KILL"},
                                                     {"NOSUCHCOMMAND", "k"},
                                                     {}}) {
    CommandRoute route = route_command(command);
    EXPECT_EQ(route.kind, CommandRoute::Kind::refused) << (command.empty() ? "" : command[0]);
    EXPECT_EQ(route.refusal.rfind("ERR seqby cluster link", 0), 0u) << route.refusal;
  }
}

}  // namespace
}  // namespace seqby::redis
