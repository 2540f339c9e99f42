// Random command sequences for the differential test of the simulated Redis against a real
// redis-server 7.0: strings, sets, hashes, streams with consumer groups, and EVAL/EVALSHA of the
// engine's scripts and of small conversion scripts, over a small key space so that collisions,
// WRONGTYPE, NOGROUP and NOSCRIPT happen. A seed always gives the same sequence. Each step names
// the normalisation its reply needs (the documented, time- or order-dependent parts only); the
// generator never uses `*` ids except in the publish script, whose id is compared by shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqby/broker/reply.h"

namespace seqby::testing {

// How a reply is made comparable before the two sides are compared.
enum class Normalise : std::uint8_t {
  none,
  sorted,          // SMEMBERS, KEYS: hash-table order in real Redis; compare as sorted arrays
  ttl_sign,        // PTTL, TTL: a positive value becomes 1 (wall time passes on the real side)
  pending_idle,    // XPENDING extended: each entry's idle time becomes 0
  consumers_idle,  // XINFO CONSUMERS: each consumer's idle value becomes 0
  stream_info,     // XINFO STREAM: radix-tree-nodes becomes 0 (a documented estimate)
  id_shape,        // publish (XADD *): a bulk "<ms>-<seq>" becomes "ID"
};

struct DifferentialStep {
  redis::Command command;
  Normalise normalise = Normalise::none;
};

// A script the generator runs: its name (engine script name or "custom_*"), source and SHA-1.
struct DifferentialScript {
  std::string name;
  std::string source;
  std::string sha;
};

// The engine's scripts (every embedded script) plus the custom conversion scripts; `sha` empty.
std::vector<DifferentialScript> differential_scripts();

// The sequence for `seed`: 20 to 60 steps. `scripts` as from differential_scripts() with `sha`
// filled in (EVALSHA uses it).
std::vector<DifferentialStep> generate_sequence(std::uint64_t seed,
                                                const std::vector<DifferentialScript>& scripts);

// `reply` with the normalisation applied.
redis::Reply normalise_reply(const redis::Reply& reply, Normalise normalise);

// A readable rendering of a command: arguments quoted, separated by spaces.
std::string command_text(const redis::Command& command);

}  // namespace seqby::testing
