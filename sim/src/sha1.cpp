// SHA-1 over a byte string, one 64-byte block at a time (FIPS 180-4, section 6.1).
#include "seqby/sim/sha1.h"

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>

namespace seqby::sim {

namespace {

std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void process_block(std::array<std::uint32_t, 5>& h, const unsigned char* block) {
  std::uint32_t w[80];
  for (int i = 0; i < 16; i++) {
    w[i] = (std::uint32_t{block[i * 4]} << 24) | (std::uint32_t{block[i * 4 + 1]} << 16) |
           (std::uint32_t{block[i * 4 + 2]} << 8) | std::uint32_t{block[i * 4 + 3]};
  }
  for (int i = 16; i < 80; i++) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; i++) {
    std::uint32_t f = 0;
    std::uint32_t k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<std::uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t full = data.size() / 64;
  for (std::size_t i = 0; i < full; i++) process_block(h, bytes + i * 64);
  unsigned char tail[128] = {};
  const std::size_t rest = data.size() % 64;
  for (std::size_t i = 0; i < rest; i++) tail[i] = bytes[full * 64 + i];
  tail[rest] = 0x80;
  const std::size_t tail_len = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; i++) {
    tail[tail_len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  }
  process_block(h, tail);
  if (tail_len == 128) process_block(h, tail + 64);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (std::uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out.push_back(kHex[(word >> shift) & 0xF]);
  }
  return out;
}

std::string sha1_hex_memo(std::string_view data) {
  // Looked up by the view itself (no copy of the text).
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string, Hash, std::equal_to<>> memo;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto known = memo.find(data); known != memo.end()) return known->second;
  }
  std::string digest = sha1_hex(data);
  const std::lock_guard<std::mutex> lock(mutex);
  if (memo.size() < kSha1MemoSizeMax) memo.emplace(std::string(data), digest);
  return digest;
}

}  // namespace seqby::sim
