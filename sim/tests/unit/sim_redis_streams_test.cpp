// SimRedis streams and consumer groups: ids from the server clock, ranges, pending entries with
// delivery time and count, XCLAIM, XAUTOCLAIM's cursor and 10*COUNT scan limit, DELCONSUMER
// discarding pending entries, and XINFO, with Redis 7.0's exact replies and error texts.
#include <gtest/gtest.h>

#include "seqby/sim/sim_redis.h"
#include "sim_redis_test_util.h"

namespace seqby::sim {
namespace {

using namespace testing;

class SimRedisStreamsTest : public ::testing::Test {
 protected:
  Reply run(redis::Command c) { return redis.execute(c); }
  ManualClock clock{1'000};
  SimRedis redis{clock};
};

TEST_F(SimRedisStreamsTest, XaddIdsAreMonotonicOnTheServerClock) {
  EXPECT_EQ(run({"xadd", "s", "*", "f", "v"}), bulk("1000-0"));
  EXPECT_EQ(run({"xadd", "s", "*", "f", "v"}), bulk("1000-1"));
  clock.advance_ms(5);
  EXPECT_EQ(run({"xadd", "s", "*", "f", "v"}), bulk("1005-0"));
  EXPECT_EQ(run({"xadd", "s", "1005-0", "f", "v"}),
            error("ERR The ID specified in XADD is equal or smaller than the target stream top "
                  "item"));
  EXPECT_EQ(run({"xadd", "s", "1005-*", "f", "v"}), bulk("1005-1"));
  EXPECT_EQ(run({"xadd", "s", "2000", "f", "v"}), bulk("2000-0"));
  EXPECT_EQ(run({"xadd", "s", "*", "f", "v"}), bulk("2000-1"));  // clock behind the top id
  EXPECT_EQ(run({"xadd", "t", "0-0", "f", "v"}),
            error("ERR The ID specified in XADD must be greater than 0-0"));
  EXPECT_EQ(run({"xadd", "t", "bad", "f", "v"}),
            error("ERR Invalid stream ID specified as stream command argument"));
  EXPECT_EQ(run({"xadd", "t", "*", "f"}),
            error("ERR wrong number of arguments for 'xadd' command"));
  EXPECT_EQ(run({"xadd", "t", "nomkstream", "*", "f", "v"}), nil());
  EXPECT_EQ(run({"exists", "t"}), integer(0));
  EXPECT_EQ(run({"xlen", "s"}), integer(6));
}

TEST_F(SimRedisStreamsTest, RangesAndTrimming) {
  for (const char* id : {"1-1", "1-2", "2-0", "3-0"}) run({"xadd", "s", id, "n", id});
  EXPECT_EQ(run({"xrange", "s", "(1-1", "2"}),
            arr({entry("1-2", {"n", "1-2"}), entry("2-0", {"n", "2-0"})}));
  EXPECT_EQ(run({"xrevrange", "s", "+", "-", "count", "1"}), arr({entry("3-0", {"n", "3-0"})}));
  EXPECT_EQ(run({"xrange", "s", "-", "+", "count", "0"}), nil());
  EXPECT_EQ(run({"xrange", "nokey", "-", "+"}), arr({}));
  EXPECT_EQ(run({"xdel", "s", "1-2", "9-9"}), integer(1));
  EXPECT_EQ(run({"xadd", "s", "maxlen", "2", "4-0", "n", "4-0"}), bulk("4-0"));
  EXPECT_EQ(run({"xrange", "s", "-", "+"}),
            arr({entry("3-0", {"n", "3-0"}), entry("4-0", {"n", "4-0"})}));
  EXPECT_EQ(run({"xadd", "s", "maxlen", "~", "1", "5-0", "n", "5-0"}), bulk("5-0"));
  EXPECT_EQ(run({"xlen", "s"}), integer(3));  // ~ only drops whole 100-entry nodes
  EXPECT_EQ(run({"xtrim", "s", "maxlen", "1"}), integer(2));
  EXPECT_EQ(run({"xtrim", "s", "foo", "1"}), error("ERR syntax error"));
  EXPECT_EQ(run({"xadd", "s", "limit", "5", "*", "f", "v"}),
            error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"));
  EXPECT_EQ(run({"xtrim", "s", "maxlen", "0"}), integer(1));
  EXPECT_EQ(run({"exists", "s"}), integer(1));  // an empty stream stays
}

TEST_F(SimRedisStreamsTest, ReadGroupTracksPendingEntriesAndDeliveries) {
  for (const char* id : {"1-0", "2-0", "3-0"}) run({"xadd", "s", id, "f", id});
  EXPECT_EQ(run({"xreadgroup", "group", "g", "c", "streams", "s", ">"}),
            error("NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option"));
  EXPECT_EQ(run({"xgroup", "create", "s", "g", "0"}), ok());
  EXPECT_EQ(run({"xgroup", "create", "s", "g", "0"}),
            error("BUSYGROUP Consumer Group name already exists"));
  EXPECT_EQ(run({"xreadgroup", "group", "g", "alice", "count", "2", "streams", "s", ">"}),
            arr({arr({bulk("s"), arr({entry("1-0", {"f", "1-0"}), entry("2-0", {"f", "2-0"})})})}));
  clock.advance_ms(100);
  EXPECT_EQ(run({"xreadgroup", "group", "g", "bob", "streams", "s", ">"}),
            arr({arr({bulk("s"), arr({entry("3-0", {"f", "3-0"})})})}));
  EXPECT_EQ(run({"xreadgroup", "group", "g", "carol", "streams", "s", ">"}), nil());
  clock.advance_ms(50);
  // History re-delivers alice's own pending entries and bumps their delivery count.
  EXPECT_EQ(run({"xreadgroup", "group", "g", "alice", "count", "1", "streams", "s", "0"}),
            arr({arr({bulk("s"), arr({entry("1-0", {"f", "1-0"})})})}));
  EXPECT_EQ(run({"xpending", "s", "g"}), arr({integer(3), bulk("1-0"), bulk("3-0"),
                                              arr({bulks({"alice", "2"}), bulks({"bob", "1"})})}));
  EXPECT_EQ(run({"xpending", "s", "g", "-", "+", "10"}),
            arr({arr({bulk("1-0"), bulk("alice"), integer(0), integer(2)}),
                 arr({bulk("2-0"), bulk("alice"), integer(150), integer(1)}),
                 arr({bulk("3-0"), bulk("bob"), integer(50), integer(1)})}));
  EXPECT_EQ(run({"xpending", "s", "g", "idle", "100", "-", "+", "10", "alice"}),
            arr({arr({bulk("2-0"), bulk("alice"), integer(150), integer(1)})}));
  EXPECT_EQ(run({"xack", "s", "g", "1-0", "1-0", "9-0"}), integer(1));
  EXPECT_EQ(run({"xack", "s", "g", "bad"}),
            error("ERR Invalid stream ID specified as stream command argument"));
  EXPECT_EQ(run({"xdel", "s", "2-0"}), integer(1));
  EXPECT_EQ(run({"xreadgroup", "group", "g", "alice", "streams", "s", "0"}),
            arr({arr({bulk("s"), arr({arr({bulk("2-0"), nil()})})})}));
  EXPECT_EQ(run({"xinfo", "consumers", "s", "g"}),
            arr({arr({bulk("name"), bulk("alice"), bulk("pending"), integer(1), bulk("idle"),
                      integer(0)}),
                 arr({bulk("name"), bulk("bob"), bulk("pending"), integer(1), bulk("idle"),
                      integer(50)})}));
}

TEST_F(SimRedisStreamsTest, XreadServesEntriesAfterTheGivenIds) {
  for (const char* id : {"1-0", "2-0"}) run({"xadd", "s", id, "f", id});
  EXPECT_EQ(run({"xread", "count", "1", "streams", "s", "nokey", "0", "0"}),
            arr({arr({bulk("s"), arr({entry("1-0", {"f", "1-0"})})})}));
  EXPECT_EQ(run({"xread", "streams", "s", "$"}), nil());
  EXPECT_EQ(run({"xread", "block", "10", "streams", "s", "2-0"}), nil());  // never blocks
  EXPECT_EQ(run({"xread", "streams", "s", ">"}),
            error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
                  "<group> <consumer> option."));
  EXPECT_EQ(run({"xread", "count", "1", "streams", "s"}),
            error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                  "specified."));
}

TEST_F(SimRedisStreamsTest, XclaimMovesEntriesAndHonoursMinIdle) {
  for (const char* id : {"1-0", "2-0"}) run({"xadd", "s", id, "f", id});
  run({"xgroup", "create", "s", "g", "0"});
  run({"xreadgroup", "group", "g", "a", "streams", "s", ">"});
  clock.advance_ms(1000);
  EXPECT_EQ(run({"xclaim", "s", "g", "b", "5000", "1-0"}), arr({}));
  EXPECT_EQ(run({"xinfo", "consumers", "s", "g"}).elements.size(), 1u);  // b not created
  EXPECT_EQ(run({"xclaim", "s", "g", "b", "500", "1-0", "2-0", "justid"}), bulks({"1-0", "2-0"}));
  EXPECT_EQ(run({"xclaim", "s", "g", "c", "0", "1-0"}), arr({entry("1-0", {"f", "1-0"})}));
  EXPECT_EQ(run({"xclaim", "s", "g", "c", "0", "2-0", "idle", "300", "retrycount", "9"}),
            arr({entry("2-0", {"f", "2-0"})}));
  EXPECT_EQ(run({"xpending", "s", "g", "-", "+", "10"}),
            arr({arr({bulk("1-0"), bulk("c"), integer(0), integer(2)}),
                 arr({bulk("2-0"), bulk("c"), integer(300), integer(9)})}));
  EXPECT_EQ(run({"xclaim", "s", "g", "c", "0", "1-0", "foo"}),
            error("ERR Unrecognized XCLAIM option 'foo'"));
  EXPECT_EQ(run({"xclaim", "s", "nog", "c", "0", "1-0"}),
            error("NOGROUP No such key 's' or consumer group 'nog'"));
}

TEST_F(SimRedisStreamsTest, XautoclaimScansAtMostTenTimesCount) {
  for (int i = 1; i <= 30; i++) run({"xadd", "s", std::to_string(i) + "-0", "f", "v"});
  run({"xgroup", "create", "s", "g", "0"});
  run({"xreadgroup", "group", "g", "old", "count", "25", "streams", "s", ">"});
  clock.advance_ms(1000);
  run({"xreadgroup", "group", "g", "old", "streams", "s", ">"});  // 26..30 are fresh
  // COUNT 2: 1-0 and 2-0 claimed; the cursor is the next pending entry.
  EXPECT_EQ(run({"xautoclaim", "s", "g", "new", "500", "0", "count", "2", "justid"}),
            arr({bulk("3-0"), bulks({"1-0", "2-0"}), arr({})}));
  // Only fresh entries from 26-0 on: COUNT 1 scans 10 of them at most, claims none.
  EXPECT_EQ(run({"xautoclaim", "s", "g", "new", "500", "26-0", "count", "1"}),
            arr({bulk("0-0"), arr({}), arr({})}));
  EXPECT_EQ(run({"xautoclaim", "s", "g", "new", "500", "3-0", "count", "1", "justid"}),
            arr({bulk("4-0"), bulks({"3-0"}), arr({})}));
  // Ten fresh entries block a COUNT 1 scan: the cursor stops at the eleventh.
  clock.advance_ms(1000);
  for (int i = 31; i <= 45; i++) run({"xadd", "s", std::to_string(i) + "-0", "f", "v"});
  run({"xreadgroup", "group", "g", "old", "streams", "s", ">"});
  EXPECT_EQ(run({"xautoclaim", "s", "g", "new", "1500", "26-0", "count", "1"}),
            arr({bulk("36-0"), arr({}), arr({})}));
  // Deleted entries are dropped from the pending list and reported.
  run({"xdel", "s", "4-0", "5-0"});
  EXPECT_EQ(run({"xautoclaim", "s", "g", "new", "0", "4-0", "count", "3"}),
            arr({bulk("7-0"), arr({entry("6-0", {"f", "v"})}), bulks({"4-0", "5-0"})}));
  // JUSTID does not bump the delivery count; a claim with entries does.
  EXPECT_EQ(run({"xpending", "s", "g", "1-0", "6-0", "10"}),
            arr({arr({bulk("1-0"), bulk("new"), integer(1000), integer(1)}),
                 arr({bulk("2-0"), bulk("new"), integer(1000), integer(1)}),
                 arr({bulk("3-0"), bulk("new"), integer(1000), integer(1)}),
                 arr({bulk("6-0"), bulk("new"), integer(0), integer(2)})}));
  EXPECT_EQ(run({"xautoclaim", "s", "g", "new", "0", "0", "count", "0"}),
            error("ERR COUNT must be > 0"));
  EXPECT_EQ(run({"xautoclaim", "s", "nog", "c", "0", "0"}),
            error("NOGROUP No such key 's' or consumer group 'nog'"));
}

TEST_F(SimRedisStreamsTest, DelconsumerDiscardsItsPendingEntries) {
  for (const char* id : {"1-0", "2-0"}) run({"xadd", "s", id, "f", id});
  run({"xgroup", "create", "s", "g", "0"});
  EXPECT_EQ(run({"xgroup", "createconsumer", "s", "g", "idle"}), integer(1));
  EXPECT_EQ(run({"xgroup", "createconsumer", "s", "g", "idle"}), integer(0));
  run({"xreadgroup", "group", "g", "a", "streams", "s", ">"});
  EXPECT_EQ(run({"xgroup", "delconsumer", "s", "g", "a"}), integer(2));
  EXPECT_EQ(run({"xpending", "s", "g"}), arr({integer(0), nil(), nil(), nil()}));
  EXPECT_EQ(run({"xreadgroup", "group", "g", "b", "streams", "s", ">"}), nil());  // not redelivered
  EXPECT_EQ(run({"xgroup", "delconsumer", "s", "g", "nobody"}), integer(0));
  EXPECT_EQ(run({"xgroup", "delconsumer", "s", "nog", "a"}),
            error("NOGROUP No such consumer group 'nog' for key name 's'"));
  EXPECT_EQ(run({"xgroup", "create", "nokey", "g", "0"}),
            error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
                  "may want to use the MKSTREAM option to create an empty stream automatically."));
  EXPECT_EQ(run({"xgroup", "create", "nokey", "g", "$", "mkstream"}), ok());
  EXPECT_EQ(run({"xgroup", "destroy", "nokey", "g"}), integer(1));
  EXPECT_EQ(run({"xgroup", "destroy", "nokey", "g"}), integer(0));
}

TEST_F(SimRedisStreamsTest, XinfoGroupsReportsEntriesReadAndLag) {
  for (const char* id : {"1-1", "1-2", "2-0"}) run({"xadd", "s", id, "a", "1"});
  run({"xgroup", "create", "s", "g", "0"});
  auto group = [&](Reply read, Reply lag) {
    return arr({arr({bulk("name"), bulk("g"), bulk("consumers"), integer(1), bulk("pending"),
                     integer(2), bulk("last-delivered-id"), bulk("2-0"), bulk("entries-read"),
                     std::move(read), bulk("lag"), std::move(lag)})});
  };
  run({"xreadgroup", "group", "g", "c", "count", "1", "streams", "s", ">"});
  run({"xdel", "s", "1-2"});
  run({"xreadgroup", "group", "g", "c", "streams", "s", ">"});
  EXPECT_EQ(run({"xinfo", "groups", "s"}), group(integer(2), integer(1)));  // as Redis counts
  EXPECT_EQ(run({"xinfo", "stream", "s"}), arr({bulk("length"),
                                                integer(2),
                                                bulk("radix-tree-keys"),
                                                integer(1),
                                                bulk("radix-tree-nodes"),
                                                integer(2),
                                                bulk("last-generated-id"),
                                                bulk("2-0"),
                                                bulk("max-deleted-entry-id"),
                                                bulk("1-2"),
                                                bulk("entries-added"),
                                                integer(3),
                                                bulk("recorded-first-entry-id"),
                                                bulk("1-1"),
                                                bulk("groups"),
                                                integer(1),
                                                bulk("first-entry"),
                                                entry("1-1", {"a", "1"}),
                                                bulk("last-entry"),
                                                entry("2-0", {"a", "1"})}));
  EXPECT_EQ(run({"xinfo", "groups", "nokey"}), error("ERR no such key"));
  EXPECT_EQ(run({"set", "str", "v"}), ok());
  EXPECT_EQ(run({"xinfo", "groups", "str"}), error(kWrongType));
  EXPECT_EQ(run({"xlen", "str"}), error(kWrongType));
}

}  // namespace
}  // namespace seqby::sim
