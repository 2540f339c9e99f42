// ClusterLink::execute_many without a server: two masters, "a:1" serving slots 0..8191 and
// "b:2" serving 8192..16383. When a's connection fails, the later commands for a answer that
// failure unsent (as a single connection's execute_many does), while the commands for b are
// still sent and answered: one master gone must not withhold the rest of a round (the
// heartbeat's renewals of the leases on live masters, docs/ARCHITECTURE.md "Leases by the
// batch"). And while a does not answer (stopped: its command waits out a timeout), b's commands
// are sent at once, not after a's timeout.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/cluster_link.h"
#include "seqby/broker/cluster_slot.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

// What the test's two nodes saw; `a_down`: a answers every command but CLUSTER SLOTS with a
// lost connection.
struct Nodes {
  bool a_down = false;
  bool a_stalled = false;  // a's commands wait 50 ms, then answer a timeout
  bool a_waiting = false;  // a stalled command of a is waiting now
  std::vector<bool> b_sent_while_a_waited;
  std::vector<std::string> slots_asked;  // the nodes asked CLUSTER SLOTS, in turn
  int a_attempts = 0;  // commands but CLUSTER SLOTS that reached a, failed ones included
  std::vector<std::string> sent_to_a;  // the keys of the commands a received (SET/GET)
  std::vector<std::string> sent_to_b;
};

class FakeNode final : public ClusterNodeLink {
 public:
  FakeNode(Runtime& runtime, Nodes& nodes, bool is_a)
      : runtime_(runtime), nodes_(nodes), is_a_(is_a) {}
  Task<Result<Reply>> execute(Command command) override {
    if (command.size() == 2 && command[0] == "CLUSTER" && command[1] == "SLOTS") {
      nodes_.slots_asked.push_back(is_a_ ? "a" : "b");
      co_return Reply::array({range(0, 8191, "a", 1), range(8192, 16383, "b", 2)});
    }
    if (is_a_) ++nodes_.a_attempts;
    if (is_a_ && nodes_.a_down) co_return make_error(Errc::closed, "connection lost");
    if (is_a_ && nodes_.a_stalled) {
      nodes_.a_waiting = true;
      co_await runtime_.sleep_ms(50);
      nodes_.a_waiting = false;
      co_return make_error(Errc::timeout, "no reply within the command timeout");
    }
    if (!is_a_) nodes_.b_sent_while_a_waited.push_back(nodes_.a_waiting);
    (is_a_ ? nodes_.sent_to_a : nodes_.sent_to_b).push_back(command.at(1));
    co_return Reply::status("OK");
  }
  Task<Result<Reply>> execute_asking(Command command) override {
    Result<Reply> reply = co_await execute(std::move(command));
    co_return reply;
  }

 private:
  static Reply range(std::int64_t first, std::int64_t last, const char* host, std::int64_t port) {
    return Reply::array({Reply::of_int(first), Reply::of_int(last),
                         Reply::array({Reply::bulk(host), Reply::of_int(port),
                                       Reply::bulk(std::string("id-") + host)})});
  }
  Runtime& runtime_;
  Nodes& nodes_;
  bool is_a_;
};

// The `n`th key (from 0) whose slot is on a (low) or on b (high).
std::string key_on(bool a, int n) {
  for (int i = 0;; ++i) {
    const std::string key = "k" + std::to_string(i);
    if ((key_slot(key) <= 8191) == a && n-- == 0) return key;
  }
}

// The link, its map read while both masters answered; then a's connection is lost.
struct ClusterLinkMany : ::testing::Test {
  void SetUp() override {
    ASSERT_TRUE(runtime.block_on(link.refresh()).ok());
    nodes.a_down = true;
  }
  RealRuntime runtime;
  Nodes nodes;
  ClusterLink link{runtime, "a", 1, [this](const std::string& host, std::uint16_t) {
                     return std::make_unique<FakeNode>(runtime, nodes, host == "a");
                   }};
};

