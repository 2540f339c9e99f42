// fnv1a64: a fixed 64-bit FNV-1a hash, the same in every run, build and platform. The engine ranks
// partitions with it (each instance its own deterministic acquire order) and the simulator keys
// its named random sub-streams with it; neither may depend on std::hash.
#pragma once

#include <cstdint>
#include <string_view>

namespace seqby {

constexpr std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace seqby
