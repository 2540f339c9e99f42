// The contracts of tests/support/same_owner_contract.h through RedisBroker on SimRedis (the
// real-Redis twin is adapters/tests/redis/same_owner_fence_real.cpp): a stale generation of the
// same owner id is refused by every fenced script and changes nothing, a reap refuses while
// another group has the last entry in flight, and the commit carried by the step commits, acks
// and reads in one step.
#include <gtest/gtest.h>

#include "same_owner_contract.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::testing {
namespace {

using contract::InFlight;
using contract::Superseded;

class SimContractServer final : public ContractServer {
 public:
  redis::RedisBroker& broker() override { return broker_; }
  redis::Reply run(const redis::Command& command) override { return redis_.execute(command); }
  // Every command completes at once (DirectLink): the task never suspends.
  void drive(Task<void> task) override {
    auto handle = task.release();
    handle.resume();
    SEQBY_CHECK(handle.done());
    handle.destroy();
  }
  void pass_ms(std::uint64_t ms) override { clock_.advance(ms); }

 private:
  ManualClock clock_;
  sim::SimRedis redis_{clock_};
  DirectLink link_{redis_};
  redis::RedisBroker broker_{link_};
};

const PartitionRef kPartition{"order", "k0"};

class SameOwnerFence : public ::testing::TestWithParam<Superseded> {};

TEST_P(SameOwnerFence, EveryFencedStepOfTheOldGenerationIsRefusedAndChangesNothing) {
  SimContractServer server;
  contract::same_owner_stale_generation_is_refused(server, kPartition, "", GetParam());
}

TEST_P(SameOwnerFence, TheSameHoldsForALeasePerGroup) {
  SimContractServer server;
  contract::same_owner_stale_generation_is_refused(server, kPartition, contract::kGroup,
                                                   GetParam());
}

INSTANTIATE_TEST_SUITE_P(Superseded, SameOwnerFence,
                         ::testing::Values(Superseded::acquired_again,
                                           Superseded::released_and_acquired,
                                           Superseded::expired_and_acquired),
                         [](const auto& info) { return contract::superseded_name(info.param); });

TEST(CommitCarriedByTheStep, CommitsAcksAndReadsInOneStepAndRefusesAGapWhole) {
  SimContractServer server;
  contract::commit_carried_by_the_step(server, kPartition);
}

TEST(SameOwnerFenceReap, TheOldGenerationCannotReapAColdPartitionTheNewOneCan) {
  SimContractServer server;
  contract::same_owner_stale_generation_cannot_reap(server, kPartition);
}

class ReapBesideGroupInFlight : public ::testing::TestWithParam<InFlight> {};

TEST_P(ReapBesideGroupInFlight, TheReapRefusesAndLeavesTheStreamUntilTheOtherGroupAcks) {
  SimContractServer server;
  contract::reap_refused_while_other_group_in_flight(server, kPartition, GetParam());
}

INSTANTIATE_TEST_SUITE_P(InFlight, ReapBesideGroupInFlight,
                         ::testing::Values(InFlight::read, InFlight::next_after_ack,
                                           InFlight::older_consumer),
                         [](const auto& info) { return contract::in_flight_name(info.param); });

}  // namespace
}  // namespace seqby::testing
