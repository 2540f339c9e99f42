// What every fuzz target shares: the libFuzzer entry point's declaration, the input split into
// fields, and FUZZ_CHECK, an assertion that names the target's property when it fails. A target
// asserts properties of what it parsed (round trips, rules the result satisfies), not only that
// nothing crashed; a failed check aborts, which libFuzzer and the replay driver report as a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

#define FUZZ_CHECK(cond, what)                                                                 \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "fuzz: property failed: %s (%s) at %s:%d\n", what, #cond, __FILE__, \
                   __LINE__);                                                                  \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)

namespace seqby::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The first `count` lines of `text` (split at '\n', the last one holding the rest, newlines
// included); missing lines are empty. Seeds stay readable: one field per line.
inline std::vector<std::string_view> lines(std::string_view text, std::size_t count) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i + 1 < count; ++i) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      out.push_back(text);
      text = {};
      continue;
    }
    out.push_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  out.push_back(text);
  return out;
}

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
inline bool is_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t more = 0;
    std::uint32_t point = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      more = 1;
      point = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      more = 2;
      point = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      more = 3;
      point = c & 0x07;
    } else {
      return false;
    }
    if (text.size() - i <= more) return false;
    for (std::size_t k = 1; k <= more; ++k) {
      const auto d = static_cast<unsigned char>(text[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      point = (point << 6) | (d & 0x3F);
    }
    if ((more == 2 && (point < 0x800 || (point >= 0xD800 && point <= 0xDFFF))) ||
        (more == 3 && (point < 0x10000 || point > 0x10FFFF))) {
      return false;
    }
    i += more + 1;
  }
  return true;
}

}  // namespace seqby::fuzz
