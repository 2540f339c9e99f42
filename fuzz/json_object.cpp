// Fuzz target: the JSON object reader of event data (seqby/core/json_flat.h). Input: any bytes,
// read as an event's `data`. Properties: a refusal is an Errc::invalid "json: ... at byte N" with
// N within the input; an accepted object re-encodes to text that decodes to the same object
// (and encodes to the same text again); each raw value is one make_json_raw accepts, kept under
// a field of its own; strings carry any bytes through the encoder; and nlohmann's parser agrees:
// what seqby accepts (when it is UTF-8) nlohmann accepts, and an object nlohmann accepts seqby
// accepts unless it repeats a top-level name or nests deeper than kJsonDepthMax.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "fuzz_support.h"
#include "seqby/core/json_flat.h"

namespace {

// The deepest nesting of valid JSON text (the top-level object is 1), without recursion.
std::size_t nesting_depth(std::string_view text) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

void check_accepted(const seqby::JsonObject& object) {
  const std::string text = seqby::encode_json_object(object);
  const seqby::Result<seqby::JsonObject> again = seqby::decode_json_object(text);
  FUZZ_CHECK(again.ok(), "an encoded object decodes");
  FUZZ_CHECK(again.value() == object, "decode(encode(x)) == x");
  FUZZ_CHECK(seqby::encode_json_object(again.value()) == text, "encoding is deterministic");
  FUZZ_CHECK(text.front() == '{' && text.back() == '}', "the encoding is one object");
  for (const auto& [name, value] : object) {
    if (!std::holds_alternative<seqby::JsonRaw>(value)) continue;
    const seqby::JsonRaw& raw = std::get<seqby::JsonRaw>(value);
    const seqby::Result<seqby::JsonRaw> made = seqby::make_json_raw(raw.text);
    FUZZ_CHECK(made.ok() && made.value() == raw, "a decoded raw value is one make_json_raw keeps");
    FUZZ_CHECK(seqby::json_raw_kind(raw) != nullptr, "a raw value has a kind");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = seqby::fuzz::as_text(data, size);
  const seqby::Result<seqby::JsonObject> decoded = seqby::decode_json_object(text);
  if (decoded.ok()) {
    check_accepted(decoded.value());
  } else {
    const seqby::Error& error = decoded.error();
    FUZZ_CHECK(error.code == seqby::Errc::invalid, "a refusal is Errc::invalid");
    FUZZ_CHECK(error.message.starts_with("json: "), "a refusal says it is about JSON");
    const std::size_t at = error.message.rfind(" at byte ");
    FUZZ_CHECK(at != std::string::npos || text.size() > seqby::kJsonTextBytesMax,
               "a refusal names its byte offset");
    if (at != std::string::npos) {
      const std::uint64_t offset = std::stoull(error.message.substr(at + 9));
      FUZZ_CHECK(offset <= text.size(), "the offset is within the input");
    }
  }

  // nlohmann as the oracle (it checks UTF-8, which seqby leaves to the publisher).
  // nlohmann's lexer takes a NUL byte for the end of input (so it accepts `{}\0junk`), which
  // never holds valid JSON: the oracle judges only text without one.
  const bool utf8 = seqby::fuzz::is_utf8(text) && text.find('\0') == std::string_view::npos;
  if (utf8) {
    const bool nlohmann_accepts = nlohmann::json::accept(text);
    if (decoded.ok() && !nlohmann_accepts) {
      // RFC 8259 leaves the range of numbers open; nlohmann refuses one beyond a double's range
      // (out_of_range 406, "number overflow"), which seqby carries as raw text.
      int error_id = 0;
      try {
        const nlohmann::json parsed = nlohmann::json::parse(text);
        error_id = parsed.is_discarded() ? -1 : 0;
      } catch (const nlohmann::json::exception& e) {
        error_id = e.id;
      }
      FUZZ_CHECK(error_id == 406, "what seqby accepts is JSON");
    }
    if (nlohmann_accepts && !decoded.ok()) {
      const nlohmann::json j = nlohmann::json::parse(text);
      if (j.is_object() && nesting_depth(text) <= seqby::kJsonDepthMax &&
          text.size() <= seqby::kJsonTextBytesMax) {
        FUZZ_CHECK(decoded.error().message.find("duplicate field") != std::string::npos,
                   "an object refused by seqby repeats a top-level name");
      }
    }
  }

  // The same bytes as a raw value: kept under a field exactly as they are.
  const seqby::Result<seqby::JsonRaw> raw = seqby::make_json_raw(text);
  if (raw.ok()) {
    FUZZ_CHECK(raw.value().text == text, "make_json_raw keeps the text");
    const std::string wrapped = "{\"v\":" + std::string(text) + "}";
    const seqby::Result<seqby::JsonObject> holder = seqby::decode_json_object(wrapped);
    FUZZ_CHECK(holder.ok(), "a raw value is a valid field value");
    const auto value = holder.value().find("v");
    FUZZ_CHECK(value != holder.value().end() &&
                   std::holds_alternative<seqby::JsonRaw>(value->second) &&
                   std::get<seqby::JsonRaw>(value->second) == raw.value(),
               "a raw field value decodes to the same raw value");
  }

  // Any bytes as a string field: carried through the encoder exactly.
  seqby::JsonObject strings{{std::string(text.substr(0, 32)), std::string(text)}};
  const seqby::Result<seqby::JsonObject> back =
      seqby::decode_json_object(seqby::encode_json_object(strings));
  FUZZ_CHECK(back.ok() && back.value() == strings, "a string of any bytes round-trips");
  return 0;
}
