// ClusterLink whose node refuses CLUSTER SLOTS with an error reply, without a server: an ACL
// without +cluster|slots (NOPERM), or a server without cluster support. No command can be routed;
// the link tells set_map_refused_observer which node answered what (a worker ends on a refusal
// that retrying cannot fix), and once the node gives the map the link routes and tells nothing.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/cluster_link.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

// The one node "n:1": CLUSTER SLOTS answers `refusal` while it is not empty, else a map giving
// it every slot; every other command answers +OK.
class RefusingNode final : public ClusterNodeLink {
 public:
  explicit RefusingNode(const std::string& refusal) : refusal_(refusal) {}
  Task<Result<Reply>> execute(Command command) override {
    if (command.size() == 2 && command[0] == "CLUSTER" && command[1] == "SLOTS") {
      if (!refusal_.empty()) co_return Reply::error(refusal_);
      co_return Reply::array({Reply::array(
          {Reply::of_int(0), Reply::of_int(16383),
           Reply::array({Reply::bulk("n"), Reply::of_int(1), Reply::bulk("id-n")})})});
    }
    co_return Reply::status("OK");
  }
  Task<Result<Reply>> execute_asking(Command command) override {
    Result<Reply> reply = co_await execute(std::move(command));
    co_return reply;
  }

 private:
  const std::string& refusal_;
};

TEST(ClusterLinkMapRefused, TheNodeAndItsRefusalAreToldAndNothingOnceTheMapIsGiven) {
  RealRuntime runtime;
  std::string refusal = "NOPERM this user has no permissions to run the 'cluster|slots' command";
  ClusterLinkOptions options;
  options.refresh_interval_min_ms = 0;
  ClusterLink link(
      runtime, "n", 1,
      [&refusal](const std::string&, std::uint16_t) {
        return std::make_unique<RefusingNode>(refusal);
      },
      options);
  std::vector<std::pair<std::string, std::string>> told;
  link.set_map_refused_observer([&told](const std::string& address, const std::string& error) {
    told.emplace_back(address, error);
  });

  Result<Reply> unrouted = runtime.block_on(link.execute({"SET", "k", "v"}));
  ASSERT_FALSE(unrouted.ok());
  EXPECT_EQ(unrouted.error().code, Errc::closed);
  EXPECT_NE(unrouted.error().message.find("NOPERM"), std::string::npos) << unrouted.error().message;
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].first, "n:1");
  EXPECT_EQ(told[0].second, refusal);

  refusal.clear();  // the operator grants +cluster|slots
  Result<Reply> routed = runtime.block_on(link.execute({"SET", "k", "v"}));
  ASSERT_TRUE(routed.ok()) << routed.error().message;
  EXPECT_EQ(routed.value(), Reply::status("OK"));
  EXPECT_EQ(told.size(), 1u) << "a refresh that got the map tells nothing";
}

}  // namespace
}  // namespace seqby::redis
