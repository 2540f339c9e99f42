// Redis key names of DESIGN.md section 3 (ADR decisions 1, 4, 5, 7) and their reverse parse.
// Composition is total for valid parts; parsing never mistakes a partition's lane, DLQ, lease or
// fence name for a partition, because keys never contain a colon nor equal a reserved token
// (keys.h). Nothing here validates its inputs when composing: callers compose from validated
// categories and keys.
//
// For category C, key K, backfill suffix S:
//   C:K             partition stream          C:K:S            the partition's backfill lane
//   C:K:dlq         the partition's DLQ       C:__partitions__ the category's partition index
//   C:K:__lease__   the partition's lease     C:K:__fence__    the partition's generation counter
//   C               the category stream       C:S, C:dlq       the category's own lane and DLQ
//   C:__subscribers__  the consumer groups that consume category C (the reaper waits for each)
// and for process manager P, correlation value X (ADR decision 2):
//   __pm__:P:X:__lease__  the lease of X      __pm__:P:X:__fence__  X's generation counter
// (the lease namespace __pm__:P is a reserved category: validate_category_name refuses it).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seqby/core/keys.h"

namespace seqby {

inline constexpr std::string_view kLeaseToken = "__lease__";
inline constexpr std::string_view kFenceToken = "__fence__";
inline constexpr std::string_view kPartitionIndexToken = "__partitions__";
inline constexpr std::string_view kSubscribersToken = "__subscribers__";
inline constexpr std::string_view kProcessManagerToken = "__pm__";

std::string partition_stream_name(std::string_view category, std::string_view key);
std::string backfill_lane_name(std::string_view category, std::string_view key,
                               std::string_view backfill_suffix = kDefaultBackfillSuffix);
std::string dlq_stream_name(std::string_view category, std::string_view key);
std::string lease_key_name(std::string_view category, std::string_view key);
std::string fence_key_name(std::string_view category, std::string_view key);
std::string partition_index_name(std::string_view category);
// "C:__subscribers__": the set of consumer groups subscribed to category C (Broker::subscribe).
std::string subscribers_set_name(std::string_view category);
// "__pm__:P": the namespace of process manager P's leases and membership; its leases are
// lease_key_name(pm_lease_category(P), X) and fence_key_name(pm_lease_category(P), X).
std::string pm_lease_category(std::string_view process_manager);

// One partition: a category and a (valid) key.
struct PartitionRef {
  std::string category;
  std::string key;

  std::string stream() const { return partition_stream_name(category, key); }
  std::string backfill_lane(std::string_view backfill_suffix = kDefaultBackfillSuffix) const {
    return backfill_lane_name(category, key, backfill_suffix);
  }
  std::string dlq() const { return dlq_stream_name(category, key); }
  std::string lease() const { return lease_key_name(category, key); }
  std::string fence() const { return fence_key_name(category, key); }
  std::string index() const { return partition_index_name(category); }
  std::string subscribers() const { return subscribers_set_name(category); }

  friend bool operator==(const PartitionRef&, const PartitionRef&) = default;
  friend auto operator<=>(const PartitionRef&, const PartitionRef&) = default;
};

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
// category is everything before the first colon. A name whose category has a colon must be
// parsed with parse_stream_name_in(), since `a:b:dlq` is then ambiguous (category `a` key `b`'s
// DLQ, or category `a:b`'s own DLQ) and no rule can tell them apart.
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
