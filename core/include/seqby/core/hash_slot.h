// Redis Cluster's key hash, once for the whole project: the cluster key layout (keyspace.h
// key_hash_slot), the simulator's cluster mode and the adapters' ClusterLink all hash through it.
#pragma once

#include <cstdint>
#include <string_view>

namespace seqby {

// CRC16-CCITT XMODEM (polynomial 0x1021, initial value 0, no reflection), Redis Cluster's key
// hash: crc16_xmodem("123456789") == 0x31C3.
std::uint16_t crc16_xmodem(std::string_view data);

// The part of `key` that is hashed: between the first '{' and the first '}' after it when that
// is not empty, else the whole key ("{user1000}.following" -> "user1000", "foo{}{bar}" -> all).
std::string_view hash_tag(std::string_view key);

}  // namespace seqby
