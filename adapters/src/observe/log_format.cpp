// The worker's log lines as text or as JSON objects.
#include "seqby/observe/log_format.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

namespace seqby::redis {

bool parse_log_format(std::string_view name, LogFormat* out) {
  if (name == "text") {
    *out = LogFormat::text;
    return true;
  }
  if (name == "json") {
    *out = LogFormat::json;
    return true;
  }
  return false;
}

namespace {

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '#';
}

// The length of the key=... that starts at `at`, the '=' excluded; 0 when none starts there.
std::size_t key_length(std::string_view line, std::size_t at) {
  std::size_t end = at;
  while (end < line.size() && key_char(line[end])) ++end;
  return end > at && end < line.size() && line[end] == '=' ? end - at : 0;
}

// Reads the quoted value whose opening quote is at line[at]; returns the position after it. The
// closing quote is an unescaped '"' at the end of the line or before " key=", so that a quote a
// writer left unescaped inside the value stays in it.
std::size_t read_quoted(std::string_view line, std::size_t at, std::string* value) {
  std::size_t i = at + 1;
  while (i < line.size()) {
    const char c = line[i];
    if (c == '\\' && i + 1 < line.size()) {
      const char next = line[i + 1];
      if (next == 'n') {
        *value += '\n';
      } else if (next == 'r') {
        *value += '\r';
      } else if (next == '"' || next == '\\') {
        *value += next;
      } else {
        *value += c;
        *value += next;
      }
      i += 2;
      continue;
    }
    if (c == '"' && (i + 1 == line.size() || (line[i + 1] == ' ' && key_length(line, i + 2) > 0))) {
      return i + 1;
    }
    *value += c;
    ++i;
  }
  return i;  // no closing quote: the value runs to the end of the line
}

// A decimal integer as written by std::to_string (no sign but '-', no leading zeros).
bool canonical_integer(const std::string& text, std::int64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  const std::size_t digits = text[0] == '-' ? 1 : 0;
  if (digits == text.size()) return false;
  if (text[digits] == '0' && text.size() > digits + 1) return false;
  if (text == "-0") return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<LogField> parse_log_fields(std::string_view line) {
  std::vector<LogField> fields;
  std::string loose;  // text that is no key=value pair, joined by spaces
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    const std::size_t key = key_length(line, i);
    if (key == 0) {
      const std::size_t end = std::min(line.find(' ', i), line.size());
      loose += (loose.empty() ? "" : " ") + std::string(line.substr(i, end - i));
      i = end;
      continue;
    }
    LogField field;
    field.key = std::string(line.substr(i, key));
    i += key + 1;
    if (i < line.size() && line[i] == '"') {
      field.quoted = true;
      i = read_quoted(line, i, &field.value);
    } else {
      const std::size_t end = std::min(line.find(' ', i), line.size());
      field.value = std::string(line.substr(i, end - i));
      i = end;
    }
    fields.push_back(std::move(field));
  }
  if (!loose.empty()) fields.push_back(LogField{"text", std::move(loose), true});
  return fields;
}

std::string json_log_line(std::string_view ts, std::string_view line) {
  nlohmann::ordered_json object;
  object["ts"] = std::string(ts);
  for (LogField& field : parse_log_fields(line)) {
    std::string key = field.key;
    for (int n = 2; object.contains(key); ++n) key = field.key + "_" + std::to_string(n);
    std::int64_t number = 0;
    if (!field.quoted && canonical_integer(field.value, &number)) {
      object[key] = number;
    } else if (!field.quoted && (field.value == "true" || field.value == "false")) {
      object[key] = field.value == "true";
    } else {
      object[key] = std::move(field.value);
    }
  }
  // Bytes that are no UTF-8 (a key from a foreign publisher) become U+FFFD, never an exception.
  return object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string log_timestamp(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch());
  const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[96];
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<int>(ms.count() % 1000));
  return text;
}

LogWriter::LogWriter(LogFormat format, std::string owner, std::FILE* out)
    : format_(format), owner_(std::move(owner)), out_(out) {}

void LogWriter::line(const std::string& text) const {
  if (format_ == LogFormat::text) {
    std::fprintf(out_, "component=worker owner=%s %s\n", owner_.c_str(), text.c_str());
  } else {
    const std::string json = json_log_line(log_timestamp(std::chrono::system_clock::now()),
                                           "component=worker owner=" + owner_ + " " + text) +
                             "\n";
    std::fwrite(json.data(), 1, json.size(), out_);
  }
  std::fflush(out_);
}

}  // namespace seqby::redis
