// The declarations an application registers: message types (events and commands, each living
// in one stream category) and handlers with their `sequential_by` option (ADR decision 2).
// These are plain values; the rules that relate them (a handled type must carry the key field,
// one key per category, capability gating) live in the Registry (registry.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace seqby {

// An event type: its name, the stream category it is published to, and its direct payload
// fields (nested paths are out of scope).
struct EventType {
  std::string name;
  std::string category;
  std::vector<std::string> fields;
};

// A command type, shaped like an event type.
struct CommandType {
  std::string name;
  std::string category;
  std::vector<std::string> fields;
};

enum class HandlerKind : std::uint8_t { event_handler, command_handler, process_manager };

const char* handler_kind_name(HandlerKind kind);

// The `sequential_by` option: none (std::monostate), a payload field name (event and command
// handlers), or `true` (process managers, partitioned by their correlation field per category).
// `false` means none.
using SequentialBy = std::variant<std::monostate, std::string, bool>;

inline SequentialBy sequential_by_field(std::string field) {
  return SequentialBy(std::move(field));
}
inline SequentialBy sequential_by_correlation() { return SequentialBy(true); }

struct HandlerMeta {
  std::string name;  // also the consumer group name: no colon
  HandlerKind kind = HandlerKind::event_handler;
  std::vector<std::string> handled_types;  // type names, registered before the handler
  SequentialBy sequential_by;
  // Process managers: handled event type name -> the payload field that carries the
  // correlation value on that type.
  std::map<std::string, std::string, std::less<>> correlate;

  // True when sequential_by is a field or `true`.
  bool is_sequential() const;
};

// "none", "client_id" quoted as sequential_by="client_id", or "true", for messages.
std::string describe_sequential_by(const SequentialBy& sequential_by);

}  // namespace seqby
