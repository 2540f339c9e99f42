// Fuzz target: the partition key and name rules (seqby/core/keys.h) and the parse of Redis key
// names (seqby/core/naming.h). Input: four lines, category, key, backfill suffix, then any name.
// Properties: the key rules and their Status agree; every name built from a valid category and
// key parses back to exactly its parts; any name that parses as something rebuilds to itself,
// with a key that satisfies the key rules; group-cache keys round-trip; printable() output is
// one quoted line without control bytes.
#include "seqby/core/naming.h"

#include <limits>
#include <optional>
#include <string>

#include "fuzz_support.h"
#include "seqby/core/keys.h"

namespace {

using seqby::NameKind;
using seqby::ParsedName;

// The name `parsed` stands for (the inverse of the parse); nullopt for unknown.
std::optional<std::string> rebuild(const ParsedName& parsed, std::string_view suffix) {
  const std::string& c = parsed.category;
  const std::string& k = parsed.key;
  switch (parsed.kind) {
    case NameKind::partition:
      return seqby::partition_stream_name(c, k);
    case NameKind::backfill_lane:
      return seqby::backfill_lane_name(c, k, suffix);
    case NameKind::dlq:
      return seqby::dlq_stream_name(c, k);
    case NameKind::index:
      return seqby::partition_index_name(c);
    case NameKind::lease:
      return seqby::lease_key_name(c, k);
    case NameKind::fence:
      return seqby::fence_key_name(c, k);
    case NameKind::category_stream:
      return c;
    case NameKind::category_lane:
      return c + ":" + std::string(suffix);
    case NameKind::category_dlq:
      return c + ":" + std::string(seqby::kDlqToken);
    case NameKind::unknown:
      return std::nullopt;
  }
  return std::nullopt;
}

bool has_key(NameKind kind) {
  return kind == NameKind::partition || kind == NameKind::backfill_lane || kind == NameKind::dlq ||
         kind == NameKind::lease || kind == NameKind::fence;
}

// A key's shape: every key rule but the length limit (what the parse checks).
bool has_key_shape(std::string_view key, const std::string& suffix) {
  seqby::KeyRules rules;
  rules.backfill_suffix = suffix;
  rules.key_length_max_bytes = std::numeric_limits<std::size_t>::max();
  return !seqby::violated_key_rule(key, rules).has_value();
}

void check_parsed(const ParsedName& parsed, std::string_view name, std::string_view category,
                  const std::string& suffix) {
  if (parsed.kind == NameKind::unknown) {
    FUZZ_CHECK(parsed.category.empty() && parsed.key.empty(), "an unknown name has no parts");
    return;
  }
  if (!category.empty()) FUZZ_CHECK(parsed.category == category, "the parse keeps the category");
  FUZZ_CHECK(!parsed.category.empty(), "a parsed name has a category");
  FUZZ_CHECK(has_key(parsed.kind) != parsed.key.empty(), "a key exactly for keyed kinds");
  if (has_key(parsed.kind)) {
    FUZZ_CHECK(has_key_shape(parsed.key, suffix), "a parsed key satisfies the key rules");
  }
  const std::optional<std::string> again = rebuild(parsed, suffix);
  FUZZ_CHECK(again.has_value() && *again == name, "a parsed name rebuilds to itself");
}

void check_printable(std::string_view value) {
  const std::string shown = seqby::printable(value);
  FUZZ_CHECK(shown.size() >= 2 && shown.front() == '"', "printable() is quoted");
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    FUZZ_CHECK(byte >= 0x20 && byte != 0x7f, "printable() holds no control byte");
  }
  FUZZ_CHECK(shown.size() <= 2 + 64 * 4 + 32, "printable() is bounded");
  if (value.size() <= 64) FUZZ_CHECK(shown.back() == '"', "a short value is shown whole");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string_view> parts =
      seqby::fuzz::lines(seqby::fuzz::as_text(data, size), 4);
  const std::string_view category = parts[0];
  const std::string_view key = parts[1];
  const std::string suffix =
      parts[2].empty() ? std::string(seqby::kDefaultBackfillSuffix) : std::string(parts[2]);
  const std::string_view name = parts[3];

  check_printable(key);
  check_printable(name);
  FUZZ_CHECK(seqby::is_sentinel_name(key) ==
                 (key.size() >= 4 && key.starts_with("__") && key.ends_with("__")),
             "the sentinel form is __*__ of at least 4 bytes");

  // The null key breaks not_null, whatever the rules.
  FUZZ_CHECK(seqby::violated_key_rule(std::nullopt, {}) == seqby::KeyRule::not_null,
             "an absent key breaks not_null");

