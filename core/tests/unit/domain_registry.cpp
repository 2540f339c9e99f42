// Handler registration (ADR decisions 2 and 8): the acceptance items "Registration validation
// fails loud", "Capability gating fails loud" (and the inline broker runs handlers in submission
// order), and "One partition key per category", in both registration orders, with exact text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/core/inline_broker.h"
#include "seqby/core/outbox.h"
#include "seqby/core/registry.h"

namespace seqby {
namespace {

const BrokerInfo kPartitioning{
    "redis", {Capability::stream_partitioning, Capability::consumer_groups}, false};
const BrokerInfo kPlain{"redis-plain", {Capability::consumer_groups}, false};

HandlerMeta handler(std::string name, std::vector<std::string> types, SequentialBy by) {
  return HandlerMeta{
      std::move(name), HandlerKind::event_handler, std::move(types), std::move(by), {}};
}

HandlerMeta fulfilment() {
  return HandlerMeta{"fulfilment",
                     HandlerKind::process_manager,
                     {"OrderPlaced", "PaymentReceived"},
                     sequential_by_correlation(),
                     {{"OrderPlaced", "order_id"}, {"PaymentReceived", "order_ref"}}};
}

class DomainRegistry : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(
        registry_
            .register_type(EventType{"OrderPlaced", "order", {"order_id", "client_id", "total"}})
            .ok());
    ASSERT_TRUE(
        registry_.register_type(EventType{"OrderShipped", "order", {"order_id", "client_id"}})
            .ok());
    ASSERT_TRUE(
        registry_.register_type(EventType{"PaymentReceived", "payment", {"order_ref", "client_id"}})
            .ok());
    ASSERT_TRUE(
        registry_.register_type(EventType{"AccountOpened", "account", {"account_id"}}).ok());
    ASSERT_TRUE(
        registry_.register_type(CommandType{"PlaceOrder", "order_commands", {"order_id"}}).ok());
  }

  std::string error_of(const HandlerMeta& h, const BrokerInfo& broker = kPartitioning) {
    Status s = registry_.register_handler(h, broker);
    return s.ok() ? "ok" : std::string(errc_name(s.code())) + ": " + s.error().message;
  }

  Registry registry_;
};

TEST_F(DomainRegistry, HandledTypeWithoutTheKeyFieldFailsAtRegistration) {
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced", "AccountOpened"},
                             sequential_by_field("client_id"))),
            "invalid: handler 'notify' declares sequential_by=\"client_id\" but event type "
            "'AccountOpened' (category 'account') has no field 'client_id'");
  EXPECT_EQ(registry_.find_handler("notify"), nullptr);
  EXPECT_EQ(registry_.partition_field("order"), std::nullopt);  // nothing half-registered
}

TEST_F(DomainRegistry, ValidHandlerPartitionsItsCategories) {
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced", "PaymentReceived"},
                             sequential_by_field("client_id"))),
            "ok");
  EXPECT_EQ(registry_.partition_field("order"), "client_id");
  EXPECT_EQ(registry_.partition_field("payment"), "client_id");
  EXPECT_EQ(registry_.partition_field("account"), std::nullopt);
  EXPECT_EQ(registry_.partitioned_categories(), (std::vector<std::string>{"order", "payment"}));
}

TEST_F(DomainRegistry, MalformedDeclarationsFailLoud) {
  EXPECT_EQ(error_of(handler("notify", {"Nope"}, {})),
            "invalid: handler 'notify' handles unknown type 'Nope' (register it first)");
  EXPECT_EQ(error_of(handler("notify", {}, {})), "invalid: handler 'notify' handles no types");
  EXPECT_EQ(error_of(handler("a:b", {"OrderPlaced"}, {})),
            "invalid: handler registration: invalid group name \"a:b\": rule no_colon: contains "
            "':' at byte 1");
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced"}, sequential_by_correlation())),
            "invalid: handler 'notify' declares sequential_by=true, which only a process manager "
            "may; an event or command handler names a payload field");
  HandlerMeta pm = fulfilment();
  pm.sequential_by = sequential_by_field("order_id");
  EXPECT_EQ(error_of(pm),
            "invalid: process manager 'fulfilment' declares sequential_by=\"order_id\": a process "
            "manager declares sequential_by=true and is partitioned by the fields of its "
            "correlate spec");
  HandlerMeta wrong_kind{"place", HandlerKind::command_handler, {"OrderPlaced"}, {}, {}};
  EXPECT_EQ(error_of(wrong_kind),
            "invalid: handler 'place' is a command handler, but 'OrderPlaced' is an event type");
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced"}, {})), "ok");
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced"}, {})),
            "invalid: handler 'notify' is already registered");
}

