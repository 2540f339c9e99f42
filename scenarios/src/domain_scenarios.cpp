// The domain scenarios of the ADR's acceptance list: registration validation, capability
// gating, one partition key per category, and unsafe keys at record creation. They run the real
// Registry, UnitOfWork, Outbox and InlineBroker. On the simulator a broker appears only as its
// capability facts; on real Redis the facts come from a RedisBroker connected to the server, and
// unsafe_keys also drives `seqby publish` against it: each bad key exits 2 naming the rule and
// leaves nothing in Redis, a good key lands in the stream and the partition index.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/inline_broker.h"
#include "seqby/core/keys.h"
#include "seqby/core/outbox.h"
#include "seqby/core/registry.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/runtime/real_runtime.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/redis_driver.h"

namespace seqby::scenarios {
namespace {

// The broker facts the simulator form registers against: a Redis broker with partitioning.
const BrokerInfo kSimPartitioning{
    "redis", {Capability::stream_partitioning, Capability::consumer_groups}, false};
const BrokerInfo kPlain{"redis-plain", {Capability::consumer_groups}, false};

// Prints one line per check and collects the failures.
class Checks {
 public:
  explicit Checks(ScenarioContext& ctx) : out_(ctx.out) {}

  void expect(bool held, const std::string& what, const std::string& outcome) {
    out_ << (held ? "ok  " : "FAIL ") << what << ": " << outcome << "\n";
    if (!held) result_.failures.push_back(what + ": " + outcome);
  }
  // `status` must be an Errc::invalid rejection whose message contains `needle`.
  void rejected(const std::string& what, const Status& status, const std::string& needle,
                const std::string& where = "rejected at registration") {
    if (status.ok()) return expect(false, what, "accepted, expected a rejection");
    const std::string& message = status.error().message;
    const bool held = status.code() == Errc::invalid && message.find(needle) != std::string::npos;
    expect(held, what, where + ": " + message);
  }
  void accepted(const std::string& what, const Status& status, const std::string& outcome) {
    expect(status.ok(), what, status.ok() ? outcome : "rejected: " + status.error().message);
  }
  ScenarioResult result() { return std::move(result_); }

