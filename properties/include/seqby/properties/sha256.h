// SHA-256 (FIPS 180-4), written here so that history hashes need no crypto library. It is used to
// compare runs (same seed + same build => same hash), never for security. Input is bytes; the
// digest is printed as 64 lowercase hex digits.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace seqby::properties {

class Sha256 {
 public:
  Sha256();
  // Appends `bytes` to the message. REQUIRES: finish() has not been called.
  void update(std::string_view bytes);
  // Pads the message and returns its digest. REQUIRES: called once; update() not called after.
  std::array<std::uint8_t, 32> finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> block_{};
  std::size_t block_used_ = 0;
  std::uint64_t message_bytes_ = 0;
  bool finished_ = false;
};

std::string digest_hex(const std::array<std::uint8_t, 32>& digest);
// The SHA-256 digest of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace seqby::properties
