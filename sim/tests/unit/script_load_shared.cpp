// A script's first use by many calls at once: one SCRIPT LOAD goes to the server and every call
// that needed the sha meanwhile waits for its answer and shares it (an instance whose workers
// all release or step at once sent one load per call before: 10,000 loads of the release script
// when an instance holding 10,000 partitions stopped). A load that fails fails its waiters with
// its error, at once, and the next call loads again; a waiter torn down while it waits leaves
// the others alone; a load torn down mid-flight is not waited on by the calls after it.
// RedisBroker on SimRedis, call by call, with the SCRIPT LOAD's answer held by the test.
#include <gtest/gtest.h>

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

// Runs every command on the simulated server at once, except a SCRIPT LOAD while `hold` is set:
// that one waits until answer() (ran) or fail() (answered Errc::timeout without running).
class HeldLoadLink final : public RedisLink {
 public:
  explicit HeldLoadLink(sim::SimRedis& redis) : direct_(redis) {}

  Task<Result<Reply>> execute(Command command) override {
    if (command[0] == "SCRIPT" && command[1] == "LOAD") {
      ++loads;
      if (hold) {
        co_await Held{this};
        if (failing_) co_return make_error(Errc::timeout, "no answer");
      }
    }
    Result<Reply> reply = co_await direct_.execute(std::move(command));
    co_return reply;
  }

  std::size_t held() const { return held_.size(); }
  void answer() { release_first(false); }
  void fail() { release_first(true); }
  // Forgets the held loads without resuming them (their frames were destroyed).
  void drop() { held_.clear(); }

  bool hold = false;
  std::size_t loads = 0;

 private:
  struct Held {
    HeldLoadLink* link;
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<> waiter) { link->held_.push_back(waiter); }
    void await_resume() const {}
  };
  void release_first(bool failing) {
    ASSERT_FALSE(held_.empty());
    const std::coroutine_handle<> first = held_.front();
    held_.erase(held_.begin());
    failing_ = failing;
    first.resume();
    failing_ = false;
  }

  DirectLink direct_;
  std::vector<std::coroutine_handle<>> held_;
  bool failing_ = false;
};

// A call started by hand: runs to its first suspension; `result` is set once it finished. The
// frame is destroyed with this object, finished or not.
class Started {
 public:
  explicit Started(Task<Status> task) {
    auto body = [](Task<Status> inner, std::optional<Status>* out) -> Task<void> {
      Status status = co_await std::move(inner);
      out->emplace(std::move(status));
    };
    handle_ = body(std::move(task), &result).release();
    handle_.resume();
  }
  Started(const Started&) = delete;
  Started& operator=(const Started&) = delete;
  ~Started() {
    if (handle_) handle_.destroy();
  }
  void destroy() {
    handle_.destroy();
    handle_ = {};
  }
  std::optional<Status> result;

 private:
  std::coroutine_handle<> handle_;
};

struct ScriptLoadShared : ::testing::Test {
  static constexpr std::size_t kCalls = 50;
  ManualClock clock;
  sim::SimRedis redis{clock};
  HeldLoadLink link{redis};
  RedisBroker broker{link, {}};
  std::vector<Lease> leases;

  void SetUp() override {
    Result<std::vector<Lease>> held = seqby::testing::held_leases(broker, kCalls);
    ASSERT_TRUE(held.ok()) << held.error().message;
    leases = std::move(held).value();
    link.hold = true;
  }

  // One renew per lease to `ttl_ms`, all started before the renew script is loaded.
  std::vector<std::unique_ptr<Started>> renew_all(std::uint64_t ttl_ms = 3000) {
    std::vector<std::unique_ptr<Started>> calls;
    for (const Lease& lease : leases) {
      calls.push_back(std::make_unique<Started>(broker.renew(lease, ttl_ms)));
    }
    return calls;
  }
};

TEST_F(ScriptLoadShared, CallsThatNeedAScriptBeingLoadedWaitForThatLoad) {
  const std::size_t loads_before = link.loads;
  std::vector<std::unique_ptr<Started>> calls = renew_all(60000);
  EXPECT_EQ(link.loads, loads_before + 1) << "one SCRIPT LOAD per script, not one per call";
  for (const auto& call : calls) EXPECT_FALSE(call->result.has_value());

  link.answer();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ASSERT_TRUE(calls[i]->result.has_value()) << "call " << i << " still waits";
    EXPECT_TRUE(calls[i]->result->ok())
        << "call " << i << ": " << calls[i]->result->error().message;
  }
  // Renewed on the server: every lease now has the minute the renew set, not the 3 s it had.
  for (const Lease& lease : leases) {
    const Reply ttl = redis.execute({"PTTL", lease.key()});
    ASSERT_EQ(ttl.kind, Reply::Kind::integer);
    EXPECT_GT(ttl.integer, 3000) << lease.key();
  }
  Started again(broker.renew(leases.front(), 3000));
  ASSERT_TRUE(again.result.has_value()) << "a call after the load waited";
  EXPECT_TRUE(again.result->ok());
  EXPECT_EQ(link.loads, loads_before + 1) << "the sha was not kept";
}

TEST_F(ScriptLoadShared, ALoadThatGetsNoAnswerFailsItsWaitersAndTheNextCallLoadsAgain) {
  const std::size_t loads_before = link.loads;
  std::vector<std::unique_ptr<Started>> calls = renew_all();
  link.fail();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    ASSERT_TRUE(calls[i]->result.has_value()) << "call " << i << " still waits";
    EXPECT_EQ(calls[i]->result->code(), Errc::timeout) << "call " << i;
  }
  EXPECT_EQ(link.loads, loads_before + 1) << "a waiter loaded it again itself";

  link.hold = false;
  Started next(broker.renew(leases.front(), 3000));
  ASSERT_TRUE(next.result.has_value());
  EXPECT_TRUE(next.result->ok()) << next.result->error().message;
  EXPECT_EQ(link.loads, loads_before + 2);
}

TEST_F(ScriptLoadShared, AWaiterTornDownWhileItWaitsLeavesTheOthersAlone) {
  std::vector<std::unique_ptr<Started>> calls = renew_all();
  calls[1]->destroy();
  calls[3]->destroy();
  link.answer();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (i == 1 || i == 3) continue;
    ASSERT_TRUE(calls[i]->result.has_value()) << "call " << i << " still waits";
    EXPECT_TRUE(calls[i]->result->ok()) << "call " << i;
  }
}

TEST_F(ScriptLoadShared, ALoadTornDownMidFlightIsNotWaitedOnByTheNextCall) {
  const std::size_t loads_before = link.loads;
  {
    Started loader(broker.renew(leases.front(), 3000));
    ASSERT_EQ(link.held(), 1u);
  }  // the instance torn down: the loader's frame destroyed before the answer
  link.drop();
  link.hold = false;
  Started next(broker.renew(leases.front(), 3000));
  ASSERT_TRUE(next.result.has_value()) << "the next call waits on a load nobody will answer";
  EXPECT_TRUE(next.result->ok()) << next.result->error().message;
  EXPECT_EQ(link.loads, loads_before + 2);
}

}  // namespace
}  // namespace seqby::redis
