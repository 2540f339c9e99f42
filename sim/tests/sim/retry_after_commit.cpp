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

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261207;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";
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

EngineOptions options() {
  EngineOptions o;
  o.owner_id = "a";
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = 3000;
  o.heartbeat_interval_ms = 1000;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
  o.read_batch_max = 8;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  return o;
}

struct World {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  properties::VectorHistorySink history;
  SimRuntime runtime{scheduler, "a"};
  SimRedisLink link{runtime, server, Rng(kSeed).derive("link/a")};
  redis::RedisBroker broker{link};
  CommitThenFailOnce handler;
  Engine engine{runtime, broker, history, handler, options()};
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};
  std::vector<std::string> ids;

  ~World() {
    if (::testing::Test::HasFailure()) print_history();
    runtime.crash();
    publisher_runtime.crash();
  }

  Task<void> publish_all() {
    const PartitionRef partition{kCategory, "k0"};  // named: no temporary inside co_await
    for (int seq = 1; seq <= kEvents; ++seq) {
      Result<std::string> id =
          co_await publisher.publish(partition, "created", "{\"seq\":" + std::to_string(seq) + "}");
      SEQBY_CHECK(id.ok());
      ids.push_back(id.value());
    }
  }

  std::vector<std::string> of(HistoryOp op) const {
    std::vector<std::string> out;
    for (const auto& r : history.records()) {
      if (r.op == op && r.node == "a") out.push_back(r.event_id);
    }
    return out;
  }

  void print_history() const {
    for (const auto& r : history.records()) {
      std::fprintf(
          stderr, "%5llu t=%llu %s %s %s/%s g=%llu id=%s %s\n",
          static_cast<unsigned long long>(r.index), static_cast<unsigned long long>(r.time_ms),
          r.node.c_str(), history_op_name(r.op), r.category.c_str(), r.key.c_str(),
          static_cast<unsigned long long>(r.generation), r.event_id.c_str(), r.detail.c_str());
    }
  }
};

TEST(RetryAfterCommit, TheRetryOfAnEventThatCommittedIsToldDuplicateAndCommitsNothingMore) {
  World w;
  w.publisher_runtime.spawn("publisher", w.publish_all());
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
