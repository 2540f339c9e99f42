// History as JSON Lines: one JSON object per record, one record per line, in the history's total
// order. The canonical form (fixed field order, defaults omitted, no spaces) is what
// history_sha256 hashes, so two runs with the same seed and build compare equal byte for byte.
// The reader accepts any field order and explicit defaults; it rejects unknown fields, unknown ops,
// wrong types and indices that do not strictly increase, naming file, line and field.
//
// The fields, their order and when each is written come from kHistoryFields (seqby/core/history.h),
// which the Redis stream codec (redis_history.h) shares.
// Line format (fields in canonical order; a field at its default is omitted when writing):
//   {"index":12,"time":3050,"node":"w1","op":"commit","category":"orders","key":"client-A",
//    "group":"billing","generation":3,"event":"1700-0","seq":4,"detail":"..."}
//   index       unsigned, strictly increasing down the file (always written)
//   time        unsigned milliseconds of the recorder's clock (always written)
//   op          one of history_op_name() (always written)
//   node, category, key, group, event, detail   strings, default ""
//   generation  unsigned, default 0;  seq  integer >= -1, default -1
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/core/result.h"
#include "seqby/properties/sha256.h"

namespace seqby::properties {

// The canonical JSON object of one record, without a newline.
std::string record_to_jsonl(const HistoryRecord& record);
// Every record's canonical line, each followed by '\n'.
std::string history_to_jsonl(const std::vector<HistoryRecord>& history);
void write_history(std::ostream& out, const std::vector<HistoryRecord>& history);
// SHA-256 of history_to_jsonl(history), 64 lowercase hex digits.
std::string history_sha256(const std::vector<HistoryRecord>& history);

// Parses one line (without its newline). `file_name` and `line_number` only shape error text:
// "<file_name>:<line_number>: field '<name>': <what is wrong>".
Result<HistoryRecord> parse_history_line(std::string_view line, std::string_view file_name,
                                         std::uint64_t line_number);
// Reads a whole history. Blank lines are skipped; a trailing '\r' is dropped. Errors are
// Errc::invalid with a message naming the file, the 1-based line and the field.
Result<std::vector<HistoryRecord>> read_history(std::istream& in, std::string_view file_name);
// Opens `path` and reads it; a file that cannot be opened is Errc::not_found.
Result<std::vector<HistoryRecord>> read_history_file(const std::string& path);

struct HistoryDifference {
  std::uint64_t position = 0;  // position in the vectors (0-based) of the first difference
  std::string left;            // canonical line of a[position], or "(end of history)"
  std::string right;           // canonical line of b[position], or "(end of history)"
};
// The first position where the canonical renderings of `a` and `b` differ; nullopt when equal.
std::optional<HistoryDifference> first_difference(const std::vector<HistoryRecord>& a,
                                                  const std::vector<HistoryRecord>& b);

// Keeps records in memory, assigning indices 0, 1, 2, ...
class VectorHistorySink final : public HistorySink {
 public:
  void record(HistoryRecord record) override;
  const std::vector<HistoryRecord>& records() const { return records_; }
  // Moves the records out; the sink is empty afterwards and indices restart at 0.
  std::vector<HistoryRecord> take();

 private:
  std::vector<HistoryRecord> records_;
};

// Writes canonical JSON lines, assigning indices 0, 1, 2, ..., either to a caller's stream (not
// owned; the caller flushes it) or to an owned string buffer. Keeps a running SHA-256 of what it
// wrote, equal to history_sha256 of the same records.
class JsonlHistorySink final : public HistorySink {
 public:
  JsonlHistorySink();  // writes into text()
  explicit JsonlHistorySink(std::ostream& out);
  JsonlHistorySink(const JsonlHistorySink&) = delete;
  JsonlHistorySink& operator=(const JsonlHistorySink&) = delete;

  void record(HistoryRecord record) override;
  // REQUIRES: constructed without a stream.
  const std::string& text() const;
  std::uint64_t record_count() const { return next_index_; }
  // SHA-256 of every line written so far.
  std::string sha256_hex() const;

 private:
  std::ostream* out_ = nullptr;
  std::string text_;
  Sha256 hasher_;
  std::uint64_t next_index_ = 0;
};

}  // namespace seqby::properties
