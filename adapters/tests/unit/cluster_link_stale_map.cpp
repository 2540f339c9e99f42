// ClusterLink with a slot map read mid-failover, without a server: the map names no master for
// some slots (the master was gone, its replica not yet promoted). A command for such a slot is
// refused without being sent, and the refusal marks the map stale, so the next command reads the
// map again and reaches the promoted master; a link that kept the old map would refuse that slot
// for good (a real-cluster worker test once waited 90 s on it).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "seqby/broker/cluster_link.h"
#include "seqby/broker/cluster_slot.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

// The one node "n:1". Its CLUSTER SLOTS serves slots 0..8191 only until `promoted`, then all of
// them; every other command answers +OK. Counts the CLUSTER SLOTS it answered.
struct Node {
  bool promoted = false;
  int slot_reads = 0;
};

class FakeNode final : public ClusterNodeLink {
 public:
  explicit FakeNode(Node& node) : node_(node) {}
  Task<Result<Reply>> execute(Command command) override {
    if (command.size() == 2 && command[0] == "CLUSTER" && command[1] == "SLOTS") {
      ++node_.slot_reads;
      co_return Reply::array({range(0, node_.promoted ? 16383 : 8191)});
    }
    co_return Reply::status("OK");
  }
  Task<Result<Reply>> execute_asking(Command command) override {
    Result<Reply> reply = co_await execute(std::move(command));
    co_return reply;
  }

 private:
  static Reply range(std::int64_t first, std::int64_t last) {
    return Reply::array({Reply::of_int(first), Reply::of_int(last),
                         Reply::array({Reply::bulk("n"), Reply::of_int(1), Reply::bulk("id-n")})});
  }
  Node& node_;
};

// A key of a slot past 8191.
std::string key_of_an_unserved_slot() {
  for (int i = 0;; ++i) {
    const std::string key = "k" + std::to_string(i);
    if (key_slot(key) > 8191) return key;
  }
}

TEST(ClusterLinkStaleMap, ASlotWithNoMasterIsReadAgainOnTheNextCommand) {
  RealRuntime runtime;
  Node node;
  ClusterLinkOptions options;
  options.refresh_interval_min_ms = 0;
  ClusterLink link(
      runtime, "n", 1,
      [&node](const std::string&, std::uint16_t) { return std::make_unique<FakeNode>(node); },
      options);
  const std::string key = key_of_an_unserved_slot();

  Result<Reply> refused = runtime.block_on(link.execute({"SET", key, "v"}));
  ASSERT_TRUE(refused.ok());
  EXPECT_TRUE(refused.value().is_error_with("CLUSTERDOWN")) << to_string(refused.value());
  EXPECT_EQ(node.slot_reads, 1);

  node.promoted = true;  // the replica took over the slots
  Result<Reply> served = runtime.block_on(link.execute({"SET", key, "v"}));
  ASSERT_TRUE(served.ok());
  EXPECT_EQ(served.value(), Reply::status("OK")) << "the map with no master was kept";
  EXPECT_EQ(node.slot_reads, 2);
}

}  // namespace
}  // namespace seqby::redis
