// The JSON object codec of event payloads: exact text, round trips, escapes, values carried
// verbatim (nested objects, arrays, floats), the depth limit, and the error (with its byte offset)
// for each kind of malformed input.
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
  EXPECT_EQ(decode_error("{\"a\":01}"), "json: leading zeros are not allowed at byte 5");
  EXPECT_EQ(decode_error("{\"a\":-}"), "json: expected a digit at byte 6");
  EXPECT_EQ(decode_error("{\"a\":1.}"), "json: expected a digit after '.' at byte 7");
  EXPECT_EQ(decode_error("{\"a\":.5}"),
            "json: expected a value (null, true, false, a number, a string, an object or an "
            "array) at byte 5");
  EXPECT_EQ(decode_error("{\"a\":1e+}"), "json: expected a digit in the exponent at byte 8");
  EXPECT_EQ(decode_error("{\"a\":tru}"),
            "json: expected a value (null, true, false, a number, a string, an object or an "
            "array) at byte 5");
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

TEST(DomainJson, CarriesNestedValuesArraysAndFloatsVerbatim) {
  // Inner whitespace, escapes and number spellings are kept exactly as written.
  const std::string text =
      R"({"id":"k1","a":{"b":[1, 2.5,null]},"f":1.5e3,"g":-0.0,"big":18446744073709551616,)"
      R"("s":["\u00e9\"x\\/"],"e":{},"l":[],"dup":{"x":1,"x":2}})";
  Result<JsonObject> r = decode_json_object(text);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const JsonObject& o = r.value();
  EXPECT_EQ(std::get<std::string>(o.at("id")), "k1");
  EXPECT_EQ(o.at("a"), JsonValue(JsonRaw{R"({"b":[1, 2.5,null]})"}));
  EXPECT_EQ(o.at("f"), JsonValue(JsonRaw{"1.5e3"}));
  EXPECT_EQ(o.at("g"), JsonValue(JsonRaw{"-0.0"}));
  EXPECT_EQ(o.at("big"), JsonValue(JsonRaw{"18446744073709551616"}));
  EXPECT_EQ(o.at("s"), JsonValue(JsonRaw{R"(["\u00e9\"x\\/"])"}));
  EXPECT_EQ(o.at("e"), JsonValue(JsonRaw{"{}"}));
  EXPECT_EQ(o.at("l"), JsonValue(JsonRaw{"[]"}));
  EXPECT_EQ(o.at("dup"), JsonValue(JsonRaw{R"({"x":1,"x":2})"}));
  EXPECT_EQ(json_raw_kind(std::get<JsonRaw>(o.at("a"))), std::string("an object"));
  EXPECT_EQ(json_raw_kind(std::get<JsonRaw>(o.at("l"))), std::string("an array"));
  EXPECT_EQ(json_raw_kind(std::get<JsonRaw>(o.at("f"))),
            std::string("a number that is not a 64-bit integer"));

  // Deterministic: fields in name order, each raw value as it came.
  const std::string encoded = encode_json_object(o);
  EXPECT_EQ(encoded,
            R"({"a":{"b":[1, 2.5,null]},"big":18446744073709551616,"dup":{"x":1,"x":2},"e":{},)"
            R"("f":1.5e3,"g":-0.0,"id":"k1","l":[],"s":["\u00e9\"x\\/"]})");
  Result<JsonObject> back = decode_json_object(encoded);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), o);
  EXPECT_EQ(encode_json_object(back.value()), encoded);
}

