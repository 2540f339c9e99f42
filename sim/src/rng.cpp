#include "seqby/sim/rng.h"

namespace seqby::sim {

namespace {
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t splitmix64(std::uint64_t* state) {
  std::uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) : key_(seed) {
  std::uint64_t state = seed;
  for (auto& word : s_) word = splitmix64(&state);
  // xoshiro must not start from all zeros; splitmix64 cannot produce four zeros, but be sure.
  SEQBY_CHECK((s_[0] | s_[1] | s_[2] | s_[3]) != 0);
}

Rng Rng::derive(std::string_view name) const {
  std::uint64_t state = key_ ^ rotl(fnv1a64(name), 17);
  std::uint64_t child = splitmix64(&state);
  child ^= splitmix64(&state) >> 1;
  return Rng(child);
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::below(std::uint64_t bound) {
  SEQBY_CHECK(bound > 0);
  // Lemire: the high word of x * bound is uniform once the biased low region is rejected.
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
  auto low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    for (int attempt = 0; low < threshold; attempt++) {
      // Each attempt is rejected with probability < bound / 2^64; 64 in a row is impossible
      // short of a broken generator.
      SEQBY_CHECK(attempt < 64);
      m = static_cast<unsigned __int128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::uint64_t Rng::uniform(std::uint64_t lo, std::uint64_t hi) {
  SEQBY_CHECK(lo <= hi);
  const std::uint64_t span = hi - lo;
  if (span == UINT64_MAX) return next_u64();
  return lo + below(span + 1);
}

std::int64_t Rng::uniform_signed(std::int64_t lo, std::int64_t hi) {
  SEQBY_CHECK(lo <= hi);
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const std::uint64_t offset = span == UINT64_MAX ? next_u64() : below(span + 1);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + offset);
}

bool Rng::chance_ppm(std::uint32_t ppm) {
  SEQBY_CHECK(ppm <= 1'000'000);
  if (ppm == 0) return false;
  if (ppm == 1'000'000) return true;
  return below(1'000'000) < ppm;
}

bool Rng::chance(double p) {
  SEQBY_CHECK(p >= 0.0 && p <= 1.0);
  constexpr double kScale = 9007199254740992.0;  // 2^53
  const auto threshold = static_cast<std::uint64_t>(p * kScale);
  return (next_u64() >> 11) < threshold;
}

}  // namespace seqby::sim
