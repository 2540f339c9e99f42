// SHA-1 (FIPS 180-4), for the script cache: EVAL, SCRIPT LOAD and redis.sha1hex name a script by
// the lowercase hex SHA-1 of its body, as Redis does. Not for any security purpose.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seqby::sim {

// The 40-character lowercase hex SHA-1 digest of `data`.
std::string sha1_hex(std::string_view data);

// sha1_hex(data), remembered process-wide for up to kSha1MemoSizeMax distinct texts: every
// simulated server (each world, each restart) loads the same embedded scripts again, and their
// digests were a twentieth of a default seed's CPU. A pure cache, safe across campaign threads.
inline constexpr std::size_t kSha1MemoSizeMax = 512;
std::string sha1_hex_memo(std::string_view data);

}  // namespace seqby::sim
