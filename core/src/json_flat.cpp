#include "seqby/core/json_flat.h"

#include <charconv>
#include <cstdio>
#include <optional>
#include <system_error>

namespace seqby {
namespace {

// A cursor over the input; every method advances at most to the end.
class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<JsonObject> parse_object() {
    skip_space();
    if (!eat('{')) return fail("expected '{' at the start of an object");
    JsonObject object;
    skip_space();
    if (eat('}')) return finish(std::move(object));
    for (;;) {  // bounded: each turn consumes at least one field's bytes
      skip_space();
      if (peek() != '"') return fail("expected '\"' to start a field name");
      const std::size_t name_at = at_;
      Result<std::string> name = parse_string();
      if (!name.ok()) return name.error();
      skip_space();
      if (!eat(':')) return fail("expected ':' after field name");
      skip_space();
      Result<JsonValue> value = parse_value();
      if (!value.ok()) return value.error();
      if (!object.emplace(std::move(name).value(), std::move(value).value()).second) {
        return make_error(Errc::invalid,
                          "json: duplicate field at byte " + std::to_string(name_at));
      }
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) return finish(std::move(object));
      return fail("expected ',' or '}' after a field");
    }
  }

  // One value that decoding keeps raw, and nothing around it (make_json_raw).
  Result<JsonRaw> parse_raw() {
    const std::size_t start = at_;
    const char c = peek();
    if (c == '{' || c == '[') {
      Status s = skip_composite(2);  // as deep as a field value of the top-level object
      if (!s.ok()) return s.error();
    } else if (c == '-' || is_digit(c)) {
      Result<JsonValue> number = parse_number();
      if (!number.ok()) return number.error();
      if (!std::holds_alternative<JsonRaw>(number.value())) {
        at_ = start;
        return fail(kNotRaw);
      }
    } else {
      return fail(kNotRaw);
    }
    if (at_ != text_.size()) return fail("unexpected text after the value");
    return JsonRaw{std::string(text_.substr(start))};
  }

 private:
  static constexpr std::string_view kNotRaw =
      "a raw value is an object, an array or a non-integer number";
  static constexpr std::string_view kExpectedValue =
      "expected a value (null, true, false, a number, a string, an object or an array)";

  Result<JsonObject> finish(JsonObject object) {
    skip_space();
    if (at_ != text_.size()) return fail("unexpected text after the object");
    return object;
  }

  // A field value of the top-level object (depth 1).
  Result<JsonValue> parse_value() {
    const char c = peek();
    if (c == '"') {
      Result<std::string> s = parse_string();
      if (!s.ok()) return s.error();
      return JsonValue(std::move(s).value());
    }
    if (c == '-' || is_digit(c)) return parse_number();
    if (eat_word("null")) return JsonValue(nullptr);
    if (eat_word("true")) return JsonValue(true);
    if (eat_word("false")) return JsonValue(false);
    if (c == '{' || c == '[') {
      const std::size_t start = at_;
      Status s = skip_composite(2);
      if (!s.ok()) return s.error();
      return JsonValue(JsonRaw{std::string(text_.substr(start, at_ - start))});
    }
    if (at_ == text_.size()) return fail("unexpected end of input, expected a value");
    return fail(kExpectedValue);
  }

  // Validates the object or array at the cursor, at nesting depth `depth`, and steps past it.
  // Recursion is bounded by kJsonDepthMax.
  Status skip_composite(std::size_t depth) {
    SEQBY_CHECK(peek() == '{' || peek() == '[');
    if (depth > kJsonDepthMax) {
      return fail("nesting deeper than " + std::to_string(kJsonDepthMax) + " levels");
    }
    const bool is_object = text_[at_] == '{';
    const char close = is_object ? '}' : ']';
    ++at_;
    skip_space();
    if (eat(close)) return Status::Ok();
    for (;;) {  // bounded: each turn consumes at least one member's bytes
      skip_space();
      if (is_object) {
        if (peek() != '"') return fail("expected '\"' to start a field name");
        Result<std::string> name = parse_string();
        if (!name.ok()) return name.error();
        skip_space();
        if (!eat(':')) return fail("expected ':' after field name");
        skip_space();
      }
      Status member = skip_value(depth);
      if (!member.ok()) return member;
      skip_space();
      if (eat(',')) continue;
      if (eat(close)) return Status::Ok();
      return fail(is_object ? "expected ',' or '}' after a field"
                            : "expected ',' or ']' after an array element");
    }
  }

  // Validates any value inside a composite at depth `depth` and steps past it.
  Status skip_value(std::size_t depth) {
    const char c = peek();
    if (c == '"') {
      Result<std::string> s = parse_string();
      return s.ok() ? Status::Ok() : Status(s.error());
    }
    if (c == '-' || is_digit(c)) {
      Result<JsonValue> n = parse_number();
      return n.ok() ? Status::Ok() : Status(n.error());
    }
    if (eat_word("null") || eat_word("true") || eat_word("false")) return Status::Ok();
    if (c == '{' || c == '[') return skip_composite(depth + 1);
    if (at_ == text_.size()) return fail("unexpected end of input, expected a value");
    return fail(kExpectedValue);
  }

