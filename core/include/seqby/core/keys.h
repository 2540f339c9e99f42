// Validation of partition keys and of the other names that end up inside Redis key names
// (categories, consumer groups, owner ids). It guarantees that a key accepted here composes into
// stream names that never collide with a lane, a DLQ or an internal `__name__` key (ADR decisions
// 3 and 4). It does not extract keys from payloads (see outbox.h) and knows nothing of Redis.
//
// Decisions worth knowing:
// - The sentinel form is `__*__` with `*` possibly empty: a name of at least 4 bytes that starts
//   and ends with "__". So "____" is rejected, while "__" and "___" are ordinary keys: they
//   cannot equal an internal name, every one of which has the `__name__` shape.
// - Control characters are bytes below 0x20 and 0x7f. Bytes >= 0x80 (UTF-8) are allowed.
// - The length limit counts bytes, not characters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seqby/core/result.h"

namespace seqby {

inline constexpr std::string_view kDefaultBackfillSuffix = "backfill";
inline constexpr std::string_view kDlqToken = "dlq";
inline constexpr std::size_t kDefaultKeyLengthMaxBytes = 256;

// The configuration the key rules depend on.
struct KeyRules {
  std::string backfill_suffix = std::string(kDefaultBackfillSuffix);
  std::size_t key_length_max_bytes = kDefaultKeyLengthMaxBytes;
};

// Ok when `rules` is usable: the backfill suffix is non-empty, has no colon and no control
// characters, is not "dlq" and not of the sentinel form; the length limit is at least 1.
Status validate_key_rules(const KeyRules& rules);

// The rules a partition key can break, in the order they are checked.
enum class KeyRule : std::uint8_t {
  not_null,          // the key field is absent or null
  not_empty,         // the key is ""
  max_length,        // longer than key_length_max_bytes
  no_control_chars,  // a byte < 0x20 or 0x7f
  no_colon,          // contains ':'
  not_reserved,      // equals "dlq" or the configured backfill suffix
  not_sentinel,      // of the `__name__` form
};

// "not_null", "not_empty", ... as used in error messages.
const char* key_rule_name(KeyRule rule);

// The first rule `value` breaks, or nullopt when it is a valid partition key. nullopt `value`
// means the key field was absent or null.
std::optional<KeyRule> violated_key_rule(std::optional<std::string_view> value,
                                         const KeyRules& rules);

// Ok when `value` is a valid partition key; otherwise Errc::invalid with a message of the form
//   invalid partition key "a:b": rule no_colon: contains ':' at byte 1
// (the value printable-escaped, see printable()).
Status validate_partition_key(std::optional<std::string_view> value, const KeyRules& rules = {});

// True when `name` has the reserved `__*__` sentinel form (see the header comment).
bool is_sentinel_name(std::string_view name);

// A category: non-empty, no control characters, not "__pm__" nor under "__pm__:" (the process
// managers' lease namespace, naming.h). It may contain colons.
Status validate_category_name(std::string_view category);

// A consumer group (handler) name: non-empty, no control characters, no colon (so that the
// group-cache key `{stream}:{group}` splits unambiguously at its last colon; see naming.h).
Status validate_group_name(std::string_view group);

// An engine owner id: non-empty, no control characters, no colon (a lease value is `O:N`).
Status validate_owner_id(std::string_view owner_id);

// `value` quoted and escaped for an error message: newline, tab and carriage return as \n \t \r,
// other control bytes and 0x7f as \xNN, '"' and '\' backslash-escaped; a value longer than
// 64 bytes is cut there and suffixed with `...(N bytes)`.
std::string printable(std::string_view value);

}  // namespace seqby
