// The category's subscriber set C:__subscribers__ (the groups the reaper waits for): its name,
// and that parsing never takes it for a partition.
#include <gtest/gtest.h>

#include "seqby/core/naming.h"

namespace seqby {
namespace {

TEST(SubscribersNaming, ComposesTheSetOfACategory) {
  EXPECT_EQ(subscribers_set_name("order"), "order:__subscribers__");
  EXPECT_EQ(subscribers_set_name("a:b"), "a:b:__subscribers__");
  EXPECT_EQ((PartitionRef{"order", "client-1"}.subscribers()), "order:__subscribers__");
}

TEST(SubscribersNaming, IsNeverParsedAsAPartition) {
  EXPECT_EQ(parse_stream_name("order:__subscribers__").kind, NameKind::unknown);
  EXPECT_EQ(parse_stream_name_in("a:b:__subscribers__", "a:b").kind, NameKind::unknown);
}

}  // namespace
}  // namespace seqby
