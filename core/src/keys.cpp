#include "seqby/core/keys.h"

#include <cstdio>

namespace seqby {
namespace {

constexpr std::size_t kPrintableBytesMax = 64;

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The offset of the first control byte, or npos.
std::size_t find_control(std::string_view value) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (is_control(static_cast<unsigned char>(value[i]))) return i;
  }
  return std::string_view::npos;
}

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", c);
  return buf;
}

Error name_error(std::string_view what, std::string_view value, std::string_view rule,
                 std::string_view explanation) {
  std::string message = "invalid ";
  message += what;
  message += ' ';
  message += printable(value);
  message += ": rule ";
  message += rule;
  message += ": ";
  message += explanation;
  return make_error(Errc::invalid, std::move(message));
}

// Common shape of category, group and owner names.
Status validate_name(std::string_view what, std::string_view value, bool colon_allowed) {
  if (value.empty()) return name_error(what, value, "not_empty", "the name is empty");
  if (std::size_t at = find_control(value); at != std::string_view::npos) {
    return name_error(what, value, "no_control_chars",
                      "control byte " + hex_byte(static_cast<unsigned char>(value[at])) +
                          " at byte " + std::to_string(at));
  }
  if (!colon_allowed) {
    if (std::size_t at = value.find(':'); at != std::string_view::npos) {
      return name_error(what, value, "no_colon", "contains ':' at byte " + std::to_string(at));
    }
  }
  return Status::Ok();
}

}  // namespace

const char* key_rule_name(KeyRule rule) {
  switch (rule) {
    case KeyRule::not_null:
      return "not_null";
    case KeyRule::not_empty:
      return "not_empty";
    case KeyRule::max_length:
      return "max_length";
    case KeyRule::no_control_chars:
      return "no_control_chars";
    case KeyRule::no_colon:
      return "no_colon";
    case KeyRule::not_reserved:
      return "not_reserved";
    case KeyRule::not_sentinel:
      return "not_sentinel";
  }
  return "unknown";
}

bool is_sentinel_name(std::string_view name) {
  return name.size() >= 4 && name.starts_with("__") && name.ends_with("__");
}

Status validate_key_rules(const KeyRules& rules) {
  const std::string_view suffix = rules.backfill_suffix;
  if (Status s = validate_name("backfill suffix", suffix, /*colon_allowed=*/false); !s.ok()) {
    return s;
  }
  if (suffix == kDlqToken) {
    return name_error("backfill suffix", suffix, "not_reserved", "\"dlq\" is the DLQ token");
  }
  if (is_sentinel_name(suffix)) {
    return name_error("backfill suffix", suffix, "not_sentinel",
                      "the __name__ form is reserved for internal keys");
  }
  if (rules.key_length_max_bytes == 0) {
    return make_error(Errc::invalid, "invalid key_length_max_bytes 0: must be at least 1");
  }
  return Status::Ok();
}

std::optional<KeyRule> violated_key_rule(std::optional<std::string_view> value,
                                         const KeyRules& rules) {
  if (!value.has_value()) return KeyRule::not_null;
  const std::string_view key = *value;
  if (key.empty()) return KeyRule::not_empty;
  if (key.size() > rules.key_length_max_bytes) return KeyRule::max_length;
  if (find_control(key) != std::string_view::npos) return KeyRule::no_control_chars;
  if (key.find(':') != std::string_view::npos) return KeyRule::no_colon;
  if (key == kDlqToken || key == rules.backfill_suffix) return KeyRule::not_reserved;
  if (is_sentinel_name(key)) return KeyRule::not_sentinel;
  return std::nullopt;
}

Status validate_partition_key(std::optional<std::string_view> value, const KeyRules& rules) {
  const std::optional<KeyRule> rule = violated_key_rule(value, rules);
  if (!rule.has_value()) return Status::Ok();
  if (*rule == KeyRule::not_null) {
    return make_error(Errc::invalid,
                      "invalid partition key (null): rule not_null: the key field is absent or "
                      "null");
  }
  const std::string_view key = *value;
  std::string explanation;
  switch (*rule) {
    case KeyRule::not_null:
      break;  // handled above
    case KeyRule::not_empty:
      explanation = "the key is empty";
      break;
    case KeyRule::max_length:
      explanation = std::to_string(key.size()) + " bytes, more than key_length_max_bytes=" +
                    std::to_string(rules.key_length_max_bytes);
      break;
    case KeyRule::no_control_chars: {
      const std::size_t at = find_control(key);
      explanation = "control byte " + hex_byte(static_cast<unsigned char>(key[at])) + " at byte " +
                    std::to_string(at);
      break;
    }
    case KeyRule::no_colon:
      explanation = "contains ':' at byte " + std::to_string(key.find(':')) +
                    " (a partition stream is category:key)";
      break;
    case KeyRule::not_reserved:
      explanation = key == kDlqToken
                        ? std::string("equals the reserved DLQ token \"dlq\"")
                        : "equals the configured backfill suffix \"" + rules.backfill_suffix + "\"";
      break;
    case KeyRule::not_sentinel:
      explanation = "the __name__ form is reserved for internal keys such as __partitions__";
      break;
  }
  return name_error("partition key", key, key_rule_name(*rule), explanation);
}

Status validate_category_name(std::string_view category) {
  if (Status s = validate_name("category", category, /*colon_allowed=*/true); !s.ok()) return s;
  // __pm__:P is where process manager P keeps its leases (naming.h).
  const std::string_view first = category.substr(0, category.find(':'));
  if (first == "__pm__") {
    return name_error("category", category, "not_reserved",
                      "the __pm__ namespace holds process managers' leases");
  }
  return Status::Ok();
}

Status validate_group_name(std::string_view group) {
  return validate_name("group name", group, /*colon_allowed=*/false);
}

Status validate_owner_id(std::string_view owner_id) {
  return validate_name("owner id", owner_id, /*colon_allowed=*/false);
}

std::string printable(std::string_view value) {
  const std::size_t shown = value.size() > kPrintableBytesMax ? kPrintableBytesMax : value.size();
  std::string out = "\"";
  for (std::size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (is_control(c)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (shown < value.size()) out += "...(" + std::to_string(value.size()) + " bytes)";
  return out;
}

}  // namespace seqby
