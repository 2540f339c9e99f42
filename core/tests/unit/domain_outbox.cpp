// Outbox record creation and the publish backstop (ADR decision 3): "Unsafe key values fail
// loud at record creation" for every listed value, and one bad record never wedges the outbox.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/outbox.h"
#include "seqby/core/registry.h"

namespace seqby {
namespace {

const BrokerInfo kPartitioning{"redis", {Capability::stream_partitioning}, false};

class DomainOutbox : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        registry_.register_type(EventType{"OrderPlaced", "order", {"client_id", "n"}}).ok());
    ASSERT_TRUE(registry_.register_type(EventType{"Audited", "audit", {"n"}}).ok());
    ASSERT_TRUE(registry_
                    .register_handler(HandlerMeta{"notify",
                                                  HandlerKind::event_handler,
                                                  {"OrderPlaced"},
                                                  sequential_by_field("client_id"),
                                                  {}},
                                      kPartitioning)
                    .ok());
  }

  static JsonObject order(JsonValue client_id, std::int64_t n = 1) {
    return JsonObject{{"client_id", std::move(client_id)}, {"n", n}};
  }

  Registry registry_;
};

TEST_F(DomainOutbox, ValidKeyMakesARecordOnItsPartitionStream) {
  UnitOfWork uow(registry_, KeyRules{});
  ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string("client-1"), 7)).ok());
  ASSERT_TRUE(uow.raise("OrderPlaced", order(std::int64_t{42})).ok());  // numeric ids are keys
  ASSERT_TRUE(uow.raise("Audited", {{"n", std::int64_t{1}}}).ok());     // not partitioned
  ASSERT_EQ(uow.records().size(), 3u);
  const OutboxRecord& r = uow.records()[0];
  EXPECT_EQ(r.category, "order");
  EXPECT_EQ(r.key, "client-1");
  EXPECT_EQ(r.stream, "order:client-1");
  EXPECT_EQ(r.type, "OrderPlaced");
  EXPECT_EQ(r.data, R"({"client_id":"client-1","n":7})");
  EXPECT_EQ(uow.records()[1].stream, "order:42");
  EXPECT_EQ(uow.records()[2].stream, "audit");
  EXPECT_EQ(uow.records()[2].key, std::nullopt);

  Outbox outbox;
  ASSERT_TRUE(outbox.commit(uow).ok());
  EXPECT_TRUE(uow.records().empty());
  ASSERT_EQ(outbox.records().size(), 3u);
  EXPECT_EQ(outbox.records()[2].id, 3u);
  EXPECT_EQ(outbox.pending_count(), 3u);
}

TEST_F(DomainOutbox, UnsafeKeyFailsTheCallerAndCreatesNoRecord) {
  struct Case {
    const char* what;
    JsonObject payload;
    const char* rule;
  };
  const std::vector<Case> cases = {
      {"absent", JsonObject{{"n", std::int64_t{1}}}, "not_null"},
      {"null", order(nullptr), "not_null"},
      {"boolean", order(true), "not_null"},
      {"object", order(JsonRaw{"{\"id\":1}"}), "not_null"},
      {"array", order(JsonRaw{"[1]"}), "not_null"},
      {"float", order(JsonRaw{"1.5e3"}), "not_null"},
      {"empty", order(std::string()), "not_empty"},
      {"colon", order(std::string("client:1")), "no_colon"},
      {"dlq", order(std::string("dlq")), "not_reserved"},
      {"backfill suffix", order(std::string("backfill")), "not_reserved"},
      {"__partitions__", order(std::string("__partitions__")), "not_sentinel"},
      {"other sentinel", order(std::string("__lease__")), "not_sentinel"},
      {"too long", order(std::string(257, 'k')), "max_length"},
      {"control char", order(std::string("client\x01")), "no_control_chars"},
  };
  UnitOfWork uow(registry_, KeyRules{});
  ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string("good"))).ok());
  for (const Case& c : cases) {
    Status s = uow.raise("OrderPlaced", c.payload);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), Errc::invalid) << c.what;
    const std::string& message = s.error().message;
    EXPECT_TRUE(
        message.starts_with("raise 'OrderPlaced': field 'client_id' of category 'order': "
                            "invalid partition key "))
        << message;
    EXPECT_NE(message.find(std::string("rule ") + c.rule), std::string::npos) << message;
    EXPECT_EQ(uow.records().size(), 1u) << c.what;  // no record for the rejected raise
  }
  Outbox outbox;
  ASSERT_TRUE(outbox.commit(uow).ok());
  ASSERT_EQ(outbox.records().size(), 1u);
  EXPECT_EQ(outbox.records()[0].key, "good");
}

