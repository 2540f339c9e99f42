// renew_many over more leases than one script call takes (RedisBroker::kLeaseBatchMax), sent
// through a lease link of its own: every batch goes over that link and none over the commands
// link, a lease another owner took is refused alone (its batch's others and the other batch's
// are renewed), a server that lost its script cache between two rounds is answered as if it had
// not, after a batch whose transport failed the next is not sent, and a batch that got no answer
// fails only its own leases (the batches answered before it are renewed, and said so). The same
// leases renewed round after round through renew_kept (the heartbeat's way: scripts kept while
// the set is the same pointer) are answered as renew_many answers them: a lease taken meanwhile
// refused, a new TTL applied, a lost script cache run again. RedisBroker on SimRedis, call by
// call.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::renew_outcomes;
using seqby::testing::run_now;

// Counts the script calls (EVAL, EVALSHA) and SCRIPT LOADs that reach the server through it;
// with `fail_call` set, that script call (1-based) answers Errc::timeout without running.
class CountingLink final : public RedisLink {
 public:
  explicit CountingLink(sim::SimRedis& redis) : direct_(redis) {}
  Task<Result<Reply>> execute(Command command) override {
    const bool script = command[0] == "EVAL" || command[0] == "EVALSHA";
    if (script) ++script_calls;
    if (command[0] == "SCRIPT" && command[1] == "LOAD") ++loads;
    if (script && script_calls == fail_call) co_return make_error(Errc::timeout, "lost");
    Result<Reply> reply = co_await direct_.execute(std::move(command));
    co_return reply;
  }
  std::size_t script_calls = 0;
  std::size_t loads = 0;
  std::size_t fail_call = 0;

 private:
  DirectLink direct_;
};

struct RenewManyLeaseLink : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  CountingLink commands{redis};
  CountingLink leases_link{redis};
  RedisBroker broker{commands, {}, WakeLinks{}, &leases_link};
  std::vector<Lease> leases;

  void SetUp() override {
    Result<std::vector<Lease>> held =
        seqby::testing::held_leases(broker, RedisBroker::kLeaseBatchMax + 44);
    ASSERT_TRUE(held.ok()) << held.error().message;
    leases = std::move(held).value();
  }
};

TEST_F(RenewManyLeaseLink, EveryBatchGoesOverTheLeaseLinkAndAStolenLeaseIsRefusedAlone) {
  const std::size_t commands_before = commands.script_calls;
  // Another owner took one lease of the second batch (its first lapsed, say).
  const std::size_t stolen = RedisBroker::kLeaseBatchMax + 3;
  ASSERT_FALSE(redis.execute({"SET", leases[stolen].key(), "b:9"}).is_error());

  const std::vector<std::string> renewed = renew_outcomes(run_now(broker.renew_many(leases, 3000)));
  ASSERT_EQ(renewed.size(), leases.size());
  for (std::size_t i = 0; i < leases.size(); ++i) {
    EXPECT_EQ(renewed[i], i != stolen ? "renewed" : "fenced") << "lease " << i;
  }
  EXPECT_EQ(leases_link.script_calls, 2u) << "one renew_many script per batch";
  EXPECT_EQ(commands.script_calls, commands_before) << "no renewal over the commands link";
  // The refused lease still holds the other owner's token: a renewal writes nothing it lost.
  EXPECT_EQ(redis.execute({"GET", leases[stolen].key()}), Reply::bulk("b:9"));
}

TEST_F(RenewManyLeaseLink, AServerThatLostItsScriptCacheIsAnsweredAsBefore) {
  const std::vector<std::string> all_renewed(leases.size(), "renewed");
  ASSERT_EQ(renew_outcomes(run_now(broker.renew_many(leases, 3000))), all_renewed);
  ASSERT_FALSE(redis.execute({"SCRIPT", "FLUSH"}).is_error());
  EXPECT_EQ(renew_outcomes(run_now(broker.renew_many(leases, 3000))), all_renewed);
  // Both pipelined EVALSHAs came back NOSCRIPT and each ran again (loaded once more).
  EXPECT_GE(leases_link.loads, 2u);
}

TEST_F(RenewManyLeaseLink, AfterABatchWhoseTransportFailedTheNextIsNotSent) {
  ASSERT_EQ(renew_outcomes(run_now(broker.renew_many(leases, 3000))),
            std::vector<std::string>(leases.size(), "renewed"));
  const std::size_t calls_before = leases_link.script_calls;
  leases_link.fail_call = calls_before + 1;  // the first batch of the next round
  const std::vector<std::string> renewed = renew_outcomes(run_now(broker.renew_many(leases, 3000)));
  EXPECT_EQ(renewed, std::vector<std::string>(leases.size(), "timeout"))
      << "a lease of the unsent batch was answered as renewed or refused";
  EXPECT_EQ(leases_link.script_calls, calls_before + 1) << "the second batch was sent anyway";
}

