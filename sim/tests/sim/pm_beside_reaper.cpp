// A process manager beside an ordinary handler that reaps (ADR decisions 2 and 7): the process
// manager `fulfil` (one instance, partitions_max 1) and the handler group `billing` (one
// instance, reap_idle_ms 1000) both consume category order, over one SimRedis through the very
// Lua scripts real Redis runs. Once correlation value A went cold, billing reaps order:A (stream,
// index entry, its lease; only possible once fulfil too acked everything). Asserted: the process
// manager then releases A, as A left every index it subscribes, and serves what comes next: every
// event of B (waiting since before the reap) and of a new value C is committed by fulfil, in
// publish order, exactly once, and billing's sinks are complete too. Without that release the
// one slot of the process manager stays on A, and B and C are never served by it. A last test:
// billing does not reap a value the process manager (subscribed, but down) never joined.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20261201;
constexpr const char* kCategory = "order";
constexpr const char* kBilling = "billing";  // the ordinary handler group, which reaps
constexpr const char* kFulfil = "fulfil";    // the process manager
constexpr const char* kBillingOwner = "h";
constexpr const char* kPmOwner = "pm";
constexpr std::uint64_t kReapIdleMs = 1000;

std::int64_t seq_of(const std::string& data) {
  const std::string field = "\"seq\":";
  const auto at = data.find(field);
  SEQBY_CHECK(at != std::string::npos);
  return std::stoll(data.substr(at + field.size()));
}

// Commits each event's seq with its id as the effect (the fenced sink of its stream and group),
// after 10 ms of virtual time.
class CommittingHandler final : public Handler {
 public:
  explicit CommittingHandler(Runtime& runtime) : runtime_(runtime) {}

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    const std::int64_t seq = seq_of(event.data);
    co_await runtime_.sleep_ms(10);
    Result<CommitReply> committed = co_await context.commit(seq, event.id);
    if (!committed.ok()) co_return HandlerResult::failed(committed.error().message);
    const CommitOutcome outcome = committed.value().outcome;
    if (outcome == CommitOutcome::accepted || outcome == CommitOutcome::duplicate) {
      co_return HandlerResult::success();
    }
    co_return HandlerResult::failed("commit refused");
  }

 private:
  Runtime& runtime_;
};

EngineOptions common_options(const std::string& owner) {
  EngineOptions o;
  o.owner_id = owner;
  o.lease_ttl_ms = 3000;
  o.heartbeat_interval_ms = 1000;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  return o;
}

EngineOptions billing_options() {
  EngineOptions o = common_options(kBillingOwner);
  o.category = kCategory;
  o.group = kBilling;
  o.reap_idle_ms = kReapIdleMs;
  return o;
}

EngineOptions pm_options(std::vector<std::string> pm_categories, std::string owner = kPmOwner) {
  EngineOptions o = common_options(owner);
  o.category = "";
  o.group = kFulfil;
  o.pm_categories = std::move(pm_categories);
  o.partitions_max = 1;  // one slot: a value held for good starves every other value
  return o;
}

struct Instance {
  Instance(Scheduler& scheduler, SimServer& server, HistorySink& history, EngineOptions options)
      : runtime(scheduler, options.owner_id),
        link(runtime, server, Rng(kSeed).derive("link/" + options.owner_id)),
        broker(link),
        handler(runtime),
        engine(runtime, broker, history, handler, std::move(options)) {}
  SimRuntime runtime;
  SimRedisLink link;
  redis::RedisBroker broker;
  CommittingHandler handler;
  Engine engine;
};

struct World;
void print_history(const World& w);

