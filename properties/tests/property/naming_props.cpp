// Properties of partition naming and key validation (ADR decisions 3 and 4, Context fact 4),
// over generated categories, keys and stream names. A failure prints rapidcheck's seed and the
// RC_PARAMS="reproduce=..." line that replays it.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/keys.h"
#include "seqby/core/naming.h"

namespace seqby {
namespace {

// Bytes a key may hold, with '_' over-represented so that sentinel-like keys come up.
rc::Gen<char> key_char() {
  return rc::gen::weightedOneOf<char>({
      {6, rc::gen::elementOf(std::string("abcxyzABC0129-._"))},
      {3, rc::gen::just('_')},
      {1, rc::gen::elementOf(std::string("\xc3\xa9\xe2\x82\xac"))},  // UTF-8 bytes
  });
}

// Any byte at all, with the dangerous ones (':', '_', control bytes) over-represented.
rc::Gen<char> any_char() {
  return rc::gen::weightedOneOf<char>({
      {4, key_char()},
      {2, rc::gen::just(':')},
      {1, rc::gen::elementOf(std::string("\n\t\x01\x7f", 4))},
      {1, rc::gen::arbitrary<char>()},
  });
}

rc::Gen<std::string> any_string() { return rc::gen::container<std::string>(any_char()); }

// Keys that pass every rule under the default KeyRules.
rc::Gen<std::string> valid_key() {
  return rc::gen::suchThat(rc::gen::nonEmpty(rc::gen::container<std::string>(key_char())),
                           [](const std::string& k) { return validate_partition_key(k).ok(); });
}

// A category without colons (parse_stream_name's assumption), or with them.
rc::Gen<std::string> plain_category() { return valid_key(); }
rc::Gen<std::string> colon_category() {
  return rc::gen::map(
      rc::gen::pair(valid_key(), valid_key()),
      [](const std::pair<std::string, std::string>& p) { return p.first + ":" + p.second; });
}

RC_GTEST_PROP(NamingProps, ValidKeyRoundTripsThroughEveryName, ()) {
  const std::string category = *plain_category();
  const std::string key = *valid_key();
  const PartitionRef p{category, key};
  RC_ASSERT(parse_stream_name(p.stream()) == (ParsedName{NameKind::partition, category, key}));
  RC_ASSERT(parse_stream_name(p.backfill_lane()) ==
            (ParsedName{NameKind::backfill_lane, category, key}));
  RC_ASSERT(parse_stream_name(p.dlq()) == (ParsedName{NameKind::dlq, category, key}));
  RC_ASSERT(parse_stream_name(p.lease()) == (ParsedName{NameKind::lease, category, key}));
  RC_ASSERT(parse_stream_name(p.fence()) == (ParsedName{NameKind::fence, category, key}));
  RC_ASSERT(parse_stream_name(p.index()) == (ParsedName{NameKind::index, category, ""}));
}

RC_GTEST_PROP(NamingProps, KnownCategoryWithColonsRoundTrips, ()) {
  const std::string category = *colon_category();
  const std::string key = *valid_key();
  const PartitionRef p{category, key};
  RC_ASSERT(parse_stream_name_in(p.stream(), category) ==
            (ParsedName{NameKind::partition, category, key}));
  RC_ASSERT(parse_stream_name_in(p.backfill_lane(), category) ==
            (ParsedName{NameKind::backfill_lane, category, key}));
  RC_ASSERT(parse_stream_name_in(p.dlq(), category) == (ParsedName{NameKind::dlq, category, key}));
  RC_ASSERT(parse_stream_name_in(p.lease(), category) ==
            (ParsedName{NameKind::lease, category, key}));
}

RC_GTEST_PROP(NamingProps, AnyColonBearingValueIsRejected, ()) {
  const std::string value = *any_string() + ":" + *any_string();
  const std::optional<KeyRule> rule = violated_key_rule(value, KeyRules{});
  RC_ASSERT(rule.has_value());
  RC_ASSERT(!validate_partition_key(value).ok());
  // Unless an earlier rule (length, control bytes) already caught it, the colon rule names it.
  bool has_control = false;
  for (unsigned char c : value) has_control |= c < 0x20 || c == 0x7f;
  if (!has_control && value.size() <= kDefaultKeyLengthMaxBytes) {
    RC_ASSERT(*rule == KeyRule::no_colon);
  }
}

RC_GTEST_PROP(NamingProps, AnySentinelFormIsRejected, ()) {
  const std::string value = "__" + *any_string() + "__";
  RC_ASSERT(is_sentinel_name(value));
  RC_ASSERT(!validate_partition_key(value).ok());
}

RC_GTEST_PROP(NamingProps, LaneDlqLeaseAndFenceNamesAreNeverPartitions, ()) {
  const bool colon = *rc::gen::arbitrary<bool>();
  const std::string category = colon ? *colon_category() : *plain_category();
  // Any key at all, valid or not: a derived name must never read as a partition.
  const std::string key = *any_string();
  const PartitionRef p{category, key};
  for (const std::string& name : {p.backfill_lane(), p.dlq(), p.lease(), p.fence(), p.index()}) {
    RC_ASSERT(parse_stream_name(name).kind != NameKind::partition);
    RC_ASSERT(parse_stream_name_in(name, category).kind != NameKind::partition);
  }
}

RC_GTEST_PROP(NamingProps, AnythingParsedAsPartitionComposesBack, ()) {
  // Some names are "x:y" over key bytes, so that partition-like names come up often.
  const auto key_bytes = rc::gen::container<std::string>(key_char());
  const std::string name =
      *rc::gen::oneOf(any_string(), rc::gen::map(rc::gen::pair(key_bytes, key_bytes),
                                                 [](const std::pair<std::string, std::string>& p) {
                                                   return p.first + ":" + p.second;
                                                 }));
  const ParsedName parsed = parse_stream_name(name);
  RC_CLASSIFY(parsed.kind == NameKind::partition);
  if (parsed.kind == NameKind::partition) {
    RC_ASSERT(partition_stream_name(parsed.category, parsed.key) == name);
    KeyRules unlimited;
    unlimited.key_length_max_bytes = name.size() + 1;
    RC_ASSERT(validate_partition_key(parsed.key, unlimited).ok());
  }
}

RC_GTEST_PROP(NamingProps, GroupCacheKeyRoundTripsStreamsWithColons, ()) {
  // Stream names of every shape: partition streams, lanes, categories with colons.
  const std::string stream = *rc::gen::nonEmpty(any_string());
  const std::string group =
      *rc::gen::suchThat(rc::gen::nonEmpty(rc::gen::container<std::string>(key_char())),
                         [](const std::string& g) { return validate_group_name(g).ok(); });
  const std::optional<GroupCacheKey> back = parse_group_cache_key(group_cache_key(stream, group));
  RC_ASSERT(back.has_value());
  RC_ASSERT(back->stream == stream);
  RC_ASSERT(back->group == group);
}

}  // namespace
}  // namespace seqby
