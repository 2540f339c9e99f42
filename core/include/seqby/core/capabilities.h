// Broker capabilities (ADR decision 8) and the broker facts the Registry needs at handler
// registration. A broker advertises a CapabilitySet; a sequential_by handler needs
// STREAM_PARTITIONING unless the broker is the single-threaded inline broker, where ordering
// is already given by submission order. This header describes brokers; it does not talk to one.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace seqby {

enum class Capability : std::uint8_t {
  stream_partitioning,  // partition-per-key streams with fenced ownership (this project)
  consumer_groups,      // competing consumers over one group
  reclaim_pending,      // taking over another consumer's pending entries (XAUTOCLAIM)
  dead_letter_queue,    // moving entries to a DLQ stream
  count_,               // not a capability: the number of them
};

// "STREAM_PARTITIONING", "CONSUMER_GROUPS", ... (the ADR's spelling).
const char* capability_name(Capability capability);

// A small set of capabilities (a bit set).
class CapabilitySet {
 public:
  CapabilitySet() = default;
  CapabilitySet(std::initializer_list<Capability> capabilities) {
    for (Capability c : capabilities) insert(c);
  }
  void insert(Capability c) { bits_ |= bit(c); }
  void erase(Capability c) { bits_ &= ~bit(c); }
  bool has(Capability c) const { return (bits_ & bit(c)) != 0; }
  bool empty() const { return bits_ == 0; }
  // "{CONSUMER_GROUPS, RECLAIM_PENDING}" in enum order; "{}" when empty.
  std::string to_string() const;

  friend bool operator==(CapabilitySet, CapabilitySet) = default;

 private:
  static std::uint32_t bit(Capability c) { return std::uint32_t{1} << static_cast<unsigned>(c); }
  std::uint32_t bits_ = 0;
};

// What a handler registration needs to know about the broker it will run on.
struct BrokerInfo {
  std::string name;  // for messages, e.g. "redis" or "inline"
  CapabilitySet capabilities;
  bool is_inline = false;  // the single-threaded inline broker (sequential_by: no-op)
};

}  // namespace seqby
