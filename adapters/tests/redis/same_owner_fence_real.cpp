// The contracts of tests/support/same_owner_contract.h through RedisBroker and HiredisLink on a
// real redis-server (the simulator's twin is sim/tests/sim/same_owner_fence.cpp): a stale
// generation of the same owner id is refused by every fenced script and changes nothing, a reap
// refuses while another group has the last entry in flight, and the commit carried by the step
// commits, acks and reads in one step. Each test has a category of its
// own and deletes its keys before and after.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "redis_server.h"
#include "same_owner_contract.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::testing {
namespace {

using contract::InFlight;
using contract::Superseded;

class RealContractServer final : public ContractServer {
 public:
  explicit RealContractServer(const std::string& url) {
    auto config = redis::parse_redis_url(url);
    SEQBY_CHECK(config.ok());
    link_ = std::make_unique<redis::HiredisLink>(runtime_, config.value());
    broker_ = std::make_unique<redis::RedisBroker>(*link_);
  }
  ~RealContractServer() override {
    broker_.reset();
    link_.reset();
  }
  redis::RedisBroker& broker() override { return *broker_; }
  redis::Reply run(const redis::Command& command) override {
    Result<redis::Reply> reply = runtime_.block_on(link_->execute(command));
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? reply.value() : redis::Reply::error("transport failure");
  }
  void drive(Task<void> task) override { runtime_.block_on(std::move(task)); }
  void pass_ms(std::uint64_t ms) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

 private:
  redis::RealRuntime runtime_;
  std::unique_ptr<redis::HiredisLink> link_;
  std::unique_ptr<redis::RedisBroker> broker_;
};

// A server, a broker on it and a partition of the test's own, its keys deleted around the test.
class RealContract {
 public:
  RealContract() {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string category = "same-owner-real-" + test;
    for (char& c : category) {
      if (c == '/' || c == ':') c = '-';
    }
    partition_ = PartitionRef{category, "k0"};
    if (server_.ok()) {
      contract_server_ = std::make_unique<RealContractServer>(server_.url());
      clean();
    }
  }
  ~RealContract() {
    if (contract_server_) clean();
  }
  bool ok() const { return server_.ok(); }
  const std::string& error() const { return server_.error(); }
  ContractServer& server() { return *contract_server_; }
  const PartitionRef& partition() const { return partition_; }

 private:
  void clean() {
    const PartitionRef& p = partition_;
    redis::Command del = {"DEL",
                          p.stream(),
                          p.index(),
                          p.subscribers(),
                          p.lease(),
                          p.fence(),
                          lease_key_for(p, contract::kGroup),
                          lease_key_for(p, contract::kOtherGroup)};
    for (const char* group : {contract::kGroup, contract::kOtherGroup}) {
      del.push_back(redis::sink_key_name(p, group));
      del.push_back(redis::effects_hash_name(p, group));
      del.push_back(redis::halt_key_name(p, group));
    }
    contract_server_->run(del);
  }

  RedisServer server_;
  std::unique_ptr<RealContractServer> contract_server_;
  PartitionRef partition_;
};

class SameOwnerFenceReal : public ::testing::TestWithParam<Superseded> {};

TEST_P(SameOwnerFenceReal, EveryFencedStepOfTheOldGenerationIsRefusedAndChangesNothing) {
  RealContract c;
  ASSERT_TRUE(c.ok()) << c.error();
  contract::same_owner_stale_generation_is_refused(c.server(), c.partition(), "", GetParam());
}

TEST_P(SameOwnerFenceReal, TheSameHoldsForALeasePerGroup) {
  RealContract c;
  ASSERT_TRUE(c.ok()) << c.error();
  contract::same_owner_stale_generation_is_refused(c.server(), c.partition(), contract::kGroup,
                                                   GetParam());
}

INSTANTIATE_TEST_SUITE_P(Superseded, SameOwnerFenceReal,
                         ::testing::Values(Superseded::acquired_again,
                                           Superseded::released_and_acquired,
                                           Superseded::expired_and_acquired),
                         [](const auto& info) { return contract::superseded_name(info.param); });

TEST(SameOwnerFenceReapReal, TheOldGenerationCannotReapAColdPartitionTheNewOneCan) {
  RealContract c;
  ASSERT_TRUE(c.ok()) << c.error();
  contract::same_owner_stale_generation_cannot_reap(c.server(), c.partition());
}

TEST(CommitCarriedByTheStepReal, CommitsAcksAndReadsInOneStepAndRefusesAGapWhole) {
  RealContract c;
  ASSERT_TRUE(c.ok()) << c.error();
  contract::commit_carried_by_the_step(c.server(), c.partition());
}

class ReapBesideGroupInFlightReal : public ::testing::TestWithParam<InFlight> {};

TEST_P(ReapBesideGroupInFlightReal, TheReapRefusesAndLeavesTheStreamUntilTheOtherGroupAcks) {
  RealContract c;
  ASSERT_TRUE(c.ok()) << c.error();
  contract::reap_refused_while_other_group_in_flight(c.server(), c.partition(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(InFlight, ReapBesideGroupInFlightReal,
                         ::testing::Values(InFlight::read, InFlight::next_after_ack,
                                           InFlight::older_consumer),
                         [](const auto& info) { return contract::in_flight_name(info.param); });

}  // namespace
}  // namespace seqby::testing
