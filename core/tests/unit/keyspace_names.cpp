// The keyspace (seqby/core/keyspace.h): every key name seqby builds, spelled as DESIGN.md section
// 3 and docs/ARCHITECTURE.md name them, and the two reverse parses the simulator relies on.
#include <gtest/gtest.h>

#include "seqby/core/keyspace.h"

namespace seqby {
namespace {

TEST(Keyspace, NamesEveryKeyOfAPartitionAndItsGroup) {
  const PartitionRef p{"order", "client-1"};
  EXPECT_EQ(p.stream(), "order:client-1");
  EXPECT_EQ(p.lease(), "order:client-1:__lease__");
  EXPECT_EQ(lease_key_name("order", "client-1", ""), "order:client-1:__lease__");
  EXPECT_EQ(lease_key_name("order", "client-1", "billing"), "order:client-1:__lease__:billing");
  EXPECT_EQ(p.fence(), "order:client-1:__fence__");
  EXPECT_EQ(p.dlq(), "order:client-1:dlq");
  EXPECT_EQ(p.index(), "order:__partitions__");
  EXPECT_EQ(sink_key_name(p, "billing"), "order:client-1:__sink__:billing");
  EXPECT_EQ(effects_hash_name(p, "billing"), "order:client-1:__effects__:billing");
  EXPECT_EQ(halt_key_name(p, "billing"), "order:client-1:__halt__:billing");
  EXPECT_EQ(inprogress_key_name(p, "billing"), "order:client-1:__inprogress__:billing");
  EXPECT_EQ(members_set_name("order", "billing"), "order:__members__:billing");
  EXPECT_EQ(member_key_name("order", "billing", "w1"), "order:__member__:billing:w1");
}

TEST(Keyspace, NamesAProcessManagersUnitAndTheHistoryStream) {
  const PartitionRef unit{pm_lease_category("fulfil"), "order-7"};
  EXPECT_EQ(unit.lease(), "__pm__:fulfil:order-7:__lease__");
  EXPECT_EQ(unit.fence(), "__pm__:fulfil:order-7:__fence__");
  EXPECT_EQ(inprogress_key_name(unit, "fulfil"), "__pm__:fulfil:order-7:__inprogress__:fulfil");
  EXPECT_EQ(kHistoryStreamName, "seqby:history");
  EXPECT_EQ(history_stream_name("order"), "seqby:history:order");
}

TEST(Keyspace, ParsesWhatItBuildsForTheStamping) {
  const PartitionRef p{"a:b", "k-1"};
  const std::optional<PartitionRef> split = split_partition_stream(p.stream());
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(*split, p);
  EXPECT_FALSE(split_partition_stream("order").has_value());
  const std::optional<PartitionGroup> sink = parse_sink_key_name(sink_key_name(p, "g"));
  ASSERT_TRUE(sink.has_value());
  EXPECT_EQ(sink->partition, p);
  EXPECT_EQ(sink->group, "g");
  EXPECT_FALSE(parse_sink_key_name(halt_key_name(p, "g")).has_value());
}

}  // namespace
}  // namespace seqby
