// A flat JSON object codec: an object of string fields whose values are null, a boolean, a
// 64-bit integer or a string. Event payloads are such objects; a stream entry's `data` field is
// their JSON text (DESIGN.md section 3). Encoding is deterministic (fields in byte order of their
// names, no whitespace), and decode(encode(x)) == x for every object, whatever bytes its strings
// hold. It does not support nesting, arrays or non-integer numbers: decoding them is an error, as
// is any malformed input, reported with its byte offset. Strings are bytes: UTF-8 is not checked.
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

// Alternatives in this order: null, boolean, integer, string.
using JsonValue = std::variant<std::nullptr_t, bool, std::int64_t, std::string>;
using JsonObject = std::map<std::string, JsonValue, std::less<>>;

// Input longer than this is refused by decode_json_object.
inline constexpr std::size_t kJsonTextBytesMax = 1u << 20;

// The object's JSON text, e.g. {"client_id":"client-1","n":3,"ok":true,"x":null}.
std::string encode_json_object(const JsonObject& object);

// Appends `value` as a JSON value: "\"" ... "\"" with '"', '\\' and every byte < 0x20 or 0x7f
// escaped (\b \f \n \r \t, else \u00XX); bytes >= 0x80 are copied as they are.
void append_json_value(std::string& out, const JsonValue& value);
void append_json_string(std::string& out, std::string_view value);

// Parses one flat object (surrounding whitespace allowed). Errc::invalid with a message such as
//   json: expected ':' after field name at byte 12
// on malformed input, a nested value, a non-integer or out-of-range number, a duplicate field,
// a raw control character or a lone surrogate in a string. \uXXXX escapes (and surrogate pairs)
// decode to UTF-8.
Result<JsonObject> decode_json_object(std::string_view text);

}  // namespace seqby
