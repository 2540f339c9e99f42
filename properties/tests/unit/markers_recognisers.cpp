// The typed recognisers of markers.h the scenarios use instead of matching words in `detail`: a
// crash fault of one node, and the engine's partition-count warning with its numbers.
#include <gtest/gtest.h>

#include "seqby/properties/markers.h"

namespace seqby::properties {
namespace {

TEST(Markers, CrashesAreRecognisedByNode) {
  HistoryRecord crash;
  crash.op = HistoryOp::fault;
  crash.node = "w1";
  crash.detail = "crash sigkill";
  EXPECT_TRUE(is_crash_of(crash, "w1"));
  EXPECT_FALSE(is_crash_of(crash, "w2"));
  crash.detail = "crashed";
  EXPECT_FALSE(is_crash(crash));
}

TEST(Markers, PartitionCountWarningIsParsed) {
  HistoryRecord warn;
  warn.op = HistoryOp::warn;
  warn.node = "w1";
  warn.detail = "live partitions 5 over threshold 3";
  const std::optional<PartitionCountWarning> parsed = parse_partition_count_warning(warn);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->partitions, 5u);
  EXPECT_EQ(parsed->threshold, 3u);
  for (const char* other : {"live partitions x over threshold 3", "live partitions 5",
                            "live partitions 5 over threshold 3 more", "stale lease"}) {
    warn.detail = other;
    EXPECT_FALSE(parse_partition_count_warning(warn).has_value()) << other;
  }
  warn.detail = "live partitions 5 over threshold 3";
  warn.op = HistoryOp::fault;
  EXPECT_FALSE(parse_partition_count_warning(warn).has_value());
}

}  // namespace
}  // namespace seqby::properties