TEST_F(DomainOutbox, RejectionTextNamesRuleAndValue) {
  UnitOfWork uow(registry_, KeyRules{});
  Status s = uow.raise("OrderPlaced", order(std::string("dlq")));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "raise 'OrderPlaced': field 'client_id' of category 'order': invalid partition key "
            "\"dlq\": rule not_reserved: equals the reserved DLQ token \"dlq\"");
  s = uow.raise("OrderPlaced", order(true));
  EXPECT_EQ(s.error().message,
            "raise 'OrderPlaced': field 'client_id' of category 'order': invalid partition key (a "
            "boolean): rule not_null: a key is a string or an integer");
  s = uow.raise("OrderPlaced", order(JsonRaw{"{\"id\":\"k1\"}"}));
  EXPECT_EQ(s.error().message,
            "raise 'OrderPlaced': field 'client_id' of category 'order': invalid partition key (an "
            "object): rule not_null: a key is a string or an integer");
  s = uow.raise("Nope", {});
  EXPECT_EQ(s.error().message, "raise 'Nope': unknown type");
}

TEST_F(DomainOutbox, ConfiguredSuffixIsReservedAtRecordCreation) {
  KeyRules rules;
  rules.backfill_suffix = "slow";
  UnitOfWork uow(registry_, rules);
  EXPECT_TRUE(uow.raise("OrderPlaced", order(std::string("backfill"))).ok());
  Status s = uow.raise("OrderPlaced", order(std::string("slow")));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("equals the configured backfill suffix \"slow\""),
            std::string::npos);
}

TEST_F(DomainOutbox, AbortedUnitWritesNothing) {
  UnitOfWork uow(registry_, KeyRules{});
  ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string("a"))).ok());
  EXPECT_FALSE(uow.raise("OrderPlaced", order(std::string("a:b"))).ok());
  uow.abort();  // the caller's operation failed
  Outbox outbox;
  ASSERT_TRUE(outbox.commit(uow).ok());
  EXPECT_TRUE(outbox.records().empty());
}

TEST_F(DomainOutbox, FullOutboxRefusesTheWholeUnit) {
  Outbox outbox(2);
  UnitOfWork uow(registry_, KeyRules{});
  for (const char* key : {"a", "b", "c"})
    ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string(key))).ok());
  Status s = outbox.commit(uow);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Errc::refused);
  EXPECT_TRUE(outbox.records().empty());
  EXPECT_EQ(uow.records().size(), 3u);
}

// --- the publish backstop -----------------------------------------------------------------

OutboxRecord direct(std::optional<std::string> key, std::string stream, std::int64_t n) {
  OutboxRecord r;
  r.category = "order";
  r.key = std::move(key);
  r.stream = std::move(stream);
  r.type = "OrderPlaced";
  r.data = encode_json_object({{"n", n}});
  return r;
}

