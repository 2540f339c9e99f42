// The domain registry: message types and handlers, and the partitioning they imply. It
// guarantees that every registration breaking a rule of ADR decisions 2 and 8 fails loud with
// Errc::invalid and a message naming the handler, type, field and category, and leaves the
// registry unchanged; once registered, each category is partitioned by exactly one payload field
// or not at all (partition_field()). It does not extract or validate key values (outbox.h) and
// does not run handlers.
//
// Rules, checked in this order by register_handler():
//  1. the handler name is a valid group name, new, and handles at least one registered type of
//     its kind (commands for a command handler, events otherwise);
//  2. sequential_by is a field on an event/command handler and `true` on a process manager;
//  3. the broker advertises STREAM_PARTITIONING, or is the inline broker (accepted as a no-op:
//     the partition field is still recorded, so the category rules hold under inline tests too);
//  4. every handled type carries the field (a PM: its correlate spec names a field for every
//     handled type, that type carries it, and one category's types agree on the field);
//  5. every other registered type of a category being partitioned carries the field too (the
//     publisher routes an event by its own payload, whoever consumes it);
//  6. a category already partitioned (by a handler or a PM's correlation) is partitioned by the
//     same field. Registration order does not matter: either order of two conflicting handlers
//     fails, on the second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/capabilities.h"
#include "seqby/core/metadata.h"
#include "seqby/core/result.h"

namespace seqby {

enum class MessageKind : std::uint8_t { event, command };

// A registered event or command type.
struct RegisteredType {
  MessageKind kind = MessageKind::event;
  std::string name;
  std::string category;
  std::vector<std::string> fields;

  bool has_field(std::string_view field) const;
};

// How a category is partitioned, and who asked for it first.
struct CategoryPartition {
  std::string field;
  std::string handler;  // the first handler that declared it
  HandlerKind handler_kind = HandlerKind::event_handler;
};

// Types plus handlers plus registered categories together stay under this count.
inline constexpr std::size_t kRegistryEntriesMax = 1u << 16;

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registers a type. Fails when the name is empty or taken, the category invalid, a field
  // empty or repeated, or the category is already partitioned by a field the type lacks.
  Status register_type(const EventType& type);
  Status register_type(const CommandType& type);

  // Registers `handler` to run on `broker`, checking the rules of the header comment.
  Status register_handler(const HandlerMeta& handler, const BrokerInfo& broker);

  // The payload field that partitions `category`, or nullopt when it is not partitioned.
  std::optional<std::string> partition_field(std::string_view category) const;
  const CategoryPartition* find_partition(std::string_view category) const;

  // nullptr when not registered.
  const RegisteredType* find_type(std::string_view name) const;
  const HandlerMeta* find_handler(std::string_view name) const;

  // Handlers in registration order.
  const std::vector<HandlerMeta>& handlers() const { return handlers_; }
  // Partitioned categories, sorted.
  std::vector<std::string> partitioned_categories() const;
  // The categories of the types `handler` handles, sorted, without repeats; empty when it is not
  // registered. For a sequential process manager this is its engine's
  // EngineOptions::pm_categories (each partitioned by the PM's correlation field).
  std::vector<std::string> categories_of(std::string_view handler) const;

 private:
  Status add_type(RegisteredType type);

  std::map<std::string, RegisteredType, std::less<>> types_;
  std::vector<HandlerMeta> handlers_;
  std::map<std::string, CategoryPartition, std::less<>> partitions_;
};

}  // namespace seqby
