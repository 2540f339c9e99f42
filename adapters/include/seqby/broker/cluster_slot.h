// Redis Cluster's hash slots, as pure functions: the slot of a key (CRC16 XMODEM of its hash tag,
// modulo 16384, as the cluster specification defines it) and where a command goes (the slot of
// its keys, any master, every master, or refused here). ClusterLink routes by them; the
// simulator can model a cluster with the same functions. They know the commands seqby sends
// (the broker, the worker, admin, the journal readers) and refuse any other rather than guess.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/hash_slot.h"
#include "seqby/core/keyspace.h"

namespace seqby::redis {

inline constexpr std::uint16_t kClusterSlotCount = kHashSlotCount;

// The hash slot of `key`, what CLUSTER KEYSLOT answers: key_hash_slot (seqby/core/keyspace.h),
// CRC16 XMODEM of its hash tag (seqby/core/hash_slot.h) modulo 16384.
std::uint16_t key_slot(std::string_view key);

// Where a command goes on a cluster.
struct CommandRoute {
  enum class Kind : std::uint8_t {
    slot,         // its keys all hash to `slot`: the master serving it
    any_master,   // it names no key (PING, TIME, INFO, an EVALSHA with no keys)
    all_masters,  // every master must run it (SCRIPT LOAD, SCRIPT FLUSH, FLUSHALL, KEYS)
    refused,      // not sent: `refusal` is the error reply the caller gets
  };
  Kind kind = Kind::any_master;
  std::uint16_t slot = 0;         // Kind::slot
  std::vector<std::string> keys;  // the keys found (every kind but any_master)
  std::string refusal;            // Kind::refused: "CROSSSLOT ..." or "ERR ..."
};

// The route of `command`: its keys read from the command's key positions (a table per command:
// EVAL/EVALSHA after numkeys, XREAD/XREADGROUP after STREAMS, XINFO/XGROUP after the
// subcommand, ...). Keys of more than one slot are refused with a "CROSSSLOT" error that names
// each key and its slot; a command not in the table, or one that holds state across commands
// (MULTI, WATCH, SELECT, WAIT, SCAN, SUBSCRIBE), is refused with an "ERR" that says why.
CommandRoute route_command(const Command& command);

}  // namespace seqby::redis
