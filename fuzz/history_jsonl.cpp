// Fuzz target: the history reader (seqby/properties/history_io.h), as `seqby check` reads a
// JSON-lines history. Input: the file's text. Properties: a refusal is Errc::invalid naming the
// file and line; an accepted history has strictly increasing indices, writes canonical lines that
// read back to the same records, and its SHA-256 is the digest of those lines; each line on its
// own parses as read_history parsed it.
#include <sstream>
#include <string>

#include "fuzz_support.h"
#include "seqby/properties/history_io.h"
#include "seqby/properties/sha256.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(seqby::fuzz::as_text(data, size));
  std::istringstream in(text);
  const seqby::Result<std::vector<seqby::HistoryRecord>> read =
      seqby::properties::read_history(in, "h.jsonl");
  if (!read.ok()) {
    FUZZ_CHECK(read.error().code == seqby::Errc::invalid, "a refusal is Errc::invalid");
    FUZZ_CHECK(read.error().message.starts_with("h.jsonl:"), "a refusal names file and line");
    return 0;
  }
  const std::vector<seqby::HistoryRecord>& history = read.value();
  for (std::size_t i = 1; i < history.size(); ++i) {
    FUZZ_CHECK(history[i - 1].index < history[i].index, "indices strictly increase");
  }
  const std::string canonical = seqby::properties::history_to_jsonl(history);
  std::istringstream again_in(canonical);
  const seqby::Result<std::vector<seqby::HistoryRecord>> again =
      seqby::properties::read_history(again_in, "canonical.jsonl");
  if (!again.ok()) std::fprintf(stderr, "%s\n", again.error().message.c_str());
  FUZZ_CHECK(again.ok(), "the canonical lines of a history read back");
  FUZZ_CHECK(seqby::properties::history_to_jsonl(again.value()) == canonical,
             "read(write(h)) == h");
  FUZZ_CHECK(!seqby::properties::first_difference(history, again.value()).has_value(),
             "no record differs after a round trip");
  seqby::properties::Sha256 hasher;
  hasher.update(canonical);
  FUZZ_CHECK(
      seqby::properties::history_sha256(history) == seqby::properties::digest_hex(hasher.finish()),
      "the history's digest is its canonical lines'");
  // Line by line, as `seqby check` reports them.
  std::size_t line_number = 0;
  std::size_t record = 0;
  std::istringstream lines(canonical);
  std::string line;
  while (std::getline(lines, line)) {
    ++line_number;
    const seqby::Result<seqby::HistoryRecord> one =
        seqby::properties::parse_history_line(line, "canonical.jsonl", line_number);
    FUZZ_CHECK(one.ok() && seqby::properties::record_to_jsonl(one.value()) == line,
               "each canonical line parses to itself");
    ++record;
  }
  FUZZ_CHECK(record == history.size(), "one canonical line per record");
  return 0;
}
