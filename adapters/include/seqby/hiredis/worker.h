// The production pieces of `seqby worker` around any handler: a history sink that also logs what an
// operator must see (warn, halt, resume, reap) as key=value lines, and the halt figures (pending
// count and lag) read from Redis. The `record` test handler is a fixture of seqby::testing
// (testing/include/seqby/testing/record_handler.h), not part of this library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "seqby/broker/redis_link.h"
#include "seqby/core/history.h"
#include "seqby/core/keyspace.h"
#include "seqby/core/runtime.h"

namespace seqby::redis {

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
// XPENDING and XINFO GROUPS on the partition's stream named in `layout` (C:K, or C:{K} on a
// cluster; -1 for a figure Redis did not give).
Task<std::string> halt_figures_line(RedisLink& link, HistoryRecord halt, KeyLayout layout);

}  // namespace seqby::redis
