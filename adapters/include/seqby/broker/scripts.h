// The Lua scripts RedisBroker runs, embedded at build time from adapters/lua/*.lua. Real Redis
// and the simulated Redis execute this very text. Scripts receive every key through KEYS and
// every value through ARGV; nothing is ever spliced into script text.
#pragma once

#include <span>
#include <string_view>

namespace seqby::redis {

struct EmbeddedScript {
  const char* name;    // file name without .lua, e.g. "fenced_read"
  const char* source;  // the script text
};

// Every embedded script, sorted by name.
std::span<const EmbeddedScript> embedded_scripts();

// The source of the script called `name`, or nullptr when there is none.
inline const char* script_source(std::string_view name) {
  for (const auto& s : embedded_scripts()) {
    if (name == s.name) return s.source;
  }
  return nullptr;
}

}  // namespace seqby::redis
