#include "seqby/core/naming.h"

#include <limits>

namespace seqby {
namespace {

// Every key rule but the length limit: parsing must not depend on a configured limit.
bool has_key_shape(std::string_view segment, std::string_view backfill_suffix) {
  KeyRules rules;
  rules.backfill_suffix = std::string(backfill_suffix);
  rules.key_length_max_bytes = std::numeric_limits<std::size_t>::max();
  return !violated_key_rule(segment, rules).has_value();
}

ParsedName make(NameKind kind, std::string_view category, std::string_view key = {}) {
  return ParsedName{kind, std::string(category), std::string(key)};
}

}  // namespace

const char* name_kind_name(NameKind kind) {
  switch (kind) {
    case NameKind::partition:
      return "partition";
    case NameKind::backfill_lane:
      return "backfill_lane";
    case NameKind::dlq:
      return "dlq";
    case NameKind::index:
      return "index";
    case NameKind::lease:
      return "lease";
    case NameKind::fence:
      return "fence";
    case NameKind::category_stream:
      return "category_stream";
    case NameKind::category_lane:
      return "category_lane";
    case NameKind::category_dlq:
      return "category_dlq";
    case NameKind::unknown:
      return "unknown";
  }
  return "unknown";
}

ParsedName parse_stream_name_in(std::string_view name, std::string_view category,
                                std::string_view backfill_suffix) {
  SEQBY_CHECK(!backfill_suffix.empty());
  SEQBY_CHECK(backfill_suffix.find(':') == std::string_view::npos);
  SEQBY_CHECK(backfill_suffix != kDlqToken);
  if (category.empty()) return {};
  if (name == category) return make(NameKind::category_stream, category);
  if (!name.starts_with(category) || name.size() <= category.size() ||
      name[category.size()] != ':') {
    return {};
  }
  const std::string_view rest = name.substr(category.size() + 1);
  const std::size_t colon = rest.find(':');
  if (colon == std::string_view::npos) {
    // One segment after the category: an internal name, a category lane, or a key.
    if (rest == kPartitionIndexToken) return make(NameKind::index, category);
    if (rest == kDlqToken) return make(NameKind::category_dlq, category);
    if (rest == backfill_suffix) return make(NameKind::category_lane, category);
    if (has_key_shape(rest, backfill_suffix)) return make(NameKind::partition, category, rest);
    return {};
  }
  // Two segments: a key (which never holds a colon) and a reserved tail.
  const std::string_view key = rest.substr(0, colon);
  const std::string_view tail = rest.substr(colon + 1);
  if (!has_key_shape(key, backfill_suffix)) return {};
  if (tail == kDlqToken) return make(NameKind::dlq, category, key);
  if (tail == backfill_suffix) return make(NameKind::backfill_lane, category, key);
  if (tail == kLeaseToken) return make(NameKind::lease, category, key);
  if (tail == kFenceToken) return make(NameKind::fence, category, key);
  return {};
}

ParsedName parse_stream_name(std::string_view name, std::string_view backfill_suffix) {
  const std::size_t colon = name.find(':');
  // The category before the first colon obeys the category rules, with or without a rest: a
  // control byte or the reserved __pm__ namespace is no category's (found by fuzz/naming.cpp).
  const std::string_view category = name.substr(0, colon);
  if (!validate_category_name(category).ok()) return {};
  if (colon == std::string_view::npos) return make(NameKind::category_stream, name);
  return parse_stream_name_in(name, category, backfill_suffix);
}

std::string group_cache_key(std::string_view stream, std::string_view group) {
  SEQBY_CHECK(!stream.empty());
  SEQBY_CHECK(validate_group_name(group).ok());
  std::string out(stream);
  out += ':';
  out += group;
  return out;
}

std::optional<GroupCacheKey> parse_group_cache_key(std::string_view cache_key) {
  const std::size_t colon = cache_key.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view stream = cache_key.substr(0, colon);
  const std::string_view group = cache_key.substr(colon + 1);
  if (stream.empty() || group.empty()) return std::nullopt;
  return GroupCacheKey{std::string(stream), std::string(group)};
}

}  // namespace seqby
