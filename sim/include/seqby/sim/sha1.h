// SHA-1 (FIPS 180-4), for the script cache: EVAL, SCRIPT LOAD and redis.sha1hex name a script by
// the lowercase hex SHA-1 of its body, as Redis does. Not for any security purpose.
#pragma once

#include <string>
#include <string_view>

namespace seqby::sim {

// The 40-character lowercase hex SHA-1 digest of `data`.
std::string sha1_hex(std::string_view data);

}  // namespace seqby::sim
