// The reverse parse of the Redis key names of DESIGN.md section 3 (ADR decisions 1, 4, 5, 7),
// and the broker's group-cache key. The names themselves are built in keyspace.h (included here,
// so every caller of naming.h keeps them). Parsing never mistakes a partition's lane, DLQ, lease
// or fence name for a partition, because keys never contain a colon nor equal a reserved token
// (keys.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seqby/core/keys.h"
#include "seqby/core/keyspace.h"

namespace seqby {

enum class NameKind : std::uint8_t {
  partition,        // C:K
  backfill_lane,    // C:K:S
  dlq,              // C:K:dlq
  index,            // C:__partitions__
  lease,            // C:K:__lease__
  fence,            // C:K:__fence__
  category_stream,  // C (a non-partitioned category's stream)
  category_lane,    // C:S (the category's own backfill lane)
  category_dlq,     // C:dlq (the category's own DLQ)
  unknown,          // none of the above
};

const char* name_kind_name(NameKind kind);

struct ParsedName {
  NameKind kind = NameKind::unknown;
  std::string category;  // empty when unknown
  std::string key;       // set for partition, backfill_lane, dlq, lease, fence; else empty

  friend bool operator==(const ParsedName&, const ParsedName&) = default;
};

// Parses `name` for a category that is known to the caller. `name` must start with
// `category` followed by ':' (or equal it); the rest has a fixed segment count because keys
// never contain a colon, so the category itself may contain colons. Key segments must satisfy
// every key rule but the length limit; anything else is `unknown`.
ParsedName parse_stream_name_in(std::string_view name, std::string_view category,
                                std::string_view backfill_suffix = kDefaultBackfillSuffix);

// Parses `name` without knowing its category, ASSUMING the category contains no colon: the
// category is everything before the first colon, and a name whose category breaks
// validate_category_name (a control byte, the reserved __pm__) is `unknown`. A name whose category
// has a colon must be parsed with parse_stream_name_in(), since `a:b:dlq` is then ambiguous
// (category `a` key `b`'s DLQ, or category `a:b`'s own DLQ) and no rule can tell them apart.
ParsedName parse_stream_name(std::string_view name,
                             std::string_view backfill_suffix = kDefaultBackfillSuffix);

// The broker's consumer-group cache key (ADR Context fact 4). The encoding is
// `{stream}:{group}`, and the reverse parse splits at the LAST colon: group names are validated
// colon-free (validate_group_name), so the last colon is always the separator, whereas a stream
// name may carry any number of colons (`order:client-1`, `a:b:client-1:backfill`). A first-colon
// split, the bug Context fact 4 describes, would read `order` as the stream.
struct GroupCacheKey {
  std::string stream;
  std::string group;

  friend bool operator==(const GroupCacheKey&, const GroupCacheKey&) = default;
};

// REQUIRES: validate_group_name(group).ok(), !stream.empty().
std::string group_cache_key(std::string_view stream, std::string_view group);

// nullopt when `cache_key` has no colon, or an empty stream or group part.
std::optional<GroupCacheKey> parse_group_cache_key(std::string_view cache_key);

}  // namespace seqby
