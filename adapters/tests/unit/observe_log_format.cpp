// The worker's two log forms (seqby/observe/log_format.h): the text form is byte for byte the
// key=value line the worker always wrote; the json form is one JSON object per line that a JSON
// parser reads back with every field, its quoting undone, numbers and booleans typed, and ts
// first.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "seqby/hiredis/link_report.h"
#include "seqby/observe/log_format.h"

namespace seqby::redis {
namespace {

std::string written(LogFormat format, const std::string& owner, const std::string& text) {
  std::FILE* out = std::tmpfile();
  EXPECT_NE(out, nullptr);
  LogWriter(format, owner, out).line(text);
  std::rewind(out);
  std::string got;
  char chunk[512];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof(chunk), out)) > 0;) got.append(chunk, n);
  std::fclose(out);
  return got;
}

TEST(LogFormat, TextIsTheKeyValueLineAsAlwaysWritten) {
  const std::string text = "event=halt category=billing key=c4 detail=\"x y\"";
  EXPECT_EQ(written(LogFormat::text, "w1", text),
            "component=worker owner=w1 event=halt category=billing key=c4 detail=\"x y\"\n");
}

TEST(LogFormat, JsonIsOneObjectPerLineWithEveryFieldTyped) {
  const std::string text =
      "event=redis_unreachable link=commands attempt=3 retry_in_ms=80 "
      "reconnecting=true error=" +
      quoted_log_value("connect to \"x\": refused\nsecond line");
  const std::string line = written(LogFormat::json, "w-1", text);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line: " << line;
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.begin().key(), "ts");
  EXPECT_EQ(j["ts"].get<std::string>().size(), std::string("2026-12-01T22:40:01.123Z").size());
  EXPECT_EQ(j["ts"].get<std::string>().back(), 'Z');
  EXPECT_EQ(j["component"], "worker");
  EXPECT_EQ(j["owner"], "w-1");
  EXPECT_EQ(j["event"], "redis_unreachable");
  EXPECT_EQ(j["link"], "commands");
  EXPECT_EQ(j["attempt"], 3);
  EXPECT_EQ(j["retry_in_ms"], 80);
  EXPECT_EQ(j["reconnecting"], true);
  EXPECT_EQ(j["error"], "connect to \"x\": refused\nsecond line");
}

TEST(LogFormat, QuotedNumbersStayTextAndOddIntegersStayText) {
  const nlohmann::json j =
      nlohmann::json::parse(json_log_line("t", "a=\"12\" b=007 c=-5 d=1e3 e=99999999999999999999"));
  EXPECT_EQ(j["a"], "12");
  EXPECT_EQ(j["b"], "007");
  EXPECT_EQ(j["c"], -5);
  EXPECT_EQ(j["d"], "1e3");
  EXPECT_EQ(j["e"], "99999999999999999999");
}

TEST(LogFormat, AnUnescapedQuoteInsideAValueStaysInIt) {
  // operator_log_line writes detail="..." without escaping the detail.
  const nlohmann::json j = nlohmann::json::parse(
      json_log_line("t", "event=halt detail=\"failed: \"seq\" is missing\" key=k1"));
  EXPECT_EQ(j["detail"], "failed: \"seq\" is missing");
  EXPECT_EQ(j["key"], "k1");
}

TEST(LogFormat, TextThatIsNoPairAndRepeatedKeysAreKept) {
  const nlohmann::json j =
      nlohmann::json::parse(json_log_line("t", "event=x stray words key=a key=b"));
  EXPECT_EQ(j["text"], "stray words");
  EXPECT_EQ(j["key"], "a");
  EXPECT_EQ(j["key_2"], "b");
}

TEST(LogFormat, BytesThatAreNoUtf8AreReplacedNotThrown) {
  const std::string line = json_log_line("t", "event=index_member_skipped key=\"\xff\xfe\"");
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["event"], "index_member_skipped");
  EXPECT_FALSE(j["key"].get<std::string>().empty());
}

TEST(LogFormat, NamesAreTextAndJsonOnly) {
  LogFormat format = LogFormat::text;
  EXPECT_TRUE(parse_log_format("json", &format));
  EXPECT_EQ(format, LogFormat::json);
  EXPECT_TRUE(parse_log_format("text", &format));
  EXPECT_EQ(format, LogFormat::text);
  EXPECT_FALSE(parse_log_format("JSON", &format));
  EXPECT_FALSE(parse_log_format("", &format));
}

TEST(LogFormat, TimestampIsRfc3339UtcWithMilliseconds) {
  const auto at = std::chrono::system_clock::time_point(std::chrono::milliseconds(1764628801123));
  EXPECT_EQ(log_timestamp(at), "2025-12-01T22:40:01.123Z");
}

}  // namespace
}  // namespace seqby::redis