  // Group-cache keys: the last colon separates, both ways.
  if (const std::optional<seqby::GroupCacheKey> cache = seqby::parse_group_cache_key(name)) {
    FUZZ_CHECK(!cache->stream.empty() && !cache->group.empty(), "both parts are non-empty");
    FUZZ_CHECK(cache->group.find(':') == std::string::npos, "a cached group has no colon");
    FUZZ_CHECK(cache->stream + ":" + cache->group == name, "a cache key rebuilds to itself");
  }
  if (!name.empty() && seqby::validate_group_name(key).ok()) {
    const std::optional<seqby::GroupCacheKey> back =
        seqby::parse_group_cache_key(seqby::group_cache_key(name, key));
    FUZZ_CHECK(back.has_value() && back->stream == name && back->group == key,
               "group_cache_key round-trips for a valid group");
  }
  FUZZ_CHECK(seqby::validate_owner_id(key).ok() == seqby::validate_group_name(key).ok(),
             "owner ids and group names follow the same rules");

  seqby::KeyRules rules;
  rules.backfill_suffix = suffix;
  rules.key_length_max_bytes = 1 + category.size() % 300;
  if (!seqby::validate_key_rules(rules).ok()) {
    // An unusable suffix is refused, never used: the parse REQUIRES a usable one.
    FUZZ_CHECK(!seqby::validate_group_name(suffix).ok() || suffix == seqby::kDlqToken ||
                   seqby::is_sentinel_name(suffix),
               "a refused suffix breaks a stated rule");
    return 0;
  }

  // The rules and the Status agree; a refusal names the rule it broke.
  const std::optional<seqby::KeyRule> broken = seqby::violated_key_rule(key, rules);
  const seqby::Status status = seqby::validate_partition_key(key, rules);
  FUZZ_CHECK(broken.has_value() != status.ok(), "violated_key_rule and validate agree");
  if (broken) {
    const std::string& message = status.error().message;
    FUZZ_CHECK(message.starts_with("invalid partition key "), "the message says what it is");
    FUZZ_CHECK(
        message.find(std::string("rule ") + seqby::key_rule_name(*broken)) != std::string::npos,
        "the message names the broken rule");
  } else {
    FUZZ_CHECK(!key.empty() && key.size() <= rules.key_length_max_bytes, "length rules hold");
    FUZZ_CHECK(key.find(':') == std::string::npos, "a valid key has no colon");
    FUZZ_CHECK(key != seqby::kDlqToken && key != suffix, "a valid key is not reserved");
  }

  // Every name built from a valid category and key parses back to its parts.
  if (!broken && seqby::validate_category_name(category).ok()) {
    const std::string c(category);
    const std::string k(key);
    const auto expect = [&](NameKind kind, const std::string& built, const std::string& k_part) {
      const ParsedName parsed = seqby::parse_stream_name_in(built, c, suffix);
      FUZZ_CHECK((parsed == ParsedName{kind, c, k_part}), "a built name parses to its parts");
      if (c.find(':') == std::string::npos) {
        FUZZ_CHECK(seqby::parse_stream_name(built, suffix) == parsed,
                   "without a colon in the category both parses agree");
      }
    };
    expect(NameKind::partition, seqby::partition_stream_name(c, k), k);
    expect(NameKind::backfill_lane, seqby::backfill_lane_name(c, k, suffix), k);
    expect(NameKind::dlq, seqby::dlq_stream_name(c, k), k);
    expect(NameKind::lease, seqby::lease_key_name(c, k), k);
    expect(NameKind::fence, seqby::fence_key_name(c, k), k);
    expect(NameKind::index, seqby::partition_index_name(c), "");
    expect(NameKind::category_stream, c, "");
    const std::optional<seqby::PartitionRef> split =
        seqby::split_partition_stream(seqby::partition_stream_name(c, k));
    FUZZ_CHECK(split.has_value() && split->category == c && split->key == k,
               "a partition stream splits back at its last colon");
  }

  // Any name: what parses as something rebuilds to itself.
  check_parsed(seqby::parse_stream_name_in(name, category, suffix), name, category, suffix);
  const ParsedName any = seqby::parse_stream_name(name, suffix);
  check_parsed(any, name, "", suffix);
  if (any.kind != NameKind::unknown) {
    FUZZ_CHECK(any.category.find(':') == std::string::npos,
               "a category found without knowing it has no colon");
    FUZZ_CHECK(seqby::validate_category_name(any.category).ok(),
               "a category found without knowing it satisfies the category rules");
  }
  return 0;
}
