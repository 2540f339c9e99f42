// The built-in test handler of `seqby worker` (handler name "record"): it reads the event's
// per-key `seq` from its JSON data, marks a cross-instance in-progress key of the lease unit in
// Redis (SET NX GET PX: Redis 7) for the time of the call, sleeps `delay_ms` when the data has
// it, fails always when the data has "poison":true, and commits through the fenced sink
// (context.commit(seq, event id)). The marker is C:K:__inprogress__:G for a partition, and
// __pm__:G:X:__inprogress__:G for process manager G's correlation value X, the same key for the
// events of C1:X, C2:X, ... Its value names the event: `O:ID` for a partition, `O:C:ID` for a
// process manager (entry ids of different streams can be equal, so the stream's category is part
// of the name). A refused SET NX means another instance is inside the same unit: it
// records `warn` with detail "inprogress_overlap" and goes on (the tests assert it never
// happens). It is a test fixture for real-Redis runs, not a production handler.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "seqby/core/handler.h"
#include "seqby/core/history.h"
#include "seqby/core/runtime.h"
#include "seqby/redis/redis_link.h"

namespace seqby::redis {

inline constexpr std::string_view kInProgressOverlap = "inprogress_overlap";

// The marker's value while `owner_id` is inside `event_id` of `category`: "O:ID", or "O:C:ID"
// for a process manager (see the header comment).
std::string inprogress_marker_value(std::string_view owner_id, std::string_view category,
                                    std::string_view event_id, bool process_manager);

// UNIT:__inprogress__:G (built in seqby/core/keyspace.h).
using seqby::inprogress_key_name;

class RecordHandler final : public Handler {
 public:
  // REQUIRES: every reference outlives the handler. `marker_ttl_ms` bounds the marker's life
  // when the instance dies inside a call.
  RecordHandler(Runtime& runtime, RedisLink& link, HistorySink& history, std::string owner_id,
                std::uint64_t marker_ttl_ms);

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override;

 private:
  Runtime& runtime_;
  RedisLink& link_;
  HistorySink& history_;
  std::string owner_id_;
  std::uint64_t marker_ttl_ms_;
};

// A history sink that forwards every record to `inner` and, for the records an operator must
// see (warn, halt, resume, reap), also hands `log` the record and its key=value line (stderr in
// `seqby worker`). It makes no Redis call itself: the group's pending count and lag for a halt
// come from halt_figures_line(), which the worker runs as a task of its own.
class LoggedHistorySink final : public HistorySink {
 public:
  using Log = std::function<void(const HistoryRecord&, const std::string&)>;
  // REQUIRES: `inner` outlives the sink. `log` receives each line without its newline.
  LoggedHistorySink(HistorySink& inner, Log log);
  void record(HistoryRecord record) override;

 private:
  HistorySink& inner_;
  Log log_;
};

// The log line of `record` ("event=halt category=C key=K ..."), or "" for an op not logged.
std::string operator_log_line(const HistoryRecord& record);

// "event=halt_figures category=C key=K group=G pending=N lag=M" for a halt record, read from
// XPENDING and XINFO GROUPS (-1 for a figure Redis did not give).
Task<std::string> halt_figures_line(RedisLink& link, HistoryRecord halt);

}  // namespace seqby::redis
