// Pieces the end-to-end engine tests on the simulator share: the per-key seq of an event's data,
// a handler that commits each event's seq through the fenced sink after a delay of virtual
// time, and a link that can be cut off from the server.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "seqby/broker/redis_link.h"
#include "seqby/core/check.h"
#include "seqby/core/handler.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

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

}  // namespace seqby::testing