// A batch answers for its own leases only: the second batch's transport fails, and the first
// batch's leases, renewed on the server, are told so (the heartbeat confirms them).
TEST_F(RenewManyLeaseLink, ABatchThatGotNoAnswerFailsOnlyItsOwnLeases) {
  const std::size_t calls_before = leases_link.script_calls;
  leases_link.fail_call = calls_before + 2;  // the second batch of this round
  const std::vector<std::string> renewed = renew_outcomes(run_now(broker.renew_many(leases, 3000)));
  ASSERT_EQ(renewed.size(), leases.size());
  for (std::size_t i = 0; i < leases.size(); ++i) {
    EXPECT_EQ(renewed[i], i < RedisBroker::kLeaseBatchMax ? "renewed" : "timeout") << "lease " << i;
  }
}

TEST_F(RenewManyLeaseLink, KeptLeasesAreRenewedRoundAfterRoundAndOneTakenMeanwhileIsRefused) {
  const auto kept = std::make_shared<const std::vector<Lease>>(leases);
  const std::vector<std::string> all_renewed(leases.size(), "renewed");
  ASSERT_EQ(renew_outcomes(run_now(broker.renew_kept(kept, 3000))), all_renewed);
  const std::size_t stolen = 7;
  ASSERT_FALSE(redis.execute({"SET", leases[stolen].key(), "b:9"}).is_error());
  const std::size_t calls_before = leases_link.script_calls;
  const std::vector<std::string> renewed = renew_outcomes(run_now(broker.renew_kept(kept, 3000)));
  ASSERT_EQ(renewed.size(), leases.size());
  for (std::size_t i = 0; i < leases.size(); ++i) {
    EXPECT_EQ(renewed[i], i != stolen ? "renewed" : "fenced") << "lease " << i;
  }
  EXPECT_EQ(leases_link.script_calls, calls_before + 2) << "one renew_many script per batch";
  EXPECT_EQ(redis.execute({"GET", leases[stolen].key()}), Reply::bulk("b:9"));
  // Another set (the stolen lease dropped) is renewed as itself, not as the kept one.
  std::vector<Lease> fewer = leases;
  fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(stolen));
  EXPECT_EQ(renew_outcomes(run_now(
                broker.renew_kept(std::make_shared<const std::vector<Lease>>(fewer), 3000))),
            std::vector<std::string>(fewer.size(), "renewed"));
}

TEST_F(RenewManyLeaseLink, KeptLeasesGivenAnotherTtlAreRenewedForIt) {
  const auto kept = std::make_shared<const std::vector<Lease>>(leases);
  const std::vector<std::string> all_renewed(leases.size(), "renewed");
  const auto ttl_of = [this](std::size_t i) {
    return redis.execute({"PTTL", leases[i].key()}).integer;
  };
  ASSERT_EQ(renew_outcomes(run_now(broker.renew_kept(kept, 3000))), all_renewed);
  EXPECT_LE(ttl_of(0), 3000);
  EXPECT_LE(ttl_of(leases.size() - 1), 3000);
  ASSERT_EQ(renew_outcomes(run_now(broker.renew_kept(kept, 60'000))), all_renewed);
  EXPECT_GT(ttl_of(0), 3000) << "the kept scripts' TTL was sent again";
  EXPECT_GT(ttl_of(leases.size() - 1), 3000);
}

TEST_F(RenewManyLeaseLink, KeptLeasesAreRenewedAfterTheServerLostItsScriptCache) {
  const auto kept = std::make_shared<const std::vector<Lease>>(leases);
  const std::vector<std::string> all_renewed(leases.size(), "renewed");
  ASSERT_EQ(renew_outcomes(run_now(broker.renew_kept(kept, 3000))), all_renewed);
  ASSERT_FALSE(redis.execute({"SCRIPT", "FLUSH"}).is_error());
  const std::size_t loads_before = leases_link.loads;
  EXPECT_EQ(renew_outcomes(run_now(broker.renew_kept(kept, 3000))), all_renewed);
  EXPECT_GT(leases_link.loads, loads_before) << "the script was not loaded again";
  // Loaded again, the kept commands run as they are.
  const std::size_t calls_before = leases_link.script_calls;
  EXPECT_EQ(renew_outcomes(run_now(broker.renew_kept(kept, 3000))), all_renewed);
  EXPECT_EQ(leases_link.script_calls, calls_before + 2);
}

}  // namespace
}  // namespace seqby::redis
