// The flat JSON codec of event payloads: exact text, round trips, escapes, and the error (with
// its byte offset) for each kind of malformed input.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "seqby/core/json_flat.h"

namespace seqby {
namespace {

std::string decode_error(std::string_view text) {
  Result<JsonObject> r = decode_json_object(text);
  return r.ok() ? "ok" : r.error().message;
}

TEST(DomainJson, EncodesFieldsInNameOrderWithoutSpaces) {
  JsonObject o{{"n", std::int64_t{-3}},
               {"client_id", std::string("client-1")},
               {"ok", true},
               {"gone", nullptr}};
  EXPECT_EQ(encode_json_object(o), R"({"client_id":"client-1","gone":null,"n":-3,"ok":true})");
  EXPECT_EQ(encode_json_object({}), "{}");
}

TEST(DomainJson, EscapesControlBytesQuotesAndBackslashes) {
  JsonObject o{{"s", std::string("a\"b\\c\n\t\x01\x7f\xc3\xa9")}};
  const std::string text = encode_json_object(o);
  EXPECT_EQ(text, "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\xc3\xa9\"}");
  Result<JsonObject> back = decode_json_object(text);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), o);
}

TEST(DomainJson, RoundTripsEveryValueKind) {
  JsonObject o{{"min", std::numeric_limits<std::int64_t>::min()},
               {"max", std::numeric_limits<std::int64_t>::max()},
               {"zero", std::int64_t{0}},
               {"f", false},
               {"t", true},
               {"null", nullptr},
               {"empty", std::string()},
               {"bytes", std::string("\x00\xff\x80:", 4)},
               {"", std::string("empty name")}};
  Result<JsonObject> back = decode_json_object(encode_json_object(o));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), o);
}

TEST(DomainJson, DecodesWhitespaceAndUnicodeEscapes) {
  Result<JsonObject> r =
      decode_json_object(" {\n \"a\" : \"\\u00e9\\u20ac\\ud83d\\ude00\\/\" ,\t\"b\":12 } \r\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(std::get<std::string>(r.value().at("a")), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80/");
  EXPECT_EQ(std::get<std::int64_t>(r.value().at("b")), 12);
}

TEST(DomainJson, MalformedInputNamesTheProblemAndItsOffset) {
  EXPECT_EQ(decode_error(""), "json: expected '{' at the start of an object at byte 0");
  EXPECT_EQ(decode_error("[1]"), "json: expected '{' at the start of an object at byte 0");
  EXPECT_EQ(decode_error("{\"a\" 1}"), "json: expected ':' after field name at byte 5");
  EXPECT_EQ(decode_error("{\"a\":1,}"), "json: expected '\"' to start a field name at byte 7");
  EXPECT_EQ(decode_error("{\"a\":1 \"b\":2}"), "json: expected ',' or '}' after a field at byte 7");
  EXPECT_EQ(decode_error("{\"a\":{}}"),
            "json: nested objects and arrays are not supported at byte 5");
  EXPECT_EQ(decode_error("{\"a\":[1]}"),
            "json: nested objects and arrays are not supported at byte 5");
  EXPECT_EQ(decode_error("{\"a\":1.5}"), "json: only integers are supported at byte 6");
  EXPECT_EQ(decode_error("{\"a\":1e3}"), "json: only integers are supported at byte 6");
  EXPECT_EQ(decode_error("{\"a\":01}"), "json: leading zeros are not allowed at byte 5");
  EXPECT_EQ(decode_error("{\"a\":-}"), "json: expected a digit at byte 6");
  EXPECT_EQ(decode_error("{\"a\":9223372036854775808}"),
            "json: integer out of the 64-bit range at byte 5");
  EXPECT_EQ(decode_error("{\"a\":-9223372036854775809}"),
            "json: integer out of the 64-bit range at byte 5");
  EXPECT_EQ(decode_error("{\"a\":tru}"),
            "json: expected a value (null, true, false, an integer or a string) at byte 5");
  EXPECT_EQ(decode_error("{\"a\":\"x"), "json: unterminated string at byte 7");
  EXPECT_EQ(decode_error("{\"a\":\"x\ny\"}"), "json: raw control character in a string at byte 7");
  EXPECT_EQ(decode_error("{\"a\":\"\\q\"}"), "json: unknown escape sequence at byte 7");
  EXPECT_EQ(decode_error("{\"a\":\"\\u12\"}"),
            "json: expected four hex digits after \\u at byte 8");
  EXPECT_EQ(decode_error("{\"a\":\"\\udc00\"}"), "json: lone low surrogate at byte 6");
  EXPECT_EQ(decode_error("{\"a\":\"\\ud800x\"}"),
            "json: high surrogate without a low surrogate at byte 6");
  EXPECT_EQ(decode_error("{\"a\":1,\"a\":2}"), "json: duplicate field at byte 7");
  EXPECT_EQ(decode_error("{} x"), "json: unexpected text after the object at byte 3");
  EXPECT_EQ(decode_error("{\"a\":"), "json: unexpected end of input, expected a value at byte 5");
}

TEST(DomainJson, RefusesOversizedInput) {
  const std::string huge(kJsonTextBytesMax + 1, ' ');
  EXPECT_EQ(decode_error(huge), "json: input of 1048577 bytes exceeds kJsonTextBytesMax=1048576");
}

}  // namespace
}  // namespace seqby
