// Rng: the simulator's only source of randomness. splitmix64 seeding, xoshiro256** output, and
// our own range reduction (Lemire's multiply-shift with rejection), so a seed gives the same
// numbers with every standard library. `derive(name)` gives an independent sub-stream keyed by
// the parent's key and the name, never by how much the parent has drawn: adding a component or
// drawing in another order does not reshuffle the others. Not for cryptography.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "seqby/core/check.h"
#include "seqby/core/fnv1a.h"

namespace seqby::sim {

// One splitmix64 step: the mixer used for seeding and keying.
std::uint64_t splitmix64(std::uint64_t* state);
// A fixed 64-bit FNV-1a hash of `text` (stable across builds and platforms): core's.
using seqby::fnv1a64;

class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  // The key this stream was made from (the seed, or the derived key of a sub-stream).
  std::uint64_t key() const { return key_; }

  // A sub-stream keyed by this stream's key and `name`; independent of draws made so far.
  Rng derive(std::string_view name) const;

  std::uint64_t next_u64();
  // Uniform in [0, bound). REQUIRES: bound > 0.
  std::uint64_t below(std::uint64_t bound);
  // Uniform in [lo, hi], both inclusive. REQUIRES: lo <= hi.
  std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi);
  std::int64_t uniform_signed(std::int64_t lo, std::int64_t hi);
  // True with probability ppm / 1'000'000. REQUIRES: ppm <= 1'000'000.
  bool chance_ppm(std::uint32_t ppm);
  // True with probability p, p in [0, 1], compared at 53-bit resolution (exact IEEE arithmetic,
  // so deterministic across machines).
  bool chance(double p);

  // An element of `items` chosen uniformly. REQUIRES: !items.empty().
  template <typename T>
  const T& pick(std::span<const T> items) {
    SEQBY_CHECK(!items.empty());
    return items[below(items.size())];
  }
  template <typename T>
  std::size_t pick_index(const T& container) {
    SEQBY_CHECK(!container.empty());
    return static_cast<std::size_t>(below(container.size()));
  }

 private:
  std::uint64_t key_;
  std::array<std::uint64_t, 4> s_;
};

}  // namespace seqby::sim
