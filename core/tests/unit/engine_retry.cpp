// retry_transport, the engine's one bounded retry of a broker call: which failures are sent
// again, how long it sleeps between attempts, and when it gives up. Every simulated history
// depends on this exact sequence of sends and sleeps.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "../../src/retry.h"
#include "noting_runtime.h"

namespace seqby {
namespace {

using testing::NotingRuntime;

// Runs a task that never really suspends to its end and returns its value.
template <typename T>
T run_now(Task<T> task) {
  auto handle = task.release();
  handle.resume();
  EXPECT_TRUE(handle.done());
  T value = std::move(*handle.promise().value);
  handle.destroy();
  return value;
}

Status failure(Errc code) { return make_error(code, errc_name(code)); }

// Replies with the scripted statuses in order, counting the sends.
class ScriptedCall {
 public:
  explicit ScriptedCall(std::deque<Status> replies) : replies_(std::move(replies)) {}
  Task<Status> send() {
    ++sends;
    EXPECT_FALSE(replies_.empty()) << "sent more often than scripted";
    Status reply = replies_.empty() ? Status::Ok() : replies_.front();
    if (!replies_.empty()) replies_.pop_front();
    co_return reply;
  }
  int sends = 0;

 private:
  std::deque<Status> replies_;
};

Status retried(NotingRuntime& runtime, ScriptedCall& call, std::uint32_t attempts_max,
               bool (*retryable)(Errc), std::uint64_t backoff_max_ms = 2000) {
  const TransportRetry retry(runtime, attempts_max, 100, backoff_max_ms);
  auto send = [&call] { return call.send(); };
  return run_now(retry_transport(retry, retryable, send));
}

TEST(EngineRetry, TransportFailuresAreSentAgainWithADoublingBackoffUntilOneIsAnswered) {
  NotingRuntime runtime;
  ScriptedCall call({failure(Errc::timeout), failure(Errc::closed), Status::Ok()});
  const Status reply = retried(runtime, call, 5, is_transport_error);
  EXPECT_TRUE(reply.ok());
  EXPECT_EQ(call.sends, 3);
  EXPECT_EQ(runtime.sleeps_ms, (std::vector<std::uint64_t>{100, 200}));
}

TEST(EngineRetry, GivesUpAfterAttemptsMaxSendsWithTheLastFailureAndNoSleepAfterIt) {
  NotingRuntime runtime;
  ScriptedCall call({failure(Errc::timeout), failure(Errc::timeout), failure(Errc::closed)});
  const Status reply = retried(runtime, call, 3, is_transport_error);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.code(), Errc::closed);
  EXPECT_EQ(call.sends, 3);
  EXPECT_EQ(runtime.sleeps_ms, (std::vector<std::uint64_t>{100, 200}));
}

TEST(EngineRetry, OneAttemptMaxSendsOnce) {
  NotingRuntime runtime;
  ScriptedCall call({failure(Errc::timeout)});
  const Status reply = retried(runtime, call, 1, is_transport_error);
  EXPECT_EQ(reply.code(), Errc::timeout);
  EXPECT_EQ(call.sends, 1);
  EXPECT_TRUE(runtime.sleeps_ms.empty());
}

TEST(EngineRetry, AFencedReplyIsNeverSentAgainWhateverIsRetryable) {
  NotingRuntime runtime;
  ScriptedCall call({failure(Errc::fenced)});
  const Status reply = retried(runtime, call, 5, is_any_error);
  EXPECT_EQ(reply.code(), Errc::fenced);
  EXPECT_EQ(call.sends, 1);
  EXPECT_TRUE(runtime.sleeps_ms.empty());
}

TEST(EngineRetry, OtherErrorsAreSentAgainOnlyWhenRetryableSaysSo) {
  NotingRuntime transport_only;
  ScriptedCall refused({failure(Errc::protocol)});
  EXPECT_EQ(retried(transport_only, refused, 5, is_transport_error).code(), Errc::protocol);
  EXPECT_EQ(refused.sends, 1);
  EXPECT_TRUE(transport_only.sleeps_ms.empty());

  NotingRuntime any;
  ScriptedCall created({failure(Errc::protocol), failure(Errc::no_group), Status::Ok()});
  EXPECT_TRUE(retried(any, created, 5, is_any_error).ok());
  EXPECT_EQ(created.sends, 3);
  EXPECT_EQ(any.sleeps_ms, (std::vector<std::uint64_t>{100, 200}));
}

TEST(EngineRetry, TheBackoffStopsDoublingAtItsMax) {
  NotingRuntime runtime;
  ScriptedCall call({failure(Errc::timeout), failure(Errc::timeout), failure(Errc::timeout),
                     failure(Errc::timeout), Status::Ok()});
  EXPECT_TRUE(retried(runtime, call, 5, is_transport_error, 250).ok());
  EXPECT_EQ(runtime.sleeps_ms, (std::vector<std::uint64_t>{100, 200, 250, 250}));
}

TEST(EngineRetry, GoOnIsAskedAfterEachSleepAndFalseEndsWithTheLastFailure) {
  NotingRuntime runtime;
  ScriptedCall call({failure(Errc::timeout), failure(Errc::timeout)});
  const TransportRetry retry(runtime, 5, 100, 2000);
  auto send = [&call] { return call.send(); };
  int asked = 0;
  auto go_on = [&asked] { return ++asked < 2; };
  const Status reply = run_now(retry_transport(retry, is_transport_error, send, go_on));
  EXPECT_EQ(reply.code(), Errc::timeout);
  EXPECT_EQ(call.sends, 2);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(runtime.sleeps_ms, (std::vector<std::uint64_t>{100, 200}));
}

TEST(EngineRetry, ATypedReplyComesBackWithItsValue) {
  NotingRuntime runtime;
  int sends = 0;
  auto send = [&sends]() -> Task<Result<std::uint64_t>> {
    ++sends;
    if (sends == 1) co_return make_error(Errc::closed, "dropped");
    co_return std::uint64_t{7};
  };
  const TransportRetry retry(runtime, 3, 100, 2000);
  const Result<std::uint64_t> reply = run_now(retry_transport(retry, is_transport_error, send));
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply.value(), 7u);
  EXPECT_EQ(sends, 2);
}

}  // namespace
}  // namespace seqby
