#include "seqby/core/registry.h"

#include <algorithm>

#include "seqby/core/keys.h"

namespace seqby {
namespace {

Error invalid(std::string message) { return make_error(Errc::invalid, std::move(message)); }

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

const char* type_kind_name(MessageKind kind) {
  return kind == MessageKind::event ? "event type" : "command type";
}

// "handler 'notify'" or "process manager 'fulfilment'".
std::string who(HandlerKind kind, std::string_view name) {
  return std::string(kind == HandlerKind::process_manager ? "process manager " : "handler ") +
         quoted(name);
}

// How the owner of a partition binding partitions its category, for conflict messages.
std::string partitions_by(HandlerKind kind, std::string_view name, std::string_view field) {
  if (kind == HandlerKind::process_manager) {
    return who(kind, name) + " (sequential_by=true) partitions it by its correlation field " +
           quoted(field);
  }
  return who(kind, name) + " partitions it by " + quoted(field);
}

// One category the handler being registered would partition, and by which field.
struct Binding {
  std::string field;
  std::string via_type;  // the handled type that brought the category in
};

}  // namespace

bool RegisteredType::has_field(std::string_view field) const {
  return std::find(fields.begin(), fields.end(), field) != fields.end();
}

Status Registry::register_type(const EventType& type) {
  return add_type(RegisteredType{MessageKind::event, type.name, type.category, type.fields});
}

Status Registry::register_type(const CommandType& type) {
  return add_type(RegisteredType{MessageKind::command, type.name, type.category, type.fields});
}

Status Registry::add_type(RegisteredType type) {
  const std::string what = std::string(type_kind_name(type.kind)) + " " + quoted(type.name);
  if (type.name.empty()) return invalid("a type name is empty");
  if (types_.size() + handlers_.size() + partitions_.size() >= kRegistryEntriesMax) {
    return make_error(Errc::refused,
                      "registry full: kRegistryEntriesMax=" + std::to_string(kRegistryEntriesMax));
  }
  if (types_.contains(type.name)) return invalid(what + " is already registered");
  if (Status s = validate_category_name(type.category); !s.ok()) {
    return invalid(what + ": " + s.error().message);
  }
  for (std::size_t i = 0; i < type.fields.size(); ++i) {
    if (type.fields[i].empty()) return invalid(what + " has an empty field name");
    for (std::size_t j = 0; j < i; ++j) {
      if (type.fields[j] == type.fields[i]) {
        return invalid(what + " declares field " + quoted(type.fields[i]) + " twice");
      }
    }
  }
  if (const CategoryPartition* p = find_partition(type.category); p && !type.has_field(p->field)) {
    const std::string owner = p->handler_kind == HandlerKind::process_manager
                                  ? who(p->handler_kind, p->handler) + " (sequential_by=true)"
                                  : who(p->handler_kind, p->handler);
    return invalid(what + " (category " + quoted(type.category) + ") has no field " +
                   quoted(p->field) + ", by which " + owner + " partitions category " +
                   quoted(type.category));
  }
  types_.emplace(type.name, std::move(type));
  return Status::Ok();
}

Status Registry::register_handler(const HandlerMeta& handler, const BrokerInfo& broker) {
  const std::string me = who(handler.kind, handler.name);

  // Rule 1: the name and the handled types.
  if (Status s = validate_group_name(handler.name); !s.ok()) {
    return invalid("handler registration: " + s.error().message);
  }
  if (types_.size() + handlers_.size() + partitions_.size() >= kRegistryEntriesMax) {
    return make_error(Errc::refused,
                      "registry full: kRegistryEntriesMax=" + std::to_string(kRegistryEntriesMax));
  }
  if (find_handler(handler.name)) return invalid(me + " is already registered");
  if (handler.handled_types.empty()) return invalid(me + " handles no types");
  const MessageKind expected_kind =
      handler.kind == HandlerKind::command_handler ? MessageKind::command : MessageKind::event;
  std::vector<const RegisteredType*> handled;
  for (const std::string& name : handler.handled_types) {
    const RegisteredType* type = find_type(name);
    if (!type)
      return invalid(me + " handles unknown type " + quoted(name) + " (register it first)");
    if (type->kind != expected_kind) {
      return invalid(
          me + " is a " + handler_kind_name(handler.kind) + ", but " + quoted(name) +
          (type->kind == MessageKind::event ? " is an event type" : " is a command type"));
    }
    handled.push_back(type);
  }

  // Rule 2: the shape of sequential_by.
  const std::string declared = describe_sequential_by(handler.sequential_by);
  const std::string* field = std::get_if<std::string>(&handler.sequential_by);
  if (handler.kind == HandlerKind::process_manager && field) {
    return invalid(me + " declares " + declared +
                   ": a process manager declares sequential_by=true and is partitioned by the "
                   "fields of its correlate spec");
  }
  if (handler.kind != HandlerKind::process_manager &&
      std::holds_alternative<bool>(handler.sequential_by) &&
      std::get<bool>(handler.sequential_by)) {
    return invalid(me +
                   " declares sequential_by=true, which only a process manager may; an "
                   "event or command handler names a payload field");
  }
  if (field && field->empty()) return invalid(me + " declares sequential_by with an empty field");
  if (!handler.is_sequential()) {
    handlers_.push_back(handler);
    return Status::Ok();
  }

  // Rule 3: capability gating.
  if (!broker.is_inline && !broker.capabilities.has(Capability::stream_partitioning)) {
    return invalid(me + " declares " + declared + " but broker " + quoted(broker.name) +
                   " does not advertise " + capability_name(Capability::stream_partitioning) +
                   " (it advertises " + broker.capabilities.to_string() + ")");
  }

  // Rule 4: every handled type carries the key field; one field per category.
  std::map<std::string, Binding, std::less<>> bindings;
  for (const RegisteredType* type : handled) {
    std::string key_field;
    if (field) {
      key_field = *field;
      if (!type->has_field(key_field)) {
        return invalid(me + " declares " + declared + " but " + type_kind_name(type->kind) + " " +
                       quoted(type->name) + " (category " + quoted(type->category) +
                       ") has no field " + quoted(key_field));
      }
    } else {
      auto spec = handler.correlate.find(type->name);
      if (spec == handler.correlate.end()) {
        return invalid(me +
                       " declares sequential_by=true but its correlate spec has no entry "
                       "for handled type " +
                       quoted(type->name) + " (category " + quoted(type->category) + ")");
      }
      key_field = spec->second;
      if (!type->has_field(key_field)) {
        return invalid(me + " correlates " + type_kind_name(type->kind) + " " + quoted(type->name) +
                       " (category " + quoted(type->category) + ") by field " + quoted(key_field) +
                       ", which the type does not have");
      }
    }
    auto [it, inserted] = bindings.emplace(type->category, Binding{key_field, type->name});
    if (!inserted && it->second.field != key_field) {
      return invalid(me + " would partition category " + quoted(type->category) +
                     " by two fields: " + quoted(it->second.field) + " (for " +
                     quoted(it->second.via_type) + ") and " + quoted(key_field) + " (for " +
                     quoted(type->name) + "); a category is partitioned by exactly one key");
    }
  }

  // Rule 5: the other types of each category carry the field too.
  for (const auto& [category, binding] : bindings) {
    for (const auto& [name, type] : types_) {
      if (type.category == category && !type.has_field(binding.field)) {
        return invalid(me + " would partition category " + quoted(category) + " by " +
                       quoted(binding.field) + ", but " + type_kind_name(type.kind) + " " +
                       quoted(name) + " of that category has no field " + quoted(binding.field));
      }
    }
  }

  // Rule 6: one key per category, against earlier registrations.
  for (const auto& [category, binding] : bindings) {
    const CategoryPartition* existing = find_partition(category);
    if (existing && existing->field != binding.field) {
      const std::string mine =
          handler.kind == HandlerKind::process_manager
              ? me + " (sequential_by=true) partitions category " + quoted(category) +
                    " by its correlation field " + quoted(binding.field)
              : me + " declares " + declared + " on category " + quoted(category);
      return invalid(mine + ", but " +
                     partitions_by(existing->handler_kind, existing->handler, existing->field) +
                     ": a category is partitioned by exactly one key or not at all");
    }
  }

  for (const auto& [category, binding] : bindings) {
    partitions_.try_emplace(category, CategoryPartition{binding.field, handler.name, handler.kind});
  }
  handlers_.push_back(handler);
  return Status::Ok();
}

std::optional<std::string> Registry::partition_field(std::string_view category) const {
  if (const CategoryPartition* p = find_partition(category)) return p->field;
  return std::nullopt;
}

const CategoryPartition* Registry::find_partition(std::string_view category) const {
  auto it = partitions_.find(category);
  return it == partitions_.end() ? nullptr : &it->second;
}

const RegisteredType* Registry::find_type(std::string_view name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

const HandlerMeta* Registry::find_handler(std::string_view name) const {
  for (const HandlerMeta& h : handlers_) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

std::vector<std::string> Registry::categories_of(std::string_view handler) const {
  std::vector<std::string> out;
  const HandlerMeta* meta = find_handler(handler);
  if (meta == nullptr) return out;
  for (const std::string& name : meta->handled_types) {
    if (const RegisteredType* type = find_type(name)) out.push_back(type->category);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> Registry::partitioned_categories() const {
  std::vector<std::string> out;
  for (const auto& [category, partition] : partitions_) out.push_back(category);
  return out;
}

}  // namespace seqby
