// The cluster key layout (seqby/core/keyspace.h, docs/ARCHITECTURE.md "The cluster key layout"):
// every key of one lease unit in the unit's hash slot, the category's reap keys in the index's
// slot, Redis Cluster's own slot function, and the reverse parses of tagged names.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/keyspace.h"
#include "seqby/core/lease.h"

namespace seqby {
namespace {

TEST(KeyspaceCluster, HashSlotIsRedisClustersCrc16OfTheKeyOrItsTag) {
  // Values Redis documents or its tests assert (cluster spec; tests/unit/cluster/scripting.tcl).
  EXPECT_EQ(key_hash_slot("123456789"), 12739);
  EXPECT_EQ(key_hash_slot("foo"), 12182);
  EXPECT_EQ(key_hash_slot("bar"), 5061);
  EXPECT_EQ(key_hash_slot("{foo}bar"), key_hash_slot("foo"));
  EXPECT_EQ(key_hash_slot("x{foo}y{bar}"), key_hash_slot("foo"));  // the first tag only
  EXPECT_EQ(key_hash_slot("{}foo"), key_hash_slot("{}foo"));
  EXPECT_NE(key_hash_slot("{}foo"), key_hash_slot("foo"));  // an empty tag is no tag
  EXPECT_EQ(key_hash_slot("foo{"), key_hash_slot("foo{"));
}

TEST(KeyspaceCluster, EveryKeyOfAPartitionSharesItsSlot) {
  const PartitionRef p{"order", "client-1", KeyLayout::cluster};
  EXPECT_EQ(p.stream(), "order:{client-1}");
  EXPECT_EQ(p.lease(), "order:{client-1}:__lease__");
  EXPECT_EQ(p.fence(), "order:{client-1}:__fence__");
  EXPECT_EQ(p.dlq(), "order:{client-1}:dlq");
  EXPECT_EQ(p.backfill_lane(), "order:{client-1}:backfill");
  EXPECT_EQ(p.index(), "order:__partitions__");
  const std::vector<std::string> unit_keys{
      p.stream(),
      p.lease(),
      lease_key_name(p.category, p.key, "billing", p.layout),
      p.fence(),
      p.dlq(),
      p.backfill_lane(),
      sink_key_name(p, "billing"),
      effects_hash_name(p, "billing"),
      halt_key_name(p, "billing"),
      inprogress_key_name(p, "billing"),
      journal_stream_name(p),
  };
  for (const std::string& key : unit_keys) {
    EXPECT_EQ(key_hash_slot(key), key_hash_slot("client-1")) << key;
  }
  EXPECT_EQ(key_hash_slot(reaping_set_name("order")), key_hash_slot(p.index()));
  EXPECT_EQ(key_hash_slot(publishing_hash_name("order")), key_hash_slot(p.index()));
  EXPECT_EQ(reaping_set_name("order"), "{order:__partitions__}:__reaping__");
  EXPECT_EQ(publishing_hash_name("order"), "{order:__partitions__}:__publishing__");
  EXPECT_EQ(key_hash_slot(members_set_name("order", "billing", KeyLayout::cluster)),
            key_hash_slot(member_key_name("order", "billing", "w1", KeyLayout::cluster)));
}

TEST(KeyspaceCluster, AProcessManagersStreamsAndLeaseShareTheValuesSlot) {
  Lease lease{PartitionRef{"order", "x-7", KeyLayout::cluster}, "", "w1", 3, "fulfil"};
  EXPECT_EQ(lease.key(), "__pm__:fulfil:{x-7}:__lease__");
  EXPECT_EQ(lease.unit().fence(), "__pm__:fulfil:{x-7}:__fence__");
  const Lease payment = lease.on("payment");
  EXPECT_EQ(payment.partition.stream(), "payment:{x-7}");
  for (const std::string& key :
       {lease.key(), lease.partition.stream(), payment.partition.stream(),
        journal_stream_name(lease.unit()), inprogress_key_name(lease.unit(), "fulfil")}) {
    EXPECT_EQ(key_hash_slot(key), key_hash_slot("x-7")) << key;
  }
}

TEST(KeyspaceCluster, TheFlatLayoutIsTheDefaultAndUnchanged) {
  const PartitionRef flat{"order", "client-1"};
  EXPECT_EQ(flat.layout, KeyLayout::flat);
  EXPECT_EQ(flat.stream(), "order:client-1");
  EXPECT_EQ(flat.lease(), lease_key_name("order", "client-1"));
  EXPECT_EQ(members_set_name("order", "billing"), "order:__members__:billing");
  EXPECT_EQ(parse_key_layout("cluster"), KeyLayout::cluster);
  EXPECT_EQ(parse_key_layout("flat"), KeyLayout::flat);
  EXPECT_FALSE(parse_key_layout("tagged").has_value());
  EXPECT_STREQ(key_layout_name(KeyLayout::cluster), "cluster");
}

TEST(KeyspaceCluster, ParsesTaggedNamesBackForTheStamping) {
  const PartitionRef p{"a:b", "k-1", KeyLayout::cluster};
  const std::optional<PartitionRef> split = split_partition_stream(p.stream(), KeyLayout::cluster);
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(*split, p);
  EXPECT_FALSE(split_partition_stream("a:k-1", KeyLayout::cluster).has_value());
  const std::optional<PartitionGroup> sink =
      parse_sink_key_name(sink_key_name(p, "g"), KeyLayout::cluster);
  ASSERT_TRUE(sink.has_value());
  EXPECT_EQ(sink->partition, p);
  EXPECT_EQ(sink->group, "g");
}

}  // namespace
}  // namespace seqby
