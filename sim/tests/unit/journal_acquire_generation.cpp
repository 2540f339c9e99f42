// The decision journal names the generation each acquire handed out: the journal is how a run on
// real Redis is checked (its records are history records, and the fence property is judged by
// generation), so an acquire journaled without its generation would hide which owner held the
// lease when. Through acquire (the one-lease script: Membership::try_acquire) and acquire_many
// (discovery's batch), RedisBroker on SimRedis, call by call (it kills mutate/catalog.txt
// journal-acquire-generation-lost: the journal tests went through acquire_many only).
#include <gtest/gtest.h>

#include <map>
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

struct JournalAcquireGeneration : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  RedisBroker broker{link, journaling()};
  const PartitionRef partition{"order", "k0"};

  static RedisBrokerOptions journaling() {
    RedisBrokerOptions options;
    options.journal_maxlen = 1000;
    options.journal_group = "billing";
    return options;
  }
  // The journal's acquire records, as (node, generation).
  std::vector<std::pair<std::string, std::string>> journaled_acquires() {
    std::vector<std::pair<std::string, std::string>> out;
    Reply journal = redis.execute({"XRANGE", journal_stream_name(partition), "-", "+"});
    for (const Reply& entry : journal.elements) {
      std::map<std::string, std::string> fields;
      const Reply& flat = entry.elements.at(1);
      for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
        fields[flat.elements[i].str] = flat.elements[i + 1].str;
      }
      if (fields["op"] == "acquire") out.emplace_back(fields["node"], fields["generation"]);
    }
    return out;
  }
};

TEST_F(JournalAcquireGeneration, EachAcquireIsJournaledWithTheGenerationItHandedOut) {
  ASSERT_TRUE(run_now(broker.publish(partition, "created", "{\"seq\":1}")).ok());
  auto first = run_now(broker.acquire(partition, "", "a", 3000));
  ASSERT_TRUE(first.ok() && first.value().has_value());
  EXPECT_EQ(first.value()->generation, 1u);
  clock.advance(3001);  // a's lease expired
  auto second = run_now(broker.acquire_many({partition}, "", "b", 3000, 1));
  ASSERT_TRUE(second.ok() && second.value().size() == 1 && second.value()[0].has_value());
  EXPECT_EQ(second.value()[0]->generation, 2u);
  clock.advance(3001);
  auto third = run_now(broker.acquire(partition, "", "c", 3000));
  ASSERT_TRUE(third.ok() && third.value().has_value());
  EXPECT_EQ(third.value()->generation, 3u);

  const std::vector<std::pair<std::string, std::string>> expected{
      {"a", "1"}, {"b", "2"}, {"c", "3"}};
  EXPECT_EQ(journaled_acquires(), expected);
}

}  // namespace
}  // namespace seqby::redis
