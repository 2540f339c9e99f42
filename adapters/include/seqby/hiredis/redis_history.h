// The history of a real-Redis run, kept in a Redis stream (default `seqby:history`): one stream
// entry per HistoryRecord, its fields named as in history_io's JSON lines (both codecs iterate
// kHistoryFields, seqby/core/history.h). The stream's order is
// the history's total order; indices are assigned when it is read back. RedisHistorySink appends
// in record() order per instance without blocking the caller; it does not make an append atomic
// with the broker decision it reports (a record can be lost if its process is killed before the
// append reached Redis). publish_recorded() appends an event and its publish record atomically.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seqby/broker/redis_link.h"
#include "seqby/core/history.h"
#include "seqby/core/naming.h"
#include "seqby/core/result.h"
#include "seqby/core/runtime.h"
#include "seqby/core/task.h"

namespace seqby::redis {

inline constexpr std::string_view kDefaultHistoryStream = kHistoryStreamName;  // keyspace.h

// The stream entry fields of `record` (index omitted; time, op and node always written).
std::vector<std::pair<std::string, std::string>> history_fields(const HistoryRecord& record);
// The record of an entry's fields, index left 0. Errc::invalid naming the field on bad input.
Result<HistoryRecord> history_from_fields(
    const std::vector<std::pair<std::string, std::string>>& fields);
// The records of an XRANGE reply, indices 0, 1, 2, ... in stream order.
Result<std::vector<HistoryRecord>> history_from_xrange(const Reply& reply);

// Commands that append records to Redis streams, sent in order by one drainer task on `link`
// without blocking the caller: the history stream's appends and the decision journal's notes.
// Beyond queue_max waiting, a command is dropped and counted; a failed append is counted.
class AppendQueue {
 public:
  // REQUIRES: `runtime` and `link` outlive the queue; append() on the runtime's loop.
  AppendQueue(Runtime& runtime, RedisLink& link, std::size_t queue_max);

  void append(Command command);
  // Returns when every command queued before the call was sent (or failed), or after
  // wait_max_ms.
  Task<void> flush(std::uint64_t wait_max_ms);

  std::uint64_t written() const { return written_; }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t failed() const { return failed_; }
  // Commands still queued or in flight (at stop: what flush() could not write).
  std::uint64_t unwritten() const { return queue_.size() + (in_flight_ ? 1 : 0); }

 private:
  Task<void> drain();

  Runtime& runtime_;
  RedisLink& link_;
  std::size_t queue_max_;
  std::deque<Command> queue_;
  bool draining_ = false;
  bool in_flight_ = false;
  std::uint64_t written_ = 0;
  std::uint64_t dropped_ = 0;
  std::uint64_t failed_ = 0;
};

class RedisHistorySink final : public HistorySink {
 public:
  // REQUIRES: `runtime` and `link` outlive the sink; record() on the runtime's loop.
  RedisHistorySink(Runtime& runtime, RedisLink& link, std::string stream,
                   std::size_t queue_max = 1u << 20);

  // Queues the append (AppendQueue).
  void record(HistoryRecord record) override;
  Task<void> flush(std::uint64_t wait_max_ms) { return appends_.flush(wait_max_ms); }

  std::uint64_t dropped() const { return appends_.dropped(); }
  std::uint64_t failed() const { return appends_.failed(); }
  std::uint64_t unwritten() const { return appends_.unwritten(); }

 private:
  std::string stream_;
  AppendQueue appends_;
};

// Runs the publish script's effect (XADD type/data, SADD key to the index) and appends the
// publish record (node `node`, seq, detail) to `history_stream`, in one script. Returns the id.
Task<Result<std::string>> publish_recorded(RedisLink& link, const PartitionRef& partition,
                                           std::string_view type, std::string_view data_json,
                                           std::string_view history_stream, std::string_view node,
                                           std::int64_t seq, std::string_view detail);

}  // namespace seqby::redis
