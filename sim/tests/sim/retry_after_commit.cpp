// An event whose handler committed and THEN failed, end to end on the simulator (an Engine over
// SimRedis through the very Lua scripts real Redis runs): the same worker retries it under the same
// lease, and the retry's commit of that seq is answered duplicate, not accepted; the history holds
// ONE commit of it. A handler that acts only on an accepted commit (sends the mail, say) acts
// once. It kills mutate/catalog.txt commit-rerun-recorded-again (a re-run's duplicate taken for
// this execution's own commit whose reply was lost).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"
#include "sim_engine_parts.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261207;
constexpr int kEvents = 1;

// Commits the event's seq, then fails its first delivery; every later delivery succeeds. Keeps the
// commit outcome each delivery was told.
class CommitThenFailOnce final : public Handler {
 public:
  std::vector<CommitOutcome> outcomes;

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    Result<CommitReply> committed = co_await context.commit(1, event.id);
    if (!committed.ok()) co_return HandlerResult::failed(committed.error().message);
    outcomes.push_back(committed.value().outcome);
    if (event.delivery_count == 1) co_return HandlerResult::failed("failed after its commit");
    co_return HandlerResult::success();
  }
};

using World = testing::OneWorkerWorld<CommitThenFailOnce>;

TEST(RetryAfterCommit, TheRetryOfAnEventThatCommittedIsToldDuplicateAndCommitsNothingMore) {
  World w(kSeed);
  w.publisher_runtime.spawn("publisher", w.publish_all(kEvents));
  w.scheduler.run_until([&] { return w.ids.size() == kEvents; }, 5000);
  ASSERT_EQ(w.ids.size(), static_cast<std::size_t>(kEvents));
  w.engine.start();
  w.scheduler.run_until([&] { return !w.of(HistoryOp::ack).empty(); }, 30'000);
  ASSERT_EQ(w.of(HistoryOp::ack), w.ids);

  const std::vector<CommitOutcome> expected{CommitOutcome::accepted, CommitOutcome::duplicate};
  EXPECT_EQ(w.handler.outcomes, expected);
  EXPECT_EQ(w.of(HistoryOp::commit).size(), 1u) << "seq 1 is recorded as committed twice";
}

}  // namespace
}  // namespace seqby::sim
