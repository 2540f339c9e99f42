// The chaos run's second opinion, judge_sinks, against a real redis-server: an effect sink that
// holds seqs 1..n in publish order up to the last committable event passes; a sink that stopped
// short, skipped a seq, applied an event out of its place, or committed past a poison event is
// each named with its property and key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../src/chaos_detail.h"
#include "redis_server.h"
#include "seqby/core/keyspace.h"
#include "seqby_binary.h"

namespace seqby::scenarios {
namespace {

using chaos_detail::ChaosLane;

class ChaosSinks : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.ok()) << server_.error(); }

  // A lane of `n` published events (ids e1..en) whose sink holds `committed` (effect per seq).
  ChaosLane lane(const std::string& key, std::size_t n, const std::vector<std::string>& committed,
                 std::int64_t poison_seq = 0) {
    ChaosLane l;
    l.category = driver_.category();
    l.key = key;
    for (std::size_t i = 1; i <= n; ++i) l.ids.push_back("e" + std::to_string(i));
    l.poison_seq = poison_seq;
    const PartitionRef partition{l.category, key};
    for (std::size_t i = 0; i < committed.size(); ++i) {
      driver_.run({"HSET", effects_hash_name(partition, driver_.group()), std::to_string(i + 1),
                   committed[i]});
    }
    if (!committed.empty()) {
      driver_.run({"HSET", sink_key_name(partition, driver_.group()), "last_seq",
                   std::to_string(committed.size())});
    }
    return l;
  }

  std::vector<std::string> judged(const std::vector<ChaosLane>& lanes) {
    ChaosRunResult result;
    result.seed = 9;
    chaos_detail::judge_sinks(driver_, lanes, &result);
    std::vector<std::string> out;
    for (const ChaosViolation& v : result.violations) out.push_back(v.property + " " + v.key);
    return out;
  }

  testing::RedisServer server_;
  RedisScenarioDriver driver_{server_.url(), kSeqby, "chaos_sinks"};
};

TEST_F(ChaosSinks, InOrderUpToTheTargetPasses) {
  const std::vector<ChaosLane> lanes = {lane("a", 3, {"e1", "e2", "e3"}),
                                        lane("b", 4, {"e1", "e2"}, /*poison_seq=*/3)};
  EXPECT_TRUE(judged(lanes).empty());
}

TEST_F(ChaosSinks, EachWrongSinkIsNamed) {
  const std::string c = driver_.category() + ":";
  const std::vector<ChaosLane> lanes = {
      lane("short", 3, {"e1", "e2"}),           // stopped before the end
      lane("swapped", 2, {"e2", "e1"}),         // applied out of publish order
      lane("past_poison", 3, {"e1", "e2"}, 2),  // committed the poison event
  };
  const std::vector<std::string> expected = {"sink_no_loss " + c + "short",
                                             "sink_order " + c + "swapped",
                                             "sink_poison_halt " + c + "past_poison"};
  EXPECT_EQ(judged(lanes), expected);
}

TEST_F(ChaosSinks, AGapInTheSinkIsAnOrderViolation) {
  ChaosLane gap = lane("gap", 3, {"e1"});
  const PartitionRef partition{gap.category, gap.key};
  driver_.run({"HSET", effects_hash_name(partition, driver_.group()), "3", "e3"});
  driver_.run({"HSET", sink_key_name(partition, driver_.group()), "last_seq", "3"});
  const std::vector<std::string> got = judged({gap});
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.front(), "sink_order " + gap.category + ":gap");
}

}  // namespace
}  // namespace seqby::scenarios