TEST_F(DomainRegistry, CommandHandlersPartitionToo) {
  HandlerMeta place{
      "place", HandlerKind::command_handler, {"PlaceOrder"}, sequential_by_field("order_id"), {}};
  EXPECT_EQ(error_of(place), "ok");
  EXPECT_EQ(registry_.partition_field("order_commands"), "order_id");
}

// --- capability gating --------------------------------------------------------------------

TEST_F(DomainRegistry, BrokerWithoutStreamPartitioningRejectsSequentialBy) {
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced"}, sequential_by_field("client_id")), kPlain),
            "invalid: handler 'notify' declares sequential_by=\"client_id\" but broker "
            "'redis-plain' does not advertise STREAM_PARTITIONING (it advertises "
            "{CONSUMER_GROUPS})");
  EXPECT_EQ(error_of(fulfilment(), BrokerInfo{"none", {}, false}),
            "invalid: process manager 'fulfilment' declares sequential_by=true but broker 'none' "
            "does not advertise STREAM_PARTITIONING (it advertises {})");
  // The same broker takes a handler that does not ask for partitioning.
  EXPECT_EQ(error_of(handler("audit", {"OrderPlaced"}, {}), kPlain), "ok");
  EXPECT_EQ(error_of(handler("audit2", {"OrderPlaced"}, false), kPlain), "ok");
  EXPECT_EQ(registry_.partition_field("order"), std::nullopt);
}

TEST_F(DomainRegistry, InlineBrokerAcceptsSequentialByAsNoOp) {
  EXPECT_FALSE(InlineBroker::info().capabilities.has(Capability::stream_partitioning));
  EXPECT_EQ(error_of(handler("notify", {"OrderPlaced"}, sequential_by_field("client_id")),
                     InlineBroker::info()),
            "ok");
  EXPECT_EQ(error_of(fulfilment(), InlineBroker::info()),
            "invalid: process manager 'fulfilment' (sequential_by=true) partitions category "
            "'order' by its correlation field 'order_id', but handler 'notify' partitions it by "
            "'client_id': a category is partitioned by exactly one key or not at all");
}

TEST(DomainInlineBroker, RunsHandlersSynchronouslyInSubmissionOrder) {
  Registry registry;
  ASSERT_TRUE(registry.register_type(EventType{"OrderPlaced", "order", {"client_id", "n"}}).ok());
  ASSERT_TRUE(registry.register_type(EventType{"OrderAudited", "audit", {"n"}}).ok());
  const HandlerMeta notify = handler("notify", {"OrderPlaced"}, sequential_by_field("client_id"));
  const HandlerMeta audit = handler("audit", {"OrderPlaced", "OrderAudited"}, {});
  ASSERT_TRUE(registry.register_handler(notify, InlineBroker::info()).ok());
  ASSERT_TRUE(registry.register_handler(audit, InlineBroker::info()).ok());

  InlineBroker broker;
  std::vector<std::string> seen;
  broker.subscribe(notify, [&](const OutboxRecord& m) {
    seen.push_back("notify " + m.stream + " " + m.data);
    // A message published from inside a handler runs after the current one, not nested.
    if (m.key == "b") {
      OutboxRecord follow{
          0, "audit", std::nullopt, "audit", "OrderAudited", R"({"n":99})", OutboxStatus::pending,
          ""};
      EXPECT_TRUE(broker.publish(follow).ok());
    }
    return Status::Ok();
  });
  broker.subscribe(audit, [&](const OutboxRecord& m) {
    seen.push_back("audit " + m.stream + " " + m.data);
    return m.type == "OrderAudited" ? Status(make_error(Errc::refused, "audit store down"))
                                    : Status::Ok();
  });

  Outbox outbox;
  UnitOfWork uow(registry, KeyRules{});
  for (auto [key, n] : {std::pair{"a", 1}, {"b", 2}, {"a", 3}}) {
    ASSERT_TRUE(
        uow.raise("OrderPlaced", {{"client_id", std::string(key)}, {"n", std::int64_t{n}}}).ok());
  }
  ASSERT_TRUE(outbox.commit(uow).ok());
  OutboxPublisher publisher(outbox, registry, KeyRules{});
  PublishSummary summary = publisher.publish_pending(broker.publish_fn());
  EXPECT_EQ(summary.published, 3u);

  EXPECT_EQ(seen, (std::vector<std::string>{
                      R"(notify order:a {"client_id":"a","n":1})",
                      R"(audit order:a {"client_id":"a","n":1})",
                      R"(notify order:b {"client_id":"b","n":2})",
                      R"(audit order:b {"client_id":"b","n":2})",
                      R"(audit audit {"n":99})",
                      R"(notify order:a {"client_id":"a","n":3})",
                      R"(audit order:a {"client_id":"a","n":3})",
                  }));
  EXPECT_EQ(broker.submitted_count(), 4u);
  EXPECT_EQ(broker.delivered_count(), 4u);
  ASSERT_EQ(broker.failures().size(), 1u);
  EXPECT_EQ(broker.failures()[0].handler, "audit");
  EXPECT_EQ(broker.failures()[0].message_seq, 3u);
  EXPECT_EQ(broker.failures()[0].error.message, "audit store down");
}

