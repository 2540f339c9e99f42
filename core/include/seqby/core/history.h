// The history: one record per step of a run, in a total order (the simulator's order; for real
// Redis, the order of a history stream in Redis). The engine reports what it did through a
// HistorySink; the checker (properties/) reads the records back and judges them. A production
// engine may pass a sink that drops everything.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace seqby {

enum class HistoryOp : std::uint8_t {
  publish,          // an event was appended to its partition (seq = per-key sequence number)
  acquire,          // a lease was taken at `generation`
  renew,            // a lease was renewed
  lose,             // the holder learned its lease is gone (renew refused or FENCED reply)
  release,          // a lease was released on graceful stop
  read,             // a fenced read returned an event
  read_fenced,      // a fenced read was refused (stale generation)
  enter,            // a handler started on an event
  exit,             // a handler finished on an event (detail: ok | failed | ...)
  ack,              // a fenced ack was accepted
  ack_fenced,       // a fenced ack was refused
  commit,           // the effect sink accepted a commit of `seq`
  commit_fenced,    // the effect sink refused a commit: stale lease
  commit_rejected,  // the effect sink refused a commit: not the key's next seq (detail says why)
  reclaim,          // pending entries of older consumers were moved to this consumer
  halt,             // a partition halted on a poison head (detail: reason)
  dlq,              // an entry was moved to the partition's DLQ (detail: by whom)
  skip,             // an operator acknowledged a head without processing it
  fault,            // the simulator injected a fault (detail: kind and parameters)
  warn,             // an operating warning (detail: e.g. partition count over threshold)
  reap,             // the owner removed its cold partition (stream, index entry and lease)
  resume,           // a halted partition's head was resolved by an operator; the owner goes on
};

const char* history_op_name(HistoryOp op);
// Returns false when `name` is not an op name.
bool parse_history_op(std::string_view name, HistoryOp* out);

struct HistoryRecord {
  std::uint64_t index = 0;    // position in the total order; assigned by the sink
  std::uint64_t time_ms = 0;  // the recorder's time (simulated time in the simulator)
  std::string node;           // owner id of the instance ("" for the publisher or the world)
  HistoryOp op = HistoryOp::fault;
  std::string category;          // stream category ("" when not about a partition)
  std::string key;               // partition key, or correlation value for a process manager
  std::string group;             // handler group (or process manager name)
  std::uint64_t generation = 0;  // lease generation the step was taken under (0: none)
  std::string event_id;          // stream entry id ("" when not about an event)
  std::int64_t seq = -1;         // per-key sequence number (-1: unknown here)
  std::string detail;            // free text: fault kind, failure reason, ...
};

class HistorySink {
 public:
  virtual ~HistorySink() = default;
  // Appends `record` to the history, assigning its index.
  virtual void record(HistoryRecord record) = 0;
};

// A sink that keeps nothing (a production engine that does not record history).
class NullHistorySink final : public HistorySink {
 public:
  void record(HistoryRecord) override {}
};

}  // namespace seqby
