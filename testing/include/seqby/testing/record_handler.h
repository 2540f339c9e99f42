// seqby::testing: the fixtures of seqby's own tests, outside the production API (installed only
// with the component seqby_testing). RecordHandler is the built-in test handler of `seqby worker`
// (handler name "record"): it reads the event's per-key `seq` from its JSON data, marks a
// cross-instance in-progress key of the lease unit in Redis (handler_enter.lua) for the time of
// the call, sleeps `delay_ms` when the data has it, fails always when the data has
// "poison":true, fails without committing while the event's delivery count is at most
// `fail_deliveries` (a transient failure: the engine's retries re-read it from the pending list,
// so it succeeds on a later delivery), commits through the fenced sink (context.commit(seq,
// event id)) and removes its marker (handler_exit.lua). With a journal (`journal_maxlen` > 0)
// the two scripts journal the execution's enter and exit in the unit's decision journal,
// exactly. The marker is
// C:K:__inprogress__:G for a partition, and
// __pm__:G:X:__inprogress__:G for process manager G's correlation value X, the same key for the
// events of C1:X, C2:X, ... Its value names the event: `O:ID` for a partition, `O:C:ID` for a
// process manager (entry ids of different streams can be equal, so the stream's category is part
// of the name). A marker of another owner means another instance is inside the same unit: it
// records `warn` with detail "inprogress_overlap holder=VALUE" (in the journal, by the script)
// and goes on (the tests assert it never happens). A marker of its own owner (a lost exit
// reply) is replaced, never reported. An exit whose reply is lost is sent again, so its record
// is in the journal before the engine's next step. It is a test fixture for real-Redis runs, not a
// production handler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/broker/script_contracts.h"
#include "seqby/core/handler.h"
#include "seqby/core/history.h"
#include "seqby/core/keyspace.h"
#include "seqby/core/runtime.h"

namespace seqby::testing {

inline constexpr std::string_view kInProgressOverlap = "inprogress_overlap";

// The marker's value while `owner_id` is inside `event_id` of `category`: "O:ID", or "O:C:ID"
// for a process manager (see the header comment).
std::string inprogress_marker_value(std::string_view owner_id, std::string_view category,
                                    std::string_view event_id, bool process_manager);

class RecordHandler final : public Handler {
 public:
  // REQUIRES: every reference outlives the handler. `marker_ttl_ms` bounds the marker's life
  // when the instance dies inside a call.
  RecordHandler(Runtime& runtime, redis::RedisBroker& broker, HistorySink& history,
                std::string owner_id, std::uint64_t marker_ttl_ms,
                std::uint64_t journal_maxlen = 0);

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override;

 private:
  // The journal tail of a step of `context` about `event_id`.
  redis::script::JournalTail journal_of(const HandlerContext& context) const;
  // handler_exit.lua, sent again while its reply is lost to the transport (at most
  // kExitAttemptsMax sends, kExitBackoffMs doubling up to kExitBackoffMaxMs between them: about
  // 4 s of waits in all, past any lease TTL a test runs).
  Task<void> exit_until_answered(const redis::script::HandlerExit::Args& args);
  static constexpr std::uint32_t kExitAttemptsMax = 10;
  static constexpr std::uint64_t kExitBackoffMs = 20;
  static constexpr std::uint64_t kExitBackoffMaxMs = 1000;

  Runtime& runtime_;
  redis::RedisBroker& broker_;
  HistorySink& history_;
  std::string owner_id_;
  std::uint64_t marker_ttl_ms_;
  std::uint64_t journal_maxlen_;
};

}  // namespace seqby::testing
