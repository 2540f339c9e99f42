// Pieces the end-to-end engine tests on the simulator share: the per-key seq of an event's data,
// a handler that commits each event's seq through the fenced sink after a delay of virtual
// time, a link that can be cut off from the server, and a world of one worker and a publisher.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/core/check.h"
#include "seqby/core/engine.h"
#include "seqby/core/handler.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::testing {

// The value of "seq": in an event's data. REQUIRES: it has one.
inline std::int64_t seq_of(const std::string& data) {
  const std::string field = "\"seq\":";
  const auto at = data.find(field);
  SEQBY_CHECK(at != std::string::npos);
  return std::stoll(data.substr(at + field.size()));
}

// Commits each event's seq after handle_ms of virtual time.
class CommittingHandler final : public Handler {
 public:
  explicit CommittingHandler(Runtime& runtime) : runtime_(runtime) {}
  std::uint64_t handle_ms = 10;

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    co_await runtime_.sleep_ms(handle_ms);
    Result<CommitReply> committed = co_await context.commit(seq_of(event.data), event.id);
    if (!committed.ok()) co_return HandlerResult::failed(committed.error().message);
    const CommitOutcome outcome = committed.value().outcome;
    if (outcome == CommitOutcome::accepted || outcome == CommitOutcome::duplicate) {
      co_return HandlerResult::success();
    }
    co_return HandlerResult::failed("commit refused");
  }

 private:
  Runtime& runtime_;
};

// A link that can be cut off: while `cut`, a call never reaches the server and fails as
// unanswered after `cut_timeout_ms` (a call already sent is answered).
class CuttableLink final : public redis::RedisLink {
 public:
  CuttableLink(redis::RedisLink& inner, Runtime& runtime, std::uint64_t cut_timeout_ms)
      : inner_(inner), runtime_(runtime), cut_timeout_ms_(cut_timeout_ms) {}
  bool cut = false;

  Task<Result<redis::Reply>> execute(redis::Command command) override {
    if (cut) {
      co_await runtime_.sleep_ms(cut_timeout_ms_);
      co_return make_error(Errc::timeout, "cut off");
    }
    Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
    co_return reply;
  }

 private:
  redis::RedisLink& inner_;
  Runtime& runtime_;
  std::uint64_t cut_timeout_ms_;
};

// The link a OneWorkerWorld's broker reaches its simulated link through by default: no change.
class PassLink final : public redis::RedisLink {
 public:
  PassLink(redis::RedisLink& inner, Runtime&) : inner_(inner) {}
  Task<Result<redis::Reply>> execute(redis::Command command) override {
    Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
    co_return reply;
  }

 private:
  redis::RedisLink& inner_;
};

// One engine instance "a" of group billing on category order, reading by batches of 8, over a
// SimRedis with no fault, with handler `H` (default-constructed), and a publisher beside it; its
// links' latencies are drawn from `seed`. Its broker's commands go through a `Wrap` made of
// (the simulated link, the instance's runtime), as `wrap`. On a failed test it prints the
// history.
template <typename H, typename Wrap = PassLink>
struct OneWorkerWorld {
  static constexpr const char* kCategory = "order";

  explicit OneWorkerWorld(std::uint64_t seed)
      : link{runtime, server, sim::Rng(seed).derive("link/a")},
        wrap{link, runtime},
        engine{runtime, broker, history, handler, options()},
        publisher_link{publisher_runtime, server, sim::Rng(seed).derive("link/publisher")} {}

  static EngineOptions options() {
    EngineOptions o;
    o.owner_id = "a";
    o.category = kCategory;
    o.group = "billing";
    o.lease_ttl_ms = 3000;
    o.heartbeat_interval_ms = 1000;
    o.discovery_interval_ms = 500;
    o.poll_interval_ms = 20;
    o.read_batch_max = 8;
    o.retry_count_max = 3;
    o.retry_backoff_ms = 50;
    return o;
  }

  sim::Scheduler scheduler;
  sim::ServerClock server_clock{scheduler};
  sim::SimRedis redis{server_clock};
  sim::ServerAdapter<sim::SimRedis> server{redis};
  properties::VectorHistorySink history;
  sim::SimRuntime runtime{scheduler, "a"};
  sim::SimRedisLink link;
  Wrap wrap;
  redis::RedisBroker broker{wrap};
  H handler;
  Engine engine;
  sim::SimRuntime publisher_runtime{scheduler, "publisher"};
  sim::SimRedisLink publisher_link;
  redis::RedisBroker publisher{publisher_link};
  std::vector<std::string> ids;  // of the events published, in order

  ~OneWorkerWorld() {
    if (::testing::Test::HasFailure()) print_history();
    runtime.crash();
    publisher_runtime.crash();
  }

  // Publishes {"seq":1} .. {"seq":count} to order:k0.
  Task<void> publish_all(int count) {
    const PartitionRef partition{kCategory, "k0"};  // named: no temporary inside co_await
    for (int seq = 1; seq <= count; ++seq) {
      Result<std::string> id =
          co_await publisher.publish(partition, "created", "{\"seq\":" + std::to_string(seq) + "}");
      SEQBY_CHECK(id.ok());
      ids.push_back(id.value());
    }
  }

  // The event ids of the worker's records of `op`, in history order.
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

}  // namespace seqby::testing