// --- one partition key per category -------------------------------------------------------

TEST_F(DomainRegistry, TwoHandlersWithDifferentKeysConflictInEitherOrder) {
  const HandlerMeta by_client =
      handler("by_client", {"OrderPlaced"}, sequential_by_field("client_id"));
  const HandlerMeta by_order =
      handler("by_order", {"OrderShipped"}, sequential_by_field("order_id"));
  EXPECT_EQ(error_of(by_client), "ok");
  EXPECT_EQ(error_of(by_order),
            "invalid: handler 'by_order' declares sequential_by=\"order_id\" on category 'order', "
            "but handler 'by_client' partitions it by 'client_id': a category is partitioned by "
            "exactly one key or not at all");

  Registry reversed;
  ASSERT_TRUE(
      reversed.register_type(EventType{"OrderPlaced", "order", {"order_id", "client_id"}}).ok());
  ASSERT_TRUE(
      reversed.register_type(EventType{"OrderShipped", "order", {"order_id", "client_id"}}).ok());
  ASSERT_TRUE(reversed.register_handler(by_order, kPartitioning).ok());
  Status s = reversed.register_handler(by_client, kPartitioning);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "handler 'by_client' declares sequential_by=\"client_id\" on category 'order', but "
            "handler 'by_order' partitions it by 'order_id': a category is partitioned by exactly "
            "one key or not at all");
  EXPECT_EQ(reversed.partition_field("order"), "order_id");
}

TEST_F(DomainRegistry, SameKeyOrNoKeyOnOneCategoryIsFine) {
  EXPECT_EQ(error_of(handler("a", {"OrderPlaced"}, sequential_by_field("client_id"))), "ok");
  EXPECT_EQ(error_of(handler("b", {"OrderShipped"}, sequential_by_field("client_id"))), "ok");
  EXPECT_EQ(error_of(handler("c", {"OrderShipped"}, {})), "ok");
  EXPECT_EQ(registry_.partition_field("order"), "client_id");
  EXPECT_EQ(registry_.find_partition("order")->handler, "a");
}