 private:
  std::ostream& out_;
  ScenarioResult result_;
};

// The domain every scenario registers: orders and payments for one client, and accounts.
void register_types(Registry& registry) {
  const EventType types[] = {
      {"OrderPlaced", "order", {"order_id", "client_id", "total"}},
      {"OrderShipped", "order", {"order_id", "client_id"}},
      {"PaymentReceived", "payment", {"payment_id", "order_ref", "client_id"}},
      {"AccountOpened", "account", {"account_id"}},
  };
  for (const EventType& type : types) SEQBY_CHECK(registry.register_type(type).ok());
}

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

// The capability facts of a RedisBroker on ctx.redis_url (after a PING through it), or nullopt
// (reported) when the server does not answer.
std::optional<BrokerInfo> real_broker_info(ScenarioContext& ctx, Checks& checks) {
  Result<redis::RedisConfig> config = redis::parse_redis_url(ctx.redis_url);
  if (!config.ok()) {
    checks.expect(false, "RedisBroker", config.error().message);
    return std::nullopt;
  }
  redis::RealRuntime runtime;
  redis::HiredisLink link(runtime, config.value());
  redis::RedisBroker broker(link);
  Result<redis::Reply> pong = runtime.block_on(link.execute(redis::Command{"PING"}));
  const bool up = pong.ok() && pong.value() == redis::Reply::status("PONG");
  const BrokerInfo info{"redis", broker.capabilities(), false};
  checks.expect(
      up, "RedisBroker on " + redis::redacted_url(config.value()),
      up ? "answers; advertises " + info.capabilities.to_string()
         : "no PONG: " + (pong.ok() ? redis::to_string(pong.value()) : pong.error().message));
  if (!up) return std::nullopt;
  return info;
}

ScenarioResult registration_validation(ScenarioContext& ctx, const BrokerInfo& partitioning) {
  Checks checks(ctx);
  Registry registry;
  register_types(registry);

  checks.rejected("handler 'notify' sequential_by=client_id on type without client_id",
                  registry.register_handler(handler("notify", {"OrderPlaced", "AccountOpened"},
                                                    sequential_by_field("client_id")),
                                            partitioning),
                  "has no field 'client_id'");
  checks.expect(registry.find_handler("notify") == nullptr && !registry.partition_field("order"),
                "the rejected handler left nothing behind",
                "no handler 'notify', category 'order' not partitioned");

  HandlerMeta pm = fulfilment();
  pm.correlate.erase("PaymentReceived");
  checks.rejected("process manager sequential_by=true whose correlate spec misses a handled type",
                  registry.register_handler(pm, partitioning), "correlate spec has no entry");
  pm.correlate["PaymentReceived"] = "order_id";
  checks.rejected("process manager correlating a type by a field the type lacks",
                  registry.register_handler(pm, partitioning), "which the type does not have");
  checks.rejected(
      "event handler declaring sequential_by=true",
      registry.register_handler(handler("notify", {"OrderPlaced"}, sequential_by_correlation()),
                                partitioning),
      "only a process manager may");

  const Status ok = registry.register_handler(
      handler("notify", {"OrderPlaced", "PaymentReceived"}, sequential_by_field("client_id")),
      partitioning);
  checks.accepted("handler 'notify' sequential_by=client_id on types that carry client_id", ok,
                  "accepted; 'order' and 'payment' partitioned by " +
                      registry.partition_field("order").value_or("(none)") + " and " +
                      registry.partition_field("payment").value_or("(none)"));
  return checks.result();
}

ScenarioResult capability_gating(ScenarioContext& ctx, const BrokerInfo& partitioning) {
  Checks checks(ctx);
  checks.expect(partitioning.capabilities.has(Capability::stream_partitioning),
                "broker '" + partitioning.name + "' advertises STREAM_PARTITIONING",
                partitioning.capabilities.to_string());
  const HandlerMeta notify = handler("notify", {"OrderPlaced"}, sequential_by_field("client_id"));
  {
    Registry registry;
    register_types(registry);
    checks.rejected("sequential_by handler on broker 'redis-plain' without STREAM_PARTITIONING",
                    registry.register_handler(notify, kPlain),
                    "does not advertise STREAM_PARTITIONING");
    checks.accepted("plain handler on broker 'redis-plain'",
                    registry.register_handler(handler("audit", {"OrderPlaced"}, {}), kPlain),
                    "accepted (no partitioning asked)");
    checks.accepted(
        "sequential_by handler on broker '" + partitioning.name + "' with STREAM_PARTITIONING",
        registry.register_handler(notify, partitioning), "accepted");
  }

  // The inline broker: accepted as a no-op, and messages run one at a time in submission order.
  Registry registry;
  register_types(registry);
  checks.accepted("sequential_by handler on the inline broker (no STREAM_PARTITIONING)",
                  registry.register_handler(notify, InlineBroker::info()), "accepted as a no-op");
  InlineBroker broker;
  std::vector<std::string> submitted;
  std::vector<std::string> seen;
  int in_handler = 0;
  int in_handler_max = 0;
  broker.subscribe(notify, [&](const OutboxRecord& m) {
    in_handler_max = std::max(in_handler_max, ++in_handler);
    seen.push_back(m.stream + " " + m.data);
    --in_handler;
    return Status::Ok();
  });
  UnitOfWork uow(registry, KeyRules{});
  const char* keys[] = {"client-A", "client-B", "client-A", "client-B", "client-B", "client-A"};
  std::int64_t order_id = 0;
  for (const char* key : keys) {
    ++order_id;
    const JsonObject payload{{"order_id", order_id}, {"client_id", std::string(key)}};
    SEQBY_CHECK(uow.raise("OrderPlaced", payload).ok());
    submitted.push_back(std::string("order:") + key + " " + encode_json_object(payload));
  }
  Outbox outbox;
  SEQBY_CHECK(outbox.commit(uow).ok());
  OutboxPublisher publisher(outbox, registry, KeyRules{});
  const PublishSummary summary = publisher.publish_pending(broker.publish_fn());
  checks.expect(summary.published == submitted.size() && seen == submitted,
                "inline broker runs handlers in submission order",
                std::to_string(seen.size()) + " of " + std::to_string(submitted.size()) +
                    " messages handled, in the order submitted");
  checks.expect(in_handler_max == 1, "inline broker runs one message at a time",
                "at most " + std::to_string(in_handler_max) + " in the handler at once");
  return checks.result();
}

ScenarioResult one_key_per_category(ScenarioContext& ctx, const BrokerInfo& partitioning) {
  Checks checks(ctx);
  const HandlerMeta by_client =
      handler("by_client", {"OrderPlaced"}, sequential_by_field("client_id"));
  const HandlerMeta by_order =
      handler("by_order", {"OrderShipped"}, sequential_by_field("order_id"));
  const HandlerMeta pm = fulfilment();
  const std::string rule = "a category is partitioned by exactly one key";
  struct Order {
    const char* what;
    const HandlerMeta& first;
    const HandlerMeta& second;
  };
  const Order orders[] = {
      {"handlers by_client then by_order on category 'order'", by_client, by_order},
      {"handlers by_order then by_client on category 'order'", by_order, by_client},
      {"handler by_client then process manager correlating 'order' by order_id", by_client, pm},
      {"process manager correlating 'order' by order_id then handler by_client", pm, by_client},
  };
  for (const Order& o : orders) {
    Registry registry;
    register_types(registry);
    SEQBY_CHECK(registry.register_handler(o.first, partitioning).ok());
    checks.rejected(o.what, registry.register_handler(o.second, partitioning), rule,
                    "second rejected at registration");
  }

  Registry registry;
  register_types(registry);
  SEQBY_CHECK(registry.register_handler(fulfilment(), partitioning).ok());
  checks.accepted(
      "handler partitioning 'order' by the process manager's correlation field",
      registry.register_handler(handler("ship", {"OrderShipped"}, sequential_by_field("order_id")),
                                partitioning),
      "accepted; 'order' partitioned by " + *registry.partition_field("order"));
  checks.accepted("handler without sequential_by on the partitioned category",
                  registry.register_handler(handler("audit", {"OrderPlaced"}, {}), partitioning),
                  "accepted");
  return checks.result();
}

// `seqby publish` against the real server: every bad key exits 2 naming its rule and writes
// nothing (no stream, no index member); a good key lands in its stream and in the index.
void expect_publish_refuses_on_redis(ScenarioContext& ctx, Checks& checks) {
  WorkerSettings settings;
  settings.cluster = ctx.redis_cluster;
  RedisScenarioDriver driver(ctx.redis_url, ctx.seqby_binary, "unsafe_keys", settings);
  const std::vector<std::string> on_server = server_flags(settings);
  const Status ready = driver.ready();
  if (!ready.ok())
    return checks.expect(false, "real redis-server and seqby command", ready.error().message);
  const struct {
    const char* what;
    std::string key;
    KeyRule rule;
  } bad[] = {
      {"empty key", "", KeyRule::not_empty},
      {"colon-bearing key", "client:1", KeyRule::no_colon},
      {"DLQ token", "dlq", KeyRule::not_reserved},
      {"backfill suffix", "backfill", KeyRule::not_reserved},
      {"partition index sentinel", "__partitions__", KeyRule::not_sentinel},
      {"other sentinel", "__lease__", KeyRule::not_sentinel},
      {"key over 256 bytes", std::string(300, 'k'), KeyRule::max_length},
      {"control character", "client\n1", KeyRule::no_control_chars},
  };
  for (const auto& b : bad) {
    std::vector<std::string> args{"publish",    "--redis",         driver.url(),
                                  "--category", driver.category(), "--key",
                                  b.key,        "--field",         "order_id=2"};
    args.insert(args.end(), on_server.begin(), on_server.end());
    const CommandRun run = run_command(driver.seqby_binary(), args);
    const std::string rule = std::string("rule ") + key_rule_name(b.rule);
    std::string err = run.err.substr(0, run.err.find('\n'));
    checks.expect(run.exit_code == 2 && run.err.find(rule) != std::string::npos,
                  std::string("seqby publish refuses the ") + b.what + " (" + rule + ")",
                  "exit " + std::to_string(run.exit_code) + ": " + err);
  }
  const std::vector<std::string> left = driver.category_keys();
  checks.expect(
      left.empty() && driver.run({"EXISTS", partition_index_name(driver.category())}).integer == 0,
      "Redis holds nothing of the refused publishes",
      std::to_string(left.size()) + " key(s) under " + driver.category() +
          ":*, no partition index");

  std::vector<std::string> args{"publish",    "--redis",         driver.url(),
                                "--category", driver.category(), "--key",
                                "client-A",   "--field",         "client_id=client-A"};
  args.insert(args.end(), on_server.begin(), on_server.end());
  const CommandRun good = run_command(driver.seqby_binary(), args);
  const std::string id = good.out.substr(0, good.out.find('\n'));
  const PartitionRef partition = driver.partition("client-A");
  const redis::Reply entries = driver.run({"XRANGE", partition.stream(), "-", "+"});
  const bool in_stream = entries.elements.size() == 1 && !entries.elements[0].elements.empty() &&
                         entries.elements[0].elements[0].str == id;
  const bool indexed = driver.run({"SISMEMBER", partition.index(), "client-A"}).integer == 1;
  checks.expect(good.exit_code == 0 && in_stream && indexed,
                "seqby publish of a good key lands in the stream and the index",
                "exit " + std::to_string(good.exit_code) + ", entry " + id + " in " +
                    partition.stream() + (in_stream ? "" : " (missing)") + ", client-A " +
                    (indexed ? "in " : "missing from ") + partition.index());
}

ScenarioResult unsafe_keys(ScenarioContext& ctx, const BrokerInfo& partitioning) {
  Checks checks(ctx);
  Registry registry;
  register_types(registry);
  SEQBY_CHECK(
      registry
          .register_handler(handler("notify", {"OrderPlaced"}, sequential_by_field("client_id")),
                            partitioning)
          .ok());
  struct Case {
    std::string what;
    std::optional<JsonValue> key;  // nullopt: the field is absent
    KeyRule rule;
  };
  const std::vector<Case> cases = {
      {"absent key field", std::nullopt, KeyRule::not_null},
      {"null key", JsonValue(nullptr), KeyRule::not_null},
      {"empty key", JsonValue(std::string()), KeyRule::not_empty},
      {"colon-bearing key", JsonValue(std::string("client:1")), KeyRule::no_colon},
      {"DLQ token", JsonValue(std::string("dlq")), KeyRule::not_reserved},
      {"backfill suffix", JsonValue(std::string("backfill")), KeyRule::not_reserved},
      {"partition index sentinel", JsonValue(std::string("__partitions__")), KeyRule::not_sentinel},
      {"other sentinel", JsonValue(std::string("__lease__")), KeyRule::not_sentinel},
      {"key over 256 bytes", JsonValue(std::string(300, 'k')), KeyRule::max_length},
      {"control character", JsonValue(std::string("client\n1")), KeyRule::no_control_chars},
  };
  UnitOfWork uow(registry, KeyRules{});
  SEQBY_CHECK(uow.raise("OrderPlaced",
                        {{"order_id", std::int64_t{1}}, {"client_id", std::string("client-A")}})
                  .ok());
  for (const Case& c : cases) {
    JsonObject payload{{"order_id", std::int64_t{2}}};
    if (c.key) payload.emplace("client_id", *c.key);
    const Status s = uow.raise("OrderPlaced", payload);
    checks.rejected(c.what + " (rule " + key_rule_name(c.rule) + ")", s,
                    std::string("rule ") + key_rule_name(c.rule),
                    "raise rejected in the unit of work");
    checks.expect(uow.records().size() == 1, c.what + ": no outbox record created",
                  std::to_string(uow.records().size()) + " record(s) in the unit of work");
  }
  Outbox outbox;
  SEQBY_CHECK(outbox.commit(uow).ok());
  checks.expect(outbox.records().size() == 1 && outbox.records()[0].stream == "order:client-A",
                "committed unit of work holds only the valid record",
                std::to_string(outbox.records().size()) + " record(s), stream " +
                    (outbox.records().empty() ? "(none)" : outbox.records()[0].stream));

  // Backstop: a bad record that still reaches the publish path is abandoned, never blocking.
  OutboxRecord bad = outbox.records()[0];
  bad.key = "client:B";
  bad.stream = "order:client:B";
  SEQBY_CHECK(outbox.insert_unchecked(bad).ok());
  OutboxRecord good = outbox.records()[0];
  SEQBY_CHECK(outbox.insert_unchecked(good).ok());
  std::vector<std::uint64_t> published;
  OutboxPublisher publisher(outbox, registry, KeyRules{});
  const PublishSummary summary = publisher.publish_pending([&](const OutboxRecord& r) {
    published.push_back(r.id);
    return Status::Ok();
  });
  const OutboxRecord& abandoned = outbox.records()[1];
  checks.expect(
      abandoned.status == OutboxStatus::abandoned &&
          abandoned.abandon_reason.starts_with("invalid partition key"),
      "bad record on the publish path is ABANDONED",
      std::string(outbox_status_name(abandoned.status)) + ": " + abandoned.abandon_reason);
  checks.expect(published == std::vector<std::uint64_t>{1, 3} && summary.abandoned == 1,
                "records behind the abandoned one still publish",
                std::to_string(summary.published) + " published, " +
                    std::to_string(summary.abandoned) + " abandoned");
  if (!ctx.redis_url.empty()) expect_publish_refuses_on_redis(ctx, checks);
  return checks.result();
}

// The two forms of a domain scenario: the simulator's broker facts, or a real RedisBroker's.
Scenario both_forms(const char* name, const char* summary,
                    ScenarioResult (*fn)(ScenarioContext&, const BrokerInfo&)) {
  return Scenario{name, summary, [fn](ScenarioContext& ctx) { return fn(ctx, kSimPartitioning); },
                  [fn](ScenarioContext& ctx) {
                    Checks checks(ctx);
                    const std::optional<BrokerInfo> info = real_broker_info(ctx, checks);
                    if (!info) return checks.result();
                    ScenarioResult result = fn(ctx, *info);
                    return result;
                  }};
}

}  // namespace

std::vector<Scenario> domain_scenarios() {
  return {
      both_forms("registration_validation",
                 "Registration validation fails loud: a sequential_by field missing from a "
                 "handled type fails at registration, not at publish",
                 registration_validation),
      both_forms("capability_gating",
                 "Capability gating fails loud: sequential_by needs STREAM_PARTITIONING; the "
                 "inline broker accepts it as a no-op and runs messages in submission order",
                 capability_gating),
      both_forms("one_key_per_category",
                 "One partition key per category: different keys, or a key other than a "
                 "sequential_by PM's correlation field, fail at registration in either order",
                 one_key_per_category),
      both_forms("unsafe_keys",
                 "Unsafe key values fail loud at record creation: the caller's unit of work fails "
                 "and no outbox record is created; seqby publish refuses them and writes nothing",
                 unsafe_keys),
  };
}

}  // namespace seqby::scenarios
