// A process manager's correlation value is a unit as soon as ONE of its categories has a stream
// for it: a value with events on order only (nothing yet on payment) is taken and served, not
// skipped until every category has seen it; a value with no stream anywhere, or with a key of
// another type in one category, is no unit. RedisBroker with pm_categories on SimRedis, call by
// call (it kills mutate/catalog.txt acquire-many-pm-needs-every-stream).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/keyspace.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

TEST(PmAcquireStreams, AValueWithAStreamInOneCategoryOnlyIsTakenOneWithNoneOrAStringIsNot) {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  std::vector<std::pair<std::string, std::string>> told;
  RedisBrokerOptions options;
  options.pm_categories = {"order", "payment"};
  options.on_no_partition = [&told](const PartitionRef& unit, const std::string& why) {
    told.emplace_back(unit.key, why);
  };
  RedisBroker broker{link, options};
  const std::string units = pm_lease_category("fulfil");
  ASSERT_TRUE(run_now(broker.publish(PartitionRef{"order", "A"}, "created", "{}")).ok());
  ASSERT_TRUE(run_now(broker.publish(PartitionRef{"payment", "C"}, "paid", "{}")).ok());
  redis.execute({"SET", PartitionRef{"order", "C"}.stream(), "not a stream"});

  const std::vector<PartitionRef> values{{units, "A"}, {units, "B"}, {units, "C"}};
  auto got = run_now(broker.acquire_many(values, "", "pm", 3000, 3));
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got.value().size(), 3u);
  EXPECT_TRUE(got.value()[0].has_value()) << "A has events on order: it is a unit";
  EXPECT_FALSE(got.value()[1].has_value());
  EXPECT_FALSE(got.value()[2].has_value());
  const std::vector<std::pair<std::string, std::string>> why{
      {"B", "no stream order:B, payment:B"}, {"C", "order:C is a string, not a stream"}};
  EXPECT_EQ(told, why);
}

}  // namespace
}  // namespace seqby::redis