  // An RFC 8259 number: an integer in the 64-bit range as such, any other number as its text.
  Result<JsonValue> parse_number() {
    const std::size_t start = at_;
    eat('-');
    if (!is_digit(peek())) return fail("expected a digit");
    if (peek() == '0' && at_ + 1 < text_.size() && is_digit(text_[at_ + 1])) {
      return fail("leading zeros are not allowed");
    }
    skip_digits();
    bool integer = true;
    if (eat('.')) {
      integer = false;
      if (!is_digit(peek())) return fail("expected a digit after '.'");
      skip_digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      ++at_;
      if (!eat('+')) eat('-');
      if (!is_digit(peek())) return fail("expected a digit in the exponent");
      skip_digits();
    }
    const std::string_view number = text_.substr(start, at_ - start);
    if (integer) {
      std::int64_t value = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
      if (ec == std::errc{} && end == number.data() + number.size()) return JsonValue(value);
      SEQBY_CHECK(ec == std::errc::result_out_of_range);
    }
    return JsonValue(JsonRaw{std::string(number)});
  }

  void skip_digits() {
    while (is_digit(peek())) ++at_;
  }

  Result<std::string> parse_string() {
    SEQBY_CHECK(peek() == '"');
    ++at_;
    std::string out;
    while (at_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[at_]);
      if (c == '"') {
        ++at_;
        return out;
      }
      if (c < 0x20) return fail("raw control character in a string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++at_;
        continue;
      }
      ++at_;
      if (at_ == text_.size()) break;
      const char e = text_[at_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          Status s = parse_unicode_escape(out);
          if (!s.ok()) return s.error();
          break;
        }
        default:
          --at_;
          return fail("unknown escape sequence");
      }
    }
    return fail("unterminated string");
  }

  // After "\u": four hex digits, and for a high surrogate a following "\uDC00".."\uDFFF".
  Status parse_unicode_escape(std::string& out) {
    const std::size_t escape_at = at_ - 2;
    std::optional<std::uint32_t> code = hex4();
    if (!code) return fail("expected four hex digits after \\u");
    std::uint32_t point = *code;
    if (point >= 0xDC00 && point <= 0xDFFF) {
      at_ = escape_at;
      return fail("lone low surrogate");
    }
    if (point >= 0xD800 && point <= 0xDBFF) {
      if (!(eat('\\') && eat('u'))) {
        at_ = escape_at;
        return fail("high surrogate without a low surrogate");
      }
      std::optional<std::uint32_t> low = hex4();
      if (!low || *low < 0xDC00 || *low > 0xDFFF) {
        at_ = escape_at;
        return fail("high surrogate without a low surrogate");
      }
      point = 0x10000 + ((point - 0xD800) << 10) + (*low - 0xDC00);
    }
    append_utf8(out, point);
    return Status::Ok();
  }

  std::optional<std::uint32_t> hex4() {
    if (text_.size() - at_ < 4) return std::nullopt;
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[at_ + i];
      std::uint32_t digit;
      if (h >= '0' && h <= '9') {
        digit = h - '0';
      } else if (h >= 'a' && h <= 'f') {
        digit = h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        digit = h - 'A' + 10;
      } else {
        return std::nullopt;
      }
      value = value * 16 + digit;
    }
    at_ += 4;
    return value;
  }

  static void append_utf8(std::string& out, std::uint32_t point) {
    if (point < 0x80) {
      out += static_cast<char>(point);
    } else if (point < 0x800) {
      out += static_cast<char>(0xC0 | (point >> 6));
      out += static_cast<char>(0x80 | (point & 0x3F));
    } else if (point < 0x10000) {
      out += static_cast<char>(0xE0 | (point >> 12));
      out += static_cast<char>(0x80 | ((point >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (point & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (point >> 18));
      out += static_cast<char>(0x80 | ((point >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((point >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (point & 0x3F));
    }
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  bool eat(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view word) {
    if (text_.substr(at_).starts_with(word)) {
      at_ += word.size();
      return true;
    }
    return false;
  }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r')) {
      ++at_;
    }
  }
  Error fail(std::string_view what) const {
    return make_error(Errc::invalid,
                      "json: " + std::string(what) + " at byte " + std::to_string(at_));
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

void append_json_string(std::string& out, std::string_view value) {
  out += '"';
  for (const char ch : value) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void append_json_value(std::string& out, const JsonValue& value) {
  switch (value.index()) {
    case 0:
      out += "null";
      break;
    case 1:
      out += std::get<bool>(value) ? "true" : "false";
      break;
    case 2:
      out += std::to_string(std::get<std::int64_t>(value));
      break;
    case 3:
      append_json_string(out, std::get<std::string>(value));
      break;
    case 4: {
      const std::string& text = std::get<JsonRaw>(value).text;
      SEQBY_CHECK(!text.empty());
      out += text;
      break;
    }
    default:
      SEQBY_CHECK(false);
  }
}

std::string encode_json_object(const JsonObject& object) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : object) {
    if (!first) out += ',';
    first = false;
    append_json_string(out, name);
    out += ':';
    append_json_value(out, value);
  }
  out += '}';
  return out;
}

Result<JsonObject> decode_json_object(std::string_view text) {
  if (text.size() > kJsonTextBytesMax) {
    return make_error(Errc::invalid,
                      "json: input of " + std::to_string(text.size()) +
                          " bytes exceeds kJsonTextBytesMax=" + std::to_string(kJsonTextBytesMax));
  }
  return Parser(text).parse_object();
}

Result<JsonRaw> make_json_raw(std::string_view text) {
  if (text.size() > kJsonTextBytesMax) {
    return make_error(Errc::invalid,
                      "json: input of " + std::to_string(text.size()) +
                          " bytes exceeds kJsonTextBytesMax=" + std::to_string(kJsonTextBytesMax));
  }
  return Parser(text).parse_raw();
}

const char* json_raw_kind(const JsonRaw& raw) {
  SEQBY_CHECK(!raw.text.empty());
  if (raw.text[0] == '{') return "an object";
  if (raw.text[0] == '[') return "an array";
  return "a number that is not a 64-bit integer";
}

}  // namespace seqby
