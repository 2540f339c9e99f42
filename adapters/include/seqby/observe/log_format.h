// The two forms of a worker's log lines on stderr: `text`, the key=value lines as written
// (`component=worker owner=O event=E k=v k="quoted value" ...`), and `json`, the same line as one
// JSON object per line: {"ts":"2026-12-01T22:40:01.123Z","component":"worker","owner":"O",
// "event":"E",...}. A json line carries every field of the text line, in order, with its
// quoting undone (quoted_log_value's escapes); an unquoted integer becomes a JSON number and an
// unquoted true or false a JSON boolean; text that is no key=value pair goes to "text". It
// changes nothing in the text form.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace seqby::redis {

enum class LogFormat { text, json };

// "text" or "json"; false for anything else.
bool parse_log_format(std::string_view name, LogFormat* out);

// One field of a key=value line, its value unquoted.
struct LogField {
  std::string key;
  std::string value;
  bool quoted = false;
};

// The fields of `line` in order. A run of text that is no key=value pair becomes a field "text".
std::vector<LogField> parse_log_fields(std::string_view line);

// `line` (a key=value line, no newline) as one JSON object, "ts" first, without a newline.
std::string json_log_line(std::string_view ts, std::string_view line);

// `at` as RFC 3339 UTC with milliseconds: 2026-12-01T22:40:01.123Z.
std::string log_timestamp(std::chrono::system_clock::time_point at);

// Writes the worker's lines to `out` (stderr), each with one call, in `format`.
class LogWriter {
 public:
  // REQUIRES: `out` outlives the writer.
  LogWriter(LogFormat format, std::string owner, std::FILE* out = stderr);
  // Writes "component=worker owner=O " + text (text: key=value pairs), or its json form.
  void line(const std::string& text) const;
  LogFormat format() const { return format_; }

 private:
  LogFormat format_;
  std::string owner_;
  std::FILE* out_;
};

}  // namespace seqby::redis