TEST_F(DomainOutbox, BadRecordIsAbandonedAndTheNextOnesPublish) {
  Outbox outbox;
  ASSERT_TRUE(outbox.insert_unchecked(direct("a", "order:a", 1)).ok());
  ASSERT_TRUE(outbox.insert_unchecked(direct("x:y", "order:x:y", 2)).ok());
  ASSERT_TRUE(outbox.insert_unchecked(direct(std::nullopt, "order", 3)).ok());
  ASSERT_TRUE(outbox.insert_unchecked(direct("b", "order:b", 4)).ok());
  ASSERT_TRUE(outbox.insert_unchecked(direct("c", "order:other", 5)).ok());
  ASSERT_TRUE(outbox.insert_unchecked(direct("a", "order:a", 6)).ok());

  std::vector<std::string> published;
  OutboxPublisher publisher(outbox, registry_, KeyRules{});
  PublishSummary summary = publisher.publish_pending([&](const OutboxRecord& r) {
    published.push_back(r.stream + " " + r.data);
    return Status::Ok();
  });
  EXPECT_EQ(published, (std::vector<std::string>{R"(order:a {"n":1})", R"(order:b {"n":4})",
                                                 R"(order:a {"n":6})"}));
  EXPECT_EQ(summary.published, 3u);
  EXPECT_EQ(summary.abandoned, 3u);
  EXPECT_FALSE(summary.stopped_on.has_value());

  const auto& records = outbox.records();
  EXPECT_EQ(records[1].status, OutboxStatus::abandoned);
  EXPECT_EQ(records[1].abandon_reason,
            "invalid partition key \"x:y\": rule no_colon: contains ':' at byte 1 (a partition "
            "stream is category:key)");
  EXPECT_EQ(records[2].status, OutboxStatus::abandoned);
  EXPECT_EQ(records[2].abandon_reason,
            "invalid partition key (null): rule not_null: the key field is absent or null");
  EXPECT_EQ(records[4].abandon_reason,
            "invalid partition key \"c\": the record's stream \"order:other\" is not "
            "\"order:c\"");
  EXPECT_EQ(records[5].status, OutboxStatus::published);
  EXPECT_EQ(outbox.pending_count(), 0u);
  // A second pass has nothing left to do: abandoned is terminal, never retried.
  summary = publisher.publish_pending([&](const OutboxRecord&) { return Status::Ok(); });
  EXPECT_EQ(summary.published + summary.abandoned, 0u);
}

TEST_F(DomainOutbox, RecordsMadeUnderOldRulesAreAbandonedUnderNewOnes) {
  UnitOfWork uow(registry_, KeyRules{});
  ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string("slow"))).ok());
  ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string("fast"))).ok());
  Outbox outbox;
  ASSERT_TRUE(outbox.commit(uow).ok());
  KeyRules changed;
  changed.backfill_suffix = "slow";
  OutboxPublisher publisher(outbox, registry_, changed);
  std::vector<std::string> published;
  publisher.publish_pending([&](const OutboxRecord& r) {
    published.push_back(r.stream);
    return Status::Ok();
  });
  EXPECT_EQ(published, (std::vector<std::string>{"order:fast"}));
  EXPECT_EQ(outbox.records()[0].abandon_reason,
            "invalid partition key \"slow\": rule not_reserved: equals the configured backfill "
            "suffix \"slow\"");
}

TEST_F(DomainOutbox, PublishFailureStopsThePassSoOrderIsKept) {
  UnitOfWork uow(registry_, KeyRules{});
  for (std::int64_t n = 1; n <= 3; ++n)
    ASSERT_TRUE(uow.raise("OrderPlaced", order(std::string("a"), n)).ok());
  Outbox outbox;
  ASSERT_TRUE(outbox.commit(uow).ok());
  OutboxPublisher publisher(outbox, registry_, KeyRules{});
  std::vector<std::string> published;
  bool broker_down = true;
  auto publish = [&](const OutboxRecord& r) -> Status {
    if (r.id == 2 && broker_down) return make_error(Errc::timeout, "no reply");
    published.push_back(r.data);
    return Status::Ok();
  };
  PublishSummary summary = publisher.publish_pending(publish);
  EXPECT_EQ(summary.published, 1u);
  ASSERT_TRUE(summary.stopped_on.has_value());
  EXPECT_EQ(summary.stopped_on->code, Errc::timeout);
  EXPECT_EQ(outbox.pending_count(), 2u);
  broker_down = false;
  summary = publisher.publish_pending(publish);
  EXPECT_EQ(summary.published, 2u);
  EXPECT_EQ(published,
            (std::vector<std::string>{R"({"client_id":"a","n":1})", R"({"client_id":"a","n":2})",
                                      R"({"client_id":"a","n":3})"}));
}

}  // namespace
}  // namespace seqby