struct World {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  properties::VectorHistorySink history;
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};
  std::map<std::string, std::vector<std::string>> published;  // key -> entry ids in order
  std::vector<std::unique_ptr<Instance>> instances;

  ~World() {
    if (::testing::Test::HasFailure()) print_history(*this);
    for (auto& instance : instances) instance->runtime.crash();
    publisher_runtime.crash();
  }

  Instance& add(EngineOptions options) {
    instances.push_back(std::make_unique<Instance>(scheduler, server, history, std::move(options)));
    return *instances.back();
  }

  // Publishes `per_key` events for each key on order, interleaved across keys, one every
  // `gap_ms`, with per-key seqs from `seq_first` on (the publish script also indexes the key).
  void publish(std::vector<std::string> keys, std::int64_t per_key, std::int64_t seq_first,
               std::uint64_t gap_ms) {
    publisher_runtime.spawn("publisher", publish_all(std::move(keys), per_key, seq_first, gap_ms));
  }

  Task<void> publish_all(std::vector<std::string> keys, std::int64_t per_key,
                         std::int64_t seq_first, std::uint64_t gap_ms) {
    for (std::int64_t seq = seq_first; seq < seq_first + per_key; ++seq) {
      for (const auto& key : keys) {
        const std::string data = "{\"key\":\"" + key + "\",\"seq\":" + std::to_string(seq) + "}";
        const PartitionRef partition{kCategory, key};  // named: no temporary inside co_await
        Result<std::string> id = co_await publisher.publish(partition, "created", data);
        SEQBY_CHECK(id.ok());
        published[key].push_back(id.value());
        HistoryRecord r;
        r.time_ms = publisher_runtime.clock().now_ms();
        r.node = "publisher";
        r.op = HistoryOp::publish;
        r.category = kCategory;
        r.key = key;
        r.event_id = id.value();
        r.seq = seq;
        history.record(std::move(r));
        co_await publisher_runtime.sleep_ms(gap_ms);
      }
    }
  }

  // The effects `group` committed for order:key, in seq order; gaps are reported.
  std::vector<std::string> effects(const std::string& key, const std::string& group) {
    redis::Reply r =
        redis.execute({"HGETALL", redis::effects_hash_name(PartitionRef{kCategory, key}, group)});
    std::map<std::int64_t, std::string> by_seq;
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      by_seq[std::stoll(r.elements[i].str)] = r.elements[i + 1].str;
    }
    std::vector<std::string> out;
    for (const auto& [seq, effect] : by_seq) {
      EXPECT_EQ(seq, static_cast<std::int64_t>(out.size()) + 1)
          << "gap in the sink of " << key << " for " << group;
      out.push_back(effect);
    }
    return out;
  }

  bool committed_by(const std::string& group, const std::vector<std::string>& keys) {
    for (const auto& key : keys) {
      if (published[key].empty() || effects(key, group).size() != published[key].size()) {
        return false;
      }
    }
    return true;
  }

  // The first record of `op` on `key` by `node` at or after history index `from`.
  const HistoryRecord* first(HistoryOp op, const std::string& node, const std::string& key,
                             std::size_t from = 0) const {
    for (const auto& r : history.records()) {
      if (r.index >= from && r.op == op && r.node == node && r.key == key) return &r;
    }
    return nullptr;
  }
};

// On failure, the history tells the story (renews left out, to keep logs readable).
void print_history(const World& w) {
  for (const auto& r : w.history.records()) {
    if (r.op == HistoryOp::renew) continue;
    std::fprintf(stderr, "%5llu t=%llu %s %s %s/%s g=%llu id=%s seq=%lld %s\n",
                 static_cast<unsigned long long>(r.index),
                 static_cast<unsigned long long>(r.time_ms), r.node.c_str(), history_op_name(r.op),
                 r.category.c_str(), r.key.c_str(), static_cast<unsigned long long>(r.generation),
                 r.event_id.c_str(), static_cast<long long>(r.seq), r.detail.c_str());
  }
}