TEST(DomainJson, IntegersInRangeStayIntegersOthersAreRaw) {
  Result<JsonObject> r = decode_json_object(
      R"({"min":-9223372036854775808,"max":9223372036854775807,)"
      R"("over":9223372036854775808,"under":-9223372036854775809,"z":-0,"one":1.0})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().at("min"), JsonValue(std::numeric_limits<std::int64_t>::min()));
  EXPECT_EQ(r.value().at("max"), JsonValue(std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(r.value().at("over"), JsonValue(JsonRaw{"9223372036854775808"}));
  EXPECT_EQ(r.value().at("under"), JsonValue(JsonRaw{"-9223372036854775809"}));
  EXPECT_EQ(r.value().at("z"), JsonValue(std::int64_t{0}));
  EXPECT_EQ(r.value().at("one"), JsonValue(JsonRaw{"1.0"}));
}

TEST(DomainJson, RoundTripsRawValuesMadeByMakeJsonRaw) {
  for (const char* text : {R"({"b":[1,2.5,null]})", "[]", R"([[["\ud83d\ude00"]]])", "1.5e3",
                           "-2E-7", "0.5", "123456789012345678901234567890"}) {
    Result<JsonRaw> raw = make_json_raw(text);
    ASSERT_TRUE(raw.ok()) << text << ": " << raw.error().message;
    const JsonObject o{{"v", raw.value()}, {"id", std::string("k1")}};
    Result<JsonObject> back = decode_json_object(encode_json_object(o));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back.value(), o) << text;
  }
  const std::string not_raw =
      "json: a raw value is an object, an array or a non-integer number at byte 0";
  for (const char* text : {"5", "-7", R"("s")", "null", "true", " []", ""}) {
    Result<JsonRaw> raw = make_json_raw(text);
    ASSERT_FALSE(raw.ok()) << text;
    EXPECT_EQ(raw.error().message, not_raw) << text;
  }
  EXPECT_EQ(make_json_raw("[] ").error().message,
            "json: unexpected text after the value at byte 2");
  EXPECT_EQ(make_json_raw("[1,]").error().message,
            "json: expected a value (null, true, false, a number, a string, an object or an "
            "array) at byte 3");
}

TEST(DomainJson, BadNestedInputNamesTheProblemAndItsOffset) {
  EXPECT_EQ(decode_error(R"({"a":{"b" 1}})"), "json: expected ':' after field name at byte 10");
  EXPECT_EQ(decode_error(R"({"a":{1:2}})"), "json: expected '\"' to start a field name at byte 6");
  EXPECT_EQ(decode_error(R"({"a":[1 2]})"),
            "json: expected ',' or ']' after an array element at byte 8");
  EXPECT_EQ(decode_error(R"({"a":{"b":1 "c":2}})"),
            "json: expected ',' or '}' after a field at byte 12");
  EXPECT_EQ(decode_error(R"({"a":[1,]})"),
            "json: expected a value (null, true, false, a number, a string, an object or an "
            "array) at byte 8");
  EXPECT_EQ(decode_error(R"({"a":[01]})"), "json: leading zeros are not allowed at byte 6");
  EXPECT_EQ(decode_error(R"({"a":[1.e5]})"), "json: expected a digit after '.' at byte 8");
  EXPECT_EQ(decode_error(R"({"a":{"b":[nul]}})"),
            "json: expected a value (null, true, false, a number, a string, an object or an "
            "array) at byte 11");
  EXPECT_EQ(decode_error(R"({"a":["\q"]})"), "json: unknown escape sequence at byte 8");
  EXPECT_EQ(decode_error(R"({"a":["\udc00"]})"), "json: lone low surrogate at byte 7");
  EXPECT_EQ(decode_error("{\"a\":[\"x\ty\"]}"),
            "json: raw control character in a string at byte 8");
  EXPECT_EQ(decode_error(R"({"a":[1)"),
            "json: expected ',' or ']' after an array element at byte 7");
  EXPECT_EQ(decode_error(R"({"a":{"b":)"),
            "json: unexpected end of input, expected a value at byte 10");
  EXPECT_EQ(decode_error(R"({"a":[1]} x)"), "json: unexpected text after the object at byte 10");
}

TEST(DomainJson, NestingDeeperThanTheLimitIsRefusedWithoutExhaustingTheStack) {
  // The top-level object is depth 1: 63 arrays inside it reach kJsonDepthMax = 64.
  auto nested = [](std::size_t arrays) {
    return "{\"a\":" + std::string(arrays, '[') + std::string(arrays, ']') + "}";
  };
  Result<JsonObject> deepest = decode_json_object(nested(kJsonDepthMax - 1));
  ASSERT_TRUE(deepest.ok()) << deepest.error().message;
  EXPECT_EQ(encode_json_object(deepest.value()), nested(kJsonDepthMax - 1));
  EXPECT_EQ(decode_error(nested(kJsonDepthMax)),
            "json: nesting deeper than 64 levels at byte " + std::to_string(5 + kJsonDepthMax - 1));
  // A hostile payload: a megabyte of opening brackets, refused at the 65th level.
  const std::string hostile = "{\"a\":" + std::string(kJsonTextBytesMax - 10, '[');
  EXPECT_EQ(decode_error(hostile), "json: nesting deeper than 64 levels at byte 68");
  std::string objects = "{";
  for (int i = 0; i < 100; ++i) objects += "\"a\":{";
  EXPECT_EQ(decode_error(objects),
            "json: nesting deeper than 64 levels at byte " + std::to_string(5 * 64));
}

TEST(DomainJson, RefusesOversizedInput) {
  const std::string huge(kJsonTextBytesMax + 1, ' ');
  EXPECT_EQ(decode_error(huge), "json: input of 1048577 bytes exceeds kJsonTextBytesMax=1048576");
}

}  // namespace
}  // namespace seqby
