// The JSON object codec of event payloads: any RFC 8259 object, read one level deep. Event
// payloads are such objects; a stream entry's `data` field is their JSON text (DESIGN.md section
// 3). A top-level field's value is null, a boolean, a 64-bit integer or a string, which the engine
// can read (the partition key is one of these, ADR decision 2); anything else (an object, an array,
// a non-integer number such as 1.5e3, or an integer outside the 64-bit range) is a JsonRaw: its
// exact JSON text, validated and carried verbatim, never interpreted. Encoding is deterministic
// (fields in byte order of their names, no whitespace between them, a JsonRaw's text as it is), and
// decode(encode(x)) == x for every object whose JsonRaw values hold canonical text (what decoding
// produces, or make_json_raw accepts), whatever bytes its strings hold. Malformed input is an error
// reported with its byte offset. Top-level strings are bytes (UTF-8 is not checked); strings inside
// a JsonRaw are checked as top-level ones are (escapes, control characters, surrogate pairs) but
// kept exactly as written, escapes and all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "seqby/core/result.h"

namespace seqby {

// The exact JSON text of a value the engine does not interpret: an object, an array, or a number
// that is not an integer in the 64-bit range. No surrounding whitespace.
struct JsonRaw {
  std::string text;
  bool operator==(const JsonRaw&) const = default;
};

// Alternatives in this order: null, boolean, integer, string, raw JSON text.
using JsonValue = std::variant<std::nullptr_t, bool, std::int64_t, std::string, JsonRaw>;
using JsonObject = std::map<std::string, JsonValue, std::less<>>;

// Input longer than this is refused by decode_json_object.
inline constexpr std::size_t kJsonTextBytesMax = 1u << 20;
// Nesting deeper than this is refused (the top-level object is depth 1), so that a hostile
// payload cannot exhaust the stack: {"a":{"b":[1]}} has depth 3.
inline constexpr std::size_t kJsonDepthMax = 64;

// The object's JSON text, e.g. {"client_id":"client-1","n":3,"ok":true,"x":null,"y":[1,2.5]}.
std::string encode_json_object(const JsonObject& object);

// Appends `value` as a JSON value. A string is "\"" ... "\"" with '"', '\\' and every byte < 0x20
// or 0x7f escaped (\b \f \n \r \t, else \u00XX); bytes >= 0x80 are copied as they are. A JsonRaw
// is its text. REQUIRES: a JsonRaw's text is not empty.
void append_json_value(std::string& out, const JsonValue& value);
void append_json_string(std::string& out, std::string_view value);

// Parses one object (surrounding whitespace allowed). Errc::invalid with a message such as
//   json: expected ':' after field name at byte 12
// on malformed input, a duplicate top-level field, nesting deeper than kJsonDepthMax, a raw
// control character or a lone surrogate in a string. Top-level \uXXXX escapes (and surrogate
// pairs) decode to UTF-8. A top-level value that is an object, an array or a number that is not a
// 64-bit integer becomes a JsonRaw of its exact text (inner whitespace and duplicate names
// included: it is carried, not interpreted).
Result<JsonObject> decode_json_object(std::string_view text);

// A JsonRaw of `text` when it is one JSON value that decoding would keep as raw: an object, an
// array or a non-integer (or out-of-range) number, without surrounding whitespace. Errc::invalid
// with the byte offset otherwise, e.g. "json: a raw value is an object, an array or a non-integer
// number at byte 0" for "5" or "\"s\"".
Result<JsonRaw> make_json_raw(std::string_view text);

// What a raw value is, for messages: "an object", "an array" or "a number that is not a 64-bit
// integer".
const char* json_raw_kind(const JsonRaw& raw);

}  // namespace seqby