TEST_F(DomainRegistry, HandlerAgainstProcessManagerCorrelationConflictsInEitherOrder) {
  const HandlerMeta by_client =
      handler("by_client", {"OrderPlaced"}, sequential_by_field("client_id"));
  EXPECT_EQ(error_of(fulfilment()), "ok");
  EXPECT_EQ(registry_.partition_field("order"), "order_id");
  EXPECT_EQ(registry_.partition_field("payment"), "order_ref");
  // What the process manager's engine serves (EngineOptions::pm_categories).
  EXPECT_EQ(registry_.categories_of("fulfilment"), (std::vector<std::string>{"order", "payment"}));
  EXPECT_TRUE(registry_.categories_of("nobody").empty());
  EXPECT_EQ(error_of(by_client),
            "invalid: handler 'by_client' declares sequential_by=\"client_id\" on category "
            "'order', but process manager 'fulfilment' (sequential_by=true) partitions it by its "
            "correlation field 'order_id': a category is partitioned by exactly one key or not at "
            "all");
  // Partitioning by the correlation field itself is allowed.
  EXPECT_EQ(error_of(handler("ship", {"OrderShipped"}, sequential_by_field("order_id"))), "ok");

  Registry reversed;
  ASSERT_TRUE(
      reversed.register_type(EventType{"OrderPlaced", "order", {"order_id", "client_id"}}).ok());
  ASSERT_TRUE(reversed.register_type(EventType{"PaymentReceived", "payment", {"order_ref"}}).ok());
  ASSERT_TRUE(reversed.register_handler(by_client, kPartitioning).ok());
  Status s = reversed.register_handler(fulfilment(), kPartitioning);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "process manager 'fulfilment' (sequential_by=true) partitions category 'order' by its "
            "correlation field 'order_id', but handler 'by_client' partitions it by 'client_id': a "
            "category is partitioned by exactly one key or not at all");
  EXPECT_EQ(reversed.partition_field("payment"), std::nullopt);  // all or nothing
}

TEST_F(DomainRegistry, ProcessManagerCorrelateSpecMustCoverEveryHandledType) {
  HandlerMeta pm = fulfilment();
  pm.correlate.erase("PaymentReceived");
  EXPECT_EQ(error_of(pm),
            "invalid: process manager 'fulfilment' declares sequential_by=true but its correlate "
            "spec has no entry for handled type 'PaymentReceived' (category 'payment')");
  pm.correlate["PaymentReceived"] = "order_id";
  EXPECT_EQ(error_of(pm),
            "invalid: process manager 'fulfilment' correlates event type 'PaymentReceived' "
            "(category 'payment') by field 'order_id', which the type does not have");
  // Without sequential_by the correlate spec is not the registry's business.
  pm.sequential_by = {};
  pm.correlate.clear();
  EXPECT_EQ(error_of(pm), "ok");
  EXPECT_EQ(registry_.partition_field("order"), std::nullopt);
}

TEST_F(DomainRegistry, ProcessManagerCannotSplitOneCategoryOverTwoFields) {
  HandlerMeta pm{"fulfilment",
                 HandlerKind::process_manager,
                 {"OrderPlaced", "OrderShipped"},
                 true,
                 {{"OrderPlaced", "order_id"}, {"OrderShipped", "client_id"}}};
  EXPECT_EQ(error_of(pm),
            "invalid: process manager 'fulfilment' would partition category 'order' by two "
            "fields: 'order_id' (for 'OrderPlaced') and 'client_id' (for 'OrderShipped'); a "
            "category is partitioned by exactly one key");
}

TEST_F(DomainRegistry, EveryTypeOfAPartitionedCategoryCarriesTheKey) {
  ASSERT_TRUE(registry_.register_type(EventType{"OrderNoted", "order", {"order_id"}}).ok());
  EXPECT_EQ(error_of(handler("by_client", {"OrderPlaced"}, sequential_by_field("client_id"))),
            "invalid: handler 'by_client' would partition category 'order' by 'client_id', but "
            "event type 'OrderNoted' of that category has no field 'client_id'");
  EXPECT_EQ(error_of(handler("by_order", {"OrderPlaced"}, sequential_by_field("order_id"))), "ok");
  Status late = registry_.register_type(EventType{"OrderLate", "order", {"client_id"}});
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().message,
            "event type 'OrderLate' (category 'order') has no field 'order_id', by which handler "
            "'by_order' partitions category 'order'");
}

TEST(DomainCapabilities, SetSpellsTheAdrNames) {
  CapabilitySet set{Capability::reclaim_pending, Capability::stream_partitioning};
  EXPECT_EQ(set.to_string(), "{STREAM_PARTITIONING, RECLAIM_PENDING}");
  set.erase(Capability::stream_partitioning);
  EXPECT_FALSE(set.has(Capability::stream_partitioning));
  EXPECT_EQ(CapabilitySet{}.to_string(), "{}");
}

}  // namespace
}  // namespace seqby
