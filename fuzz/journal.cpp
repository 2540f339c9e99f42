// Fuzz target: the decision journal's reader (seqby/hiredis/journal.h) and the history stream's
// (redis_history.h). Input: the bytes of XRANGE replies as a server sent them, one reply per
// journal stream (the first the category's C:__journal__, then C:k1:__journal__, ...), read by
// hiredis. Properties: a refusal is Errc::invalid or Errc::protocol naming the stream; an entry's
// record has its id's time; entries written back as stream fields read back the same (and the
// history stream's reader reads the same records); a record's JSON line reads back to it when its
// text is UTF-8; the merge keeps every record once, each stream's in its order, indices 0, 1, ...
#include "seqby/hiredis/journal.h"

#include <map>
#include <string>

#include "fuzz_support.h"
#include "resp.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/properties/history_io.h"

namespace {

using seqby::HistoryRecord;
using seqby::Result;
using seqby::redis::JournalEntry;
using seqby::redis::Reply;

bool texts_are_utf8(const HistoryRecord& r) {
  return seqby::fuzz::is_utf8(r.node) && seqby::fuzz::is_utf8(r.category) &&
         seqby::fuzz::is_utf8(r.key) && seqby::fuzz::is_utf8(r.group) &&
         seqby::fuzz::is_utf8(r.event_id) && seqby::fuzz::is_utf8(r.detail);
}

std::string line_at(HistoryRecord record, std::uint64_t index) {
  record.index = index;
  return seqby::properties::record_to_jsonl(record);
}

// The XRANGE reply a server would send for `entries`, their fields as a journal note writes them.
Reply xrange_of(const std::vector<JournalEntry>& entries) {
  std::vector<Reply> rows;
  for (const JournalEntry& entry : entries) {
    std::vector<Reply> flat;
    for (auto& [name, value] : seqby::redis::history_fields(entry.record)) {
      if (name == "time") continue;  // the entry id is the time
      flat.push_back(Reply::bulk(name));
      flat.push_back(Reply::bulk(value));
    }
    rows.push_back(Reply::array({Reply::bulk(entry.id), Reply::array(std::move(flat))}));
  }
  return Reply::array(std::move(rows));
}

void check_entries(const Reply& reply, const std::string& stream,
                   const std::vector<JournalEntry>& entries) {
  for (const JournalEntry& entry : entries) {
    FUZZ_CHECK(entry.stream == stream && entry.record.index == 0, "an entry names its stream");
    const std::string ms = entry.id.substr(0, entry.id.find('-'));
    FUZZ_CHECK(
        std::to_string(entry.record.time_ms) == ms || ms.starts_with("0") || ms.starts_with("+"),
        "an entry's time is its id's");
    const Result<HistoryRecord> fields =
        seqby::redis::history_from_fields(seqby::redis::history_fields(entry.record));
    FUZZ_CHECK(fields.ok() && line_at(fields.value(), 0) == line_at(entry.record, 0),
               "a record's stream fields read back to it");
    if (texts_are_utf8(entry.record)) {
      const std::string line = seqby::properties::record_to_jsonl(entry.record);
      const Result<HistoryRecord> parsed = seqby::properties::parse_history_line(line, "j", 1);
      FUZZ_CHECK(parsed.ok() && seqby::properties::record_to_jsonl(parsed.value()) == line,
                 "a record's JSON line reads back to it");
    }
  }
  const Result<std::vector<JournalEntry>> again =
      seqby::redis::journal_entries_from_xrange(xrange_of(entries), stream);
  FUZZ_CHECK(again.ok() && again.value().size() == entries.size(), "entries written back read");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    FUZZ_CHECK(again.value()[i].id == entries[i].id &&
                   line_at(again.value()[i].record, 0) == line_at(entries[i].record, 0),
               "entries written back read back the same");
  }
  // The history stream's reader reads the same records (its time from the fields, not the id).
  const Result<std::vector<HistoryRecord>> history = seqby::redis::history_from_xrange(reply);
  FUZZ_CHECK(history.ok() && history.value().size() == entries.size(),
             "what the journal reads the history reader reads");
  for (std::size_t i = 0; i < entries.size(); ++i) {
    HistoryRecord expected = entries[i].record;
    expected.time_ms = history.value()[i].time_ms;
    FUZZ_CHECK(line_at(history.value()[i], i) == line_at(expected, i),
               "the history reader reads the same fields");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = seqby::fuzz::as_text(data, size);
  if (seqby::fuzz::declares_huge_array(bytes)) return 0;
  const seqby::fuzz::ReadReplies read = seqby::fuzz::read_resp(bytes);
  std::vector<std::vector<JournalEntry>> streams;
  std::size_t total = 0;
  for (std::size_t i = 0; i < read.replies.size(); ++i) {
    if (!read.replies[i].ok()) continue;
    const std::string stream =
        i == 0 ? seqby::category_journal_name("orders")
               : seqby::journal_stream_name(seqby::PartitionRef{"orders", "k" + std::to_string(i)});
    const Reply& reply = read.replies[i].value();
    const Result<std::vector<JournalEntry>> entries =
        seqby::redis::journal_entries_from_xrange(reply, stream);
    if (!entries.ok()) {
      const seqby::Errc code = entries.error().code;
      FUZZ_CHECK(code == seqby::Errc::invalid || code == seqby::Errc::protocol ||
                     (reply.is_error() && code == entries.error().code),
                 "a refused reply is invalid or a protocol error");
      FUZZ_CHECK(reply.is_error() || entries.error().message.find(stream) != std::string::npos,
                 "a refusal names the stream");
      continue;
    }
    check_entries(reply, stream, entries.value());
    total += entries.value().size();
    if (!entries.value().empty()) streams.push_back(entries.value());
  }

  // The merge: each record once, each stream's in stream order, indices 0, 1, 2, ...
  std::map<std::string, std::size_t> position_of;  // "stream#position" -> the record's position
  std::vector<std::vector<JournalEntry>> tagged = streams;
  for (std::size_t s = 0; s < tagged.size(); ++s) {
    for (std::size_t p = 0; p < tagged[s].size(); ++p) {
      tagged[s][p].record.detail = std::to_string(s) + "#" + std::to_string(p);
    }
  }
  const std::vector<HistoryRecord> merged =
      seqby::redis::merge_journals(std::move(tagged), {"orders"});
  FUZZ_CHECK(merged.size() == total, "the merge keeps every record");
  std::vector<std::size_t> next(streams.size(), 0);
  for (std::size_t i = 0; i < merged.size(); ++i) {
    FUZZ_CHECK(merged[i].index == i, "merged indices are 0, 1, 2, ...");
    const std::string& tag = merged[i].detail;
    const std::size_t hash = tag.find('#');
    const std::size_t s = std::stoul(tag.substr(0, hash));
    const std::size_t p = std::stoul(tag.substr(hash + 1));
    FUZZ_CHECK(s < streams.size() && p == next[s], "each stream's records keep their order");
    ++next[s];
  }
  return 0;
}