void run_reaped_value_is_released(const std::vector<std::string>& pm_categories) {
  World w;
  w.add(billing_options()).engine.start();
  Instance& pm = w.add(pm_options(pm_categories));
  pm.engine.start();

  // A is served by both groups; then B arrives while the process manager's one slot is on A.
  w.publish({"A"}, 3, 1, 5);
  w.scheduler.run_until(
      [&] { return w.committed_by(kFulfil, {"A"}) && w.committed_by(kBilling, {"A"}); }, 30'000);
  ASSERT_TRUE(w.committed_by(kFulfil, {"A"}));
  w.publish({"B"}, 3, 1, 5);

  // A goes cold: billing reaps it, which needs fulfil to have acked all of order:A too.
  w.scheduler.run_until([&] { return w.first(HistoryOp::reap, kBillingOwner, "A") != nullptr; },
                        30'000);
  const HistoryRecord* reap = w.first(HistoryOp::reap, kBillingOwner, "A");
  ASSERT_NE(reap, nullptr) << "billing never reaped order:A";
  const std::size_t reap_index = reap->index;
  EXPECT_TRUE(w.effects("B", kFulfil).empty()) << "the process manager served B beside A";
  EXPECT_EQ(w.redis.execute({"SISMEMBER", PartitionRef{kCategory, "A"}.index(), "A"}).integer, 0);

  // More of B, and a new value C that keeps arriving.
  w.publish({"B"}, 3, 4, 5);
  w.publish({"C"}, 10, 1, 300);
  w.scheduler.run_until(
      [&] { return w.published["B"].size() == 6 && w.published["C"].size() == 10; }, 30'000);
  const std::vector<std::string> keys{"A", "B", "C"};
  w.scheduler.run_until(
      [&] { return w.committed_by(kFulfil, keys) && w.committed_by(kBilling, keys); }, 60'000);
  w.scheduler.run_until(w.scheduler.now_ms() + 1'000);  // the last replies and records arrive

  for (const auto& key : keys) {
    EXPECT_EQ(w.effects(key, kFulfil), w.published[key]) << "fulfil's sink of order:" << key;
    EXPECT_EQ(w.effects(key, kBilling), w.published[key]) << "billing's sink of order:" << key;
  }

  // The process manager released A after the reap, took B only then, and never took A again.
  const HistoryRecord* released = w.first(HistoryOp::release, kPmOwner, "A", reap_index);
  ASSERT_NE(released, nullptr) << "the process manager never released A after its reap";
  EXPECT_EQ(released->group, kFulfil);
  const HistoryRecord* took_b = w.first(HistoryOp::acquire, kPmOwner, "B");
  ASSERT_NE(took_b, nullptr);
  EXPECT_GT(took_b->index, reap_index);
  EXPECT_EQ(w.first(HistoryOp::acquire, kPmOwner, "A", reap_index), nullptr)
      << "A came back without a publish";
  // B went the same way (reaped by billing, released by the process manager), which freed the
  // slot for C.
  const HistoryRecord* reap_b = w.first(HistoryOp::reap, kBillingOwner, "B");
  ASSERT_NE(reap_b, nullptr);
  EXPECT_NE(w.first(HistoryOp::release, kPmOwner, "B", reap_b->index), nullptr);

  // Nothing the process manager applied was lost or applied twice, nor was its lease lost.
  std::map<std::pair<std::string, std::int64_t>, int> commits;
  for (const auto& r : w.history.records()) {
    if (r.node != kPmOwner) continue;
    EXPECT_NE(r.op, HistoryOp::lose) << "at index " << r.index << ": " << r.detail;
    EXPECT_NE(r.op, HistoryOp::commit_fenced) << "at index " << r.index;
    if (r.op == HistoryOp::commit) ++commits[{r.key, r.seq}];
  }
  std::size_t published_count = 0;
  for (const auto& key : keys) published_count += w.published[key].size();
  EXPECT_EQ(commits.size(), published_count);
  for (const auto& [key_seq, count] : commits) {
    EXPECT_EQ(count, 1) << key_seq.first << " seq " << key_seq.second << " applied twice";
  }
}

TEST(PmBesideReaper, ProcessManagerOnOneCategoryReleasesAReapedValueAndServesTheNext) {
  run_reaped_value_is_released({"order"});
}

// With a second category that has nothing for A, A still left every index the process manager
// subscribes once order:A was reaped.
TEST(PmBesideReaper, ProcessManagerOnTwoCategoriesReleasesAValueGoneFromEveryIndex) {
  run_reaped_value_is_released({"order", "payment"});
}

// An ordinary handler group releases a partition gone from every index too. An instance whose
// discovery read K before K's reap and acquired it after (the reap deleted K's lease with its
// stream, so the acquire got a fresh one) held K for good: no index lists it, nobody publishes
// to it, and it counted in the instance's share (cluster seed 514 of the default campaign: the
// other instances at their share of the keys left, one key's last event was never served). Here
// billing's one slot is on G when G leaves the index; it must give G up and serve K.
TEST(PmBesideReaper, AHandlerGroupReleasesAPartitionGoneFromEveryIndexAndServesTheNext) {
  World w;
  EngineOptions options = common_options(kBillingOwner);
  options.category = kCategory;
  options.group = kBilling;
  options.partitions_max = 1;  // one slot: a partition held for good starves every other one
  w.add(std::move(options)).engine.start();
  w.publish({"G"}, 3, 1, 5);
  w.scheduler.run_until([&] { return w.committed_by(kBilling, {"G"}); }, 30'000);
  ASSERT_TRUE(w.committed_by(kBilling, {"G"}));

  // What the race leaves: billing holds G's lease, and G is in no index and has no entries (its
  // stream was reaped; billing's group makes it again, empty).
  ASSERT_EQ(w.redis.execute({"SREM", PartitionRef{kCategory, "G"}.index(), "G"}).integer, 1);
  ASSERT_EQ(w.redis.execute({"DEL", PartitionRef{kCategory, "G"}.stream()}).integer, 1);
  const std::size_t gone = w.history.records().size();
  w.publish({"K"}, 3, 1, 5);
  w.scheduler.run_until([&] { return w.committed_by(kBilling, {"K"}); }, 30'000);
  EXPECT_EQ(w.effects("K", kBilling), w.published["K"]) << "K was never served: G kept the slot";
  EXPECT_NE(w.first(HistoryOp::release, kBillingOwner, "G", gone), nullptr)
      << "billing never released G";
}

// A partition whose index entry was lost while its stream kept its entries (a failover to a replica
// that had not yet received the publish's SADD, an operator's SREM) is not reaped: its holder puts
// it back into the index and keeps serving it (Broker::reindex). Released, as a reaped one is, its
// later entries would wait for nobody: an entry appended with no index entry of its own (a plain
// XADD here; after such a failover, the entries whose SADD came before the replica's copy) is found
// by no discovery.
TEST(PmBesideReaper, AHandlerGroupPutsBackAPartitionItsIndexLostAndKeepsServingIt) {
  World w;
  EngineOptions options = common_options(kBillingOwner);
  options.category = kCategory;
  options.group = kBilling;
  options.partitions_max = 1;
  const std::uint64_t discovery_ms = options.discovery_interval_ms;
  w.add(std::move(options)).engine.start();
  w.publish({"G"}, 3, 1, 5);
  w.scheduler.run_until([&] { return w.committed_by(kBilling, {"G"}); }, 30'000);
  ASSERT_TRUE(w.committed_by(kBilling, {"G"}));

  const PartitionRef g{kCategory, "G"};
  ASSERT_EQ(w.redis.execute({"SREM", g.index(), "G"}).integer, 1);
  const std::size_t lost = w.history.records().size();
  w.scheduler.run_until(w.scheduler.now_ms() + 3 * discovery_ms);
  EXPECT_EQ(w.redis.execute({"SISMEMBER", g.index(), "G"}).integer, 1)
      << "billing did not put G back into the index";
  EXPECT_EQ(w.first(HistoryOp::release, kBillingOwner, "G", lost), nullptr)
      << "billing released G, whose stream still holds its entries";
  const HistoryRecord* warned = w.first(HistoryOp::warn, kBillingOwner, "G", lost);
  ASSERT_NE(warned, nullptr) << "putting G back was not said";
  EXPECT_NE(warned->detail.find("put back"), std::string::npos) << warned->detail;

  const redis::Reply appended = w.redis.execute(
      {"XADD", g.stream(), "*", "type", "created", "data", R"({"key":"G","seq":4})"});
  ASSERT_EQ(appended.kind, redis::Reply::Kind::bulk);
  w.published["G"].push_back(appended.str);
  w.scheduler.run_until([&] { return w.committed_by(kBilling, {"G"}); }, 30'000);
  EXPECT_EQ(w.effects("G", kBilling), w.published["G"])
      << "G's entry after the loss was not served";
}

// A value that comes and goes while the process manager is down is not reaped under it: fulfil
// subscribed to order when it first ran (an engine subscribes its group to every category it
// serves before it acquires anything), so billing's reap of order:C waits for fulfil's group to
// exist there and to have consumed everything. fulfil crashes before C is published; billing
// consumes C and goes idle well past reap_idle_ms, yet order:C stays; a fresh instance of fulfil
// then serves C in publish order, and only after that does billing reap order:C.
TEST(PmBesideReaper, ValueReapedBeforeTheProcessManagerCameIsNotLost) {
  World w;
  Instance& first = w.add(pm_options({"order"}));
  first.engine.start();
  const std::string subscribers = subscribers_set_name(kCategory);
  w.scheduler.run_until(
      [&] {
        return w.redis.execute({"SISMEMBER", subscribers, kFulfil}).integer == 1;
      },
      30'000);
  ASSERT_EQ(w.redis.execute({"SISMEMBER", subscribers, kFulfil}).integer, 1);
  first.runtime.crash();  // down before C exists: it never joins order:C

  w.add(billing_options()).engine.start();
  w.publish({"C"}, 3, 1, 5);
  w.scheduler.run_until([&] { return w.committed_by(kBilling, {"C"}); }, 30'000);
  ASSERT_TRUE(w.committed_by(kBilling, {"C"}));
  w.scheduler.run_until(w.scheduler.now_ms() + 10 * kReapIdleMs);
  EXPECT_EQ(w.first(HistoryOp::reap, kBillingOwner, "C"), nullptr)
      << "billing reaped order:C before fulfil joined it";

  w.add(pm_options({"order"}, "pm-2")).engine.start();
  w.scheduler.run_until([&] { return w.committed_by(kFulfil, {"C"}); }, 30'000);
  EXPECT_EQ(w.effects("C", kFulfil), w.published["C"]) << "fulfil never saw order:C";

  // fulfil joined and consumed everything: the cold partition is reaped after all.
  w.scheduler.run_until([&] { return w.first(HistoryOp::reap, kBillingOwner, "C") != nullptr; },
                        30'000);
  const HistoryRecord* reap = w.first(HistoryOp::reap, kBillingOwner, "C");
  ASSERT_NE(reap, nullptr) << "order:C was never reaped once fulfil had consumed it";
  const HistoryRecord* last_commit = nullptr;
  for (const auto& r : w.history.records()) {
    if (r.node == "pm-2" && r.op == HistoryOp::commit && r.key == "C") last_commit = &r;
  }
  ASSERT_NE(last_commit, nullptr);
  EXPECT_GT(reap->index, last_commit->index);
}

}  // namespace
}  // namespace seqby::sim
