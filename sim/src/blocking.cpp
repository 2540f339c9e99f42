#include "seqby/sim/blocking.h"

#include <string_view>

namespace seqby::sim {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != b[i]) return false;
  }
  return true;
}

// A non-negative decimal as Redis's string2ll reads one (no sign, no leading zero, no spaces).
std::optional<std::uint64_t> non_negative(std::string_view s) {
  if (s.empty() || s.size() > 18 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

}  // namespace

std::optional<std::uint64_t> block_ms_of_read(const redis::Command& command) {
  if (command.empty()) return std::nullopt;
  if (!iequals(command[0], "xread") && !iequals(command[0], "xreadgroup")) return std::nullopt;
  // The options before STREAMS, as xreadCommand walks them.
  for (std::size_t i = 1; i + 1 < command.size(); ++i) {
    const std::string& o = command[i];
    if (iequals(o, "streams")) return std::nullopt;
    if (iequals(o, "block")) return non_negative(command[i + 1]);
    if (iequals(o, "count")) {
      ++i;
    } else if (iequals(o, "group")) {
      i += 2;
    }
  }
  return std::nullopt;
}

std::uint64_t reply_wait_ms(const redis::Command& command, std::uint64_t timeout_ms) {
  const std::optional<std::uint64_t> block_ms = block_ms_of(command);
  if (!block_ms) return timeout_ms;
  if (*block_ms == 0 || *block_ms >= kWaitForeverMs) return kWaitForeverMs;
  return timeout_ms + *block_ms;
}

}  // namespace seqby::sim
