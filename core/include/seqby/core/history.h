// The history: one record per step of a run, in a total order (the simulator's order; for real
// Redis, the order of a history stream in Redis). The engine reports what it did through a
// HistorySink; the checker (properties/) reads the records back and judges them. A production
// engine may pass a sink that drops everything.
#pragma once

#include <array>
#include <cstddef>
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
  drop,             // old-generation consumers with nothing pending were deleted (detail: which)
};
// How many ops there are (the last one's value + 1).
inline constexpr std::size_t kHistoryOpCount = static_cast<std::size_t>(HistoryOp::drop) + 1;

// The detail of the warn a holder records when it puts back into the index a unit the index lost
// while its stream held entries (Broker::reindex); the checker counts them.
inline constexpr std::string_view kPutBackWarning =
    "in no index while its stream holds entries (the index lost it): put back";

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

// The fields of a HistoryRecord as its codecs spell them (properties/history_io.h JSON lines,
// redis/redis_history.h stream entries), declared once: kHistoryFields names every field, in
// canonical order, and says when each codec writes it. Both codecs iterate it.
enum class HistoryFieldType : std::uint8_t {
  unsigned_number,  // a std::uint64_t member; default 0
  signed_number,    // a std::int64_t member; default and minimum kHistorySeqUnknown
  text,             // a std::string member; default ""
  op,               // the HistoryOp, as history_op_name()
};

// When a codec writes a field.
enum class HistoryFieldPresence : std::uint8_t {
  always,          // every record
  unless_default,  // only when the field is not at its default
  never,           // not in this codec (a stream entry's index is assigned when read back)
};

inline constexpr std::int64_t kHistorySeqUnknown = -1;  // HistoryRecord::seq's default

struct HistoryField {
  std::string_view name;  // a plain identifier: written as is, without escaping
  HistoryFieldType type;
  HistoryFieldPresence in_jsonl;
  HistoryFieldPresence in_stream;
  bool required;  // reading a record without it is an error (in a codec that has it)
  // The member, by type (the one of `type`; op is HistoryRecord::op).
  std::uint64_t HistoryRecord::*unsigned_member = nullptr;
  std::int64_t HistoryRecord::*signed_member = nullptr;
  std::string HistoryRecord::*text_member = nullptr;

  // Whether `record` holds this field's default value.
  bool at_default(const HistoryRecord& record) const {
    switch (type) {
      case HistoryFieldType::unsigned_number:
        return record.*unsigned_member == 0;
      case HistoryFieldType::signed_number:
        return record.*signed_member == kHistorySeqUnknown;
      case HistoryFieldType::text:
        return (record.*text_member).empty();
      case HistoryFieldType::op:
        return false;  // every record has an op
    }
    return false;
  }
  // This field of `record` as text: a number in decimal, the op by name (history_op_name).
  std::string text_of(const HistoryRecord& record) const;
  // Whether a codec with `presence` writes this field of `record`.
  bool written(HistoryFieldPresence presence, const HistoryRecord& record) const {
    return presence == HistoryFieldPresence::always ||
           (presence == HistoryFieldPresence::unless_default && !at_default(record));
  }
};

namespace history_fields_detail {
using P = HistoryFieldPresence;
using T = HistoryFieldType;
using R = HistoryRecord;
}  // namespace history_fields_detail

inline constexpr std::array<HistoryField, 11> kHistoryFields = [] {
  using namespace history_fields_detail;
  return std::array<HistoryField, 11>{{
      {"index", T::unsigned_number, P::always, P::never, true, &R::index},
      {"time", T::unsigned_number, P::always, P::always, false, &R::time_ms},
      {"node", T::text, P::unless_default, P::always, false, nullptr, nullptr, &R::node},
      {"op", T::op, P::always, P::always, true},
      {"category", T::text, P::unless_default, P::unless_default, false, nullptr, nullptr,
       &R::category},
      {"key", T::text, P::unless_default, P::unless_default, false, nullptr, nullptr, &R::key},
      {"group", T::text, P::unless_default, P::unless_default, false, nullptr, nullptr, &R::group},
      {"generation", T::unsigned_number, P::unless_default, P::unless_default, false,
       &R::generation},
      {"event", T::text, P::unless_default, P::unless_default, false, nullptr, nullptr,
       &R::event_id},
      {"seq", T::signed_number, P::unless_default, P::unless_default, false, nullptr, &R::seq},
      {"detail", T::text, P::unless_default, P::unless_default, false, nullptr, nullptr,
       &R::detail},
  }};
}();

// The field named `name`, or null.
const HistoryField* find_history_field(std::string_view name);

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