TEST_F(ClusterLinkMany, AMasterThatFailsStopsOnlyItsOwnCommandsOfTheCall) {
  const std::vector<std::string> keys = {key_on(false, 0), key_on(true, 0), key_on(false, 1),
                                         key_on(true, 1), key_on(false, 2)};
  std::vector<Command> commands;
  for (const std::string& key : keys) commands.push_back({"SET", key, "v"});

  const std::vector<Result<Reply>> replies =
      runtime.block_on(link.execute_many(std::move(commands)));

  ASSERT_EQ(replies.size(), keys.size());
  for (const std::size_t b : {0u, 2u, 4u}) {
    ASSERT_TRUE(replies[b].ok()) << "command " << b << " (on b): " << replies[b].error().message;
    EXPECT_EQ(replies[b].value(), Reply::status("OK"));
  }
  for (const std::size_t a : {1u, 3u}) {
    ASSERT_FALSE(replies[a].ok()) << "command " << a << " (on a) was answered";
    EXPECT_EQ(replies[a].error().code, Errc::closed);
  }
  EXPECT_EQ(nodes.sent_to_b, (std::vector<std::string>{keys[0], keys[2], keys[4]}))
      << "a command for b after a's failure was not sent";
  EXPECT_TRUE(nodes.sent_to_a.empty());
}

// On one master the rule is a single connection's: after its failure nothing more is sent to it
// in that call, so a dead master costs one failure, not one per command.
TEST_F(ClusterLinkMany, AfterAMastersFailureNoLaterCommandOfTheCallIsSentToIt) {
  std::vector<Command> commands;
  for (int i = 0; i < 4; ++i) commands.push_back({"SET", key_on(true, i), "v"});
  const std::vector<Result<Reply>> replies =
      runtime.block_on(link.execute_many(std::move(commands)));
  ASSERT_EQ(replies.size(), 4u);
  for (const Result<Reply>& reply : replies) {
    ASSERT_FALSE(reply.ok());
    EXPECT_EQ(reply.error().code, Errc::closed);
  }
  EXPECT_EQ(nodes.a_attempts, 1) << "a later command of the call was sent to the dead master";
}

// A stopped master answers nothing until its command timeout: the other master's commands of
// the call go out meanwhile, not after it (one after another, a stopped master would hold a
// heartbeat round's renewals on every live master for its timeout).
TEST_F(ClusterLinkMany, AMasterThatDoesNotAnswerHoldsBackNoOtherMastersCommands) {
  nodes.a_down = false;
  nodes.a_stalled = true;
  std::vector<Command> commands;
  commands.push_back({"SET", key_on(true, 0), "v"});
  commands.push_back({"SET", key_on(false, 0), "v"});
  commands.push_back({"SET", key_on(false, 1), "v"});
  const std::vector<Result<Reply>> replies =
      runtime.block_on(link.execute_many(std::move(commands)));
  ASSERT_EQ(replies.size(), 3u);
  ASSERT_FALSE(replies[0].ok());
  EXPECT_EQ(replies[0].error().code, Errc::timeout);
  for (const std::size_t b : {1u, 2u}) {
    ASSERT_TRUE(replies[b].ok()) << "command " << b << " (on b): " << replies[b].error().message;
    EXPECT_EQ(replies[b].value(), Reply::status("OK"));
  }
  EXPECT_EQ(nodes.b_sent_while_a_waited, (std::vector<bool>{true, true}))
      << "b's commands waited for a's timeout";
}

// The map is read again after a failure; the node that just did not answer is asked last (its
// timeout would hold every command waiting for the map).
TEST_F(ClusterLinkMany, TheMapIsReadFirstFromANodeThatAnswered) {
  std::vector<Command> commands;
  commands.push_back({"SET", key_on(true, 0), "v"});
  const std::vector<Result<Reply>> replies =
      runtime.block_on(link.execute_many(std::move(commands)));
  ASSERT_FALSE(replies.at(0).ok());
  nodes.slots_asked.clear();
  ASSERT_TRUE(runtime.block_on(link.refresh()).ok());
  EXPECT_EQ(nodes.slots_asked, (std::vector<std::string>{"b"}));
}

}  // namespace
}  // namespace seqby::redis
