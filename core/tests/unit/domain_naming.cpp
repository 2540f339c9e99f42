// Redis key names (DESIGN.md section 3), their reverse parse, the group-cache key, and the
// partition key rules (ADR decisions 3 and 4) with their exact error text.
#include <gtest/gtest.h>

#include <string>

#include "seqby/core/keys.h"
#include "seqby/core/naming.h"

namespace seqby {
namespace {

TEST(DomainNaming, ComposesTheDesignLayout) {
  const PartitionRef p{"order", "client-123"};
  EXPECT_EQ(p.stream(), "order:client-123");
  EXPECT_EQ(p.backfill_lane(), "order:client-123:backfill");
  EXPECT_EQ(p.backfill_lane("slow"), "order:client-123:slow");
  EXPECT_EQ(p.dlq(), "order:client-123:dlq");
  EXPECT_EQ(p.lease(), "order:client-123:__lease__");
  EXPECT_EQ(p.fence(), "order:client-123:__fence__");
  EXPECT_EQ(p.index(), "order:__partitions__");
}

TEST(DomainNaming, ParsesEveryKindOfName) {
  auto parse = [](std::string_view name) { return parse_stream_name(name); };
  EXPECT_EQ(parse("order:client-1"), (ParsedName{NameKind::partition, "order", "client-1"}));
  EXPECT_EQ(parse("order:client-1:backfill"),
            (ParsedName{NameKind::backfill_lane, "order", "client-1"}));
  EXPECT_EQ(parse("order:client-1:dlq"), (ParsedName{NameKind::dlq, "order", "client-1"}));
  EXPECT_EQ(parse("order:client-1:__lease__"), (ParsedName{NameKind::lease, "order", "client-1"}));
  EXPECT_EQ(parse("order:client-1:__fence__"), (ParsedName{NameKind::fence, "order", "client-1"}));
  EXPECT_EQ(parse("order:__partitions__"), (ParsedName{NameKind::index, "order", ""}));
  EXPECT_EQ(parse("order"), (ParsedName{NameKind::category_stream, "order", ""}));
  EXPECT_EQ(parse("order:dlq"), (ParsedName{NameKind::category_dlq, "order", ""}));
  EXPECT_EQ(parse("order:backfill"), (ParsedName{NameKind::category_lane, "order", ""}));
}

TEST(DomainNaming, RejectsNamesOfNoKnownShape) {
  for (std::string_view name : {"", ":k", "order:", "order:__other__", "order:a:b:c",
                                "order:a:other", "order:dlq:dlq", "order::dlq"}) {
    EXPECT_EQ(parse_stream_name(name).kind, NameKind::unknown) << name;
  }
}

TEST(DomainNaming, BackfillSuffixIsConfigurable) {
  EXPECT_EQ(parse_stream_name("order:c1:slow", "slow"),
            (ParsedName{NameKind::backfill_lane, "order", "c1"}));
  // With another suffix, "backfill" is an ordinary key and "C:K:backfill" is nothing.
  EXPECT_EQ(parse_stream_name("order:backfill", "slow"),
            (ParsedName{NameKind::partition, "order", "backfill"}));
  EXPECT_EQ(parse_stream_name("order:c1:backfill", "slow").kind, NameKind::unknown);
}

TEST(DomainNaming, KnownCategoryMayContainColons) {
  const std::string category = "shop:order";
  const PartitionRef p{category, "client-1"};
  EXPECT_EQ(parse_stream_name_in(p.stream(), category),
            (ParsedName{NameKind::partition, category, "client-1"}));
  EXPECT_EQ(parse_stream_name_in(p.dlq(), category),
            (ParsedName{NameKind::dlq, category, "client-1"}));
  EXPECT_EQ(parse_stream_name_in(p.backfill_lane(), category),
            (ParsedName{NameKind::backfill_lane, category, "client-1"}));
  EXPECT_EQ(parse_stream_name_in("shop:order:dlq", category),
            (ParsedName{NameKind::category_dlq, category, ""}));
  EXPECT_EQ(parse_stream_name_in("shop:order", category).kind, NameKind::category_stream);
  EXPECT_EQ(parse_stream_name_in("shop:orders:c1", category).kind, NameKind::unknown);
  // Without the category the first colon is taken as its end: documented, not a partition.
  EXPECT_EQ(parse_stream_name(p.backfill_lane()).kind, NameKind::unknown);
}

TEST(DomainNaming, GroupCacheKeyRoundTripsStreamsWithColons) {
  // The first-colon split of ADR Context fact 4 would recover "order" here.
  const std::string cache_key = group_cache_key("order:client-1", "notify");
  EXPECT_EQ(cache_key, "order:client-1:notify");
  EXPECT_EQ(parse_group_cache_key(cache_key), (GroupCacheKey{"order:client-1", "notify"}));
  EXPECT_EQ(parse_group_cache_key("a:b:c:backfill:g"), (GroupCacheKey{"a:b:c:backfill", "g"}));
  EXPECT_FALSE(parse_group_cache_key("nocolon").has_value());
  EXPECT_FALSE(parse_group_cache_key("stream:").has_value());
  EXPECT_FALSE(parse_group_cache_key(":group").has_value());
}

// --- key rules ------------------------------------------------------------------------------

std::string key_error(std::optional<std::string_view> key, const KeyRules& rules = {}) {
  Status s = validate_partition_key(key, rules);
  return s.ok() ? "ok" : std::string(errc_name(s.code())) + ": " + s.error().message;
}

TEST(DomainKeys, AcceptsEntityIdentifiers) {
  for (std::string_view key : {"client-123", "a", "42", "550e8400-e29b-41d4-a716-446655440000",
                               "__", "___", "_x_", "__x", "x__", "caf\xc3\xa9", "dlqx", "Dlq"}) {
    EXPECT_EQ(key_error(key), "ok") << key;
  }
  EXPECT_EQ(key_error(std::string(256, 'k')), "ok");
}

TEST(DomainKeys, EachRuleIsNamedWithTheValue) {
  EXPECT_EQ(key_error(std::nullopt),
            "invalid: invalid partition key (null): rule not_null: the key field is absent or "
            "null");
  EXPECT_EQ(key_error(""), "invalid: invalid partition key \"\": rule not_empty: the key is empty");
  EXPECT_EQ(key_error("a:b"),
            "invalid: invalid partition key \"a:b\": rule no_colon: contains ':' at byte 1 (a "
            "partition stream is category:key)");
  EXPECT_EQ(key_error("dlq"),
            "invalid: invalid partition key \"dlq\": rule not_reserved: equals the reserved DLQ "
            "token \"dlq\"");
  EXPECT_EQ(key_error("backfill"),
            "invalid: invalid partition key \"backfill\": rule not_reserved: equals the "
            "configured backfill suffix \"backfill\"");
  EXPECT_EQ(key_error("__partitions__"),
            "invalid: invalid partition key \"__partitions__\": rule not_sentinel: the __name__ "
            "form is reserved for internal keys such as __partitions__");
  EXPECT_EQ(key_error("a\nb"),
            "invalid: invalid partition key \"a\\nb\": rule no_control_chars: control byte 0x0a "
            "at byte 1");
  EXPECT_EQ(key_error("a\x7f"),
            "invalid: invalid partition key \"a\\x7f\": rule no_control_chars: control byte 0x7f "
            "at byte 1");
  EXPECT_EQ(key_error(std::string(257, 'k')),
            "invalid: invalid partition key \"" + std::string(64, 'k') +
                "\"...(257 bytes): rule max_length: 257 bytes, more than "
                "key_length_max_bytes=256");
}

TEST(DomainKeys, SentinelFormIncludesFourUnderscores) {
  for (std::string_view key : {"____", "__x__", "__lease__", "__fence__", "__p__"}) {
    EXPECT_EQ(violated_key_rule(key, {}), KeyRule::not_sentinel) << key;
  }
  EXPECT_FALSE(is_sentinel_name("___"));
  EXPECT_TRUE(is_sentinel_name("____"));
}

TEST(DomainKeys, RulesFollowTheConfiguration) {
  KeyRules rules;
  rules.backfill_suffix = "slow";
  rules.key_length_max_bytes = 4;
  EXPECT_EQ(violated_key_rule("slow", rules), KeyRule::not_reserved);
  EXPECT_EQ(violated_key_rule("backfill", rules), KeyRule::max_length);
  EXPECT_EQ(violated_key_rule("fill", rules), std::nullopt);
  EXPECT_EQ(violated_key_rule("dlq", rules), KeyRule::not_reserved);
}

TEST(DomainKeys, KeyRulesThemselvesAreValidated) {
  KeyRules rules;
  EXPECT_TRUE(validate_key_rules(rules).ok());
  for (std::string_view suffix : {"", "dlq", "a:b", "__x__"}) {
    rules.backfill_suffix = std::string(suffix);
    EXPECT_FALSE(validate_key_rules(rules).ok()) << suffix;
  }
  rules.backfill_suffix = "backfill";
  rules.key_length_max_bytes = 0;
  EXPECT_EQ(validate_key_rules(rules).error().message,
            "invalid key_length_max_bytes 0: must be at least 1");
}

TEST(DomainKeys, NamesOfCategoriesGroupsAndOwners) {
  EXPECT_TRUE(validate_category_name("shop:order").ok());
  EXPECT_EQ(validate_category_name("").error().message,
            "invalid category \"\": rule not_empty: the name is empty");
  EXPECT_EQ(validate_category_name("a\tb").error().message,
            "invalid category \"a\\tb\": rule no_control_chars: control byte 0x09 at byte 1");
  EXPECT_TRUE(validate_group_name("notify").ok());
  EXPECT_EQ(validate_group_name("a:b").error().message,
            "invalid group name \"a:b\": rule no_colon: contains ':' at byte 1");
  EXPECT_EQ(validate_owner_id("w1:3").error().message,
            "invalid owner id \"w1:3\": rule no_colon: contains ':' at byte 2");
}

TEST(DomainKeys, PrintableEscapesAndTruncates) {
  EXPECT_EQ(printable("plain"), "\"plain\"");
  EXPECT_EQ(printable("q\"b\\\x01"), "\"q\\\"b\\\\\\x01\"");
  EXPECT_EQ(printable(std::string(65, 'x')), "\"" + std::string(64, 'x') + "\"...(65 bytes)");
}

}  // namespace
}  // namespace seqby
