// The ownership engine end to end on the simulator: several Engine instances over one SimRedis,
// each through its own SimRedisLink and RedisBroker, running the very Lua scripts real Redis runs.
// Asserted: per-key committed effects equal publish order, every event committed exactly once
// in the sink; a crashed owner's pending entry is reclaimed by another instance with no loss;
// an owner whose heartbeat stalls past the lease TTL is fenced (its commit and ack refused) while
// committed order stays intact; a graceful stop releases leases and another instance takes over.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/properties/history_io.h"
#include "seqby/sim/faulty_link.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

constexpr std::uint64_t kSeed = 20240601;
constexpr const char* kCategory = "order";
constexpr const char* kGroup = "billing";

// What the handlers are doing right now, by node (event id, "" when idle).
struct Probe {
  std::map<std::string, std::string> inside;
  std::map<std::string, std::string> inside_key;
};

// Stream entry ids ("ms-seq") in stream order.
bool id_less(const std::string& a, const std::string& b) {
  const auto split = [](const std::string& id) {
    const auto dash = id.find('-');
    return std::make_pair(std::stoull(id.substr(0, dash)), std::stoull(id.substr(dash + 1)));
  };
  return split(a) < split(b);
}

std::int64_t seq_of(const std::string& data) {
  const std::string field = "\"seq\":";
  const auto at = data.find(field);
  SEQBY_CHECK(at != std::string::npos);
  return std::stoll(data.substr(at + field.size()));
}

// Commits each event's seq with its id as the effect, after `handle_ms` of virtual time
// (`slow_ms` for the event (slow_key, slow_seq)).
class CommittingHandler final : public Handler {
 public:
  CommittingHandler(Runtime& runtime, Probe& probe, std::string node)
      : runtime_(runtime), probe_(probe), node_(std::move(node)) {}

  std::uint64_t handle_ms = 10;
  std::string slow_key;
  std::int64_t slow_seq = -1;
  std::uint64_t slow_ms = 0;
  std::string poison_key;  // the event (poison_key, poison_seq) always fails
  std::int64_t poison_seq = -1;
  std::uint32_t transient_failures = 0;  // every event of transient_key fails this many times
  std::string transient_key;
  std::map<std::string, std::uint32_t> failed_by_id;

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    const std::int64_t seq = seq_of(event.data);
    probe_.inside[node_] = event.id;
    probe_.inside_key[node_] = event.key;
    const bool slow = event.key == slow_key && seq == slow_seq;
    co_await runtime_.sleep_ms(slow ? slow_ms : handle_ms);
    if (event.key == poison_key && seq == poison_seq) {
      probe_.inside[node_].clear();
      co_return HandlerResult::failed("poison");
    }
    if (event.key == transient_key && failed_by_id[event.id] < transient_failures) {
      ++failed_by_id[event.id];
      probe_.inside[node_].clear();
      co_return HandlerResult::failed("transient");
    }
    Result<CommitReply> committed = co_await context.commit(seq, event.id);
    probe_.inside[node_].clear();
    if (!committed.ok()) co_return HandlerResult::failed(committed.error().message);
    switch (committed.value().outcome) {
      case CommitOutcome::accepted:
      case CommitOutcome::duplicate:
        co_return HandlerResult::success();
      case CommitOutcome::fenced:
        co_return HandlerResult::failed("commit fenced");
      case CommitOutcome::out_of_order:
        co_return HandlerResult::failed("commit out of order");
    }
    co_return HandlerResult::failed("unreachable");
  }

 private:
  Runtime& runtime_;
  Probe& probe_;
  std::string node_;
};

EngineOptions engine_options(const std::string& owner, std::uint64_t reap_idle_ms = 0) {
  EngineOptions o;
  o.reap_idle_ms = reap_idle_ms;
  o.owner_id = owner;
  o.category = kCategory;
  o.group = kGroup;
  o.lease_ttl_ms = 3000;
  o.heartbeat_interval_ms = 1000;
  o.discovery_interval_ms = 500;
  o.poll_interval_ms = 20;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  return o;
}

struct Instance {
  Instance(Scheduler& scheduler, SimServer& server, HistorySink& history, Probe& probe,
           const std::string& owner, const LinkFaultRates& rates, std::uint64_t seed,
           std::uint64_t reap_idle_ms)
      : runtime(scheduler, owner),
        link(runtime, server, Rng(seed).derive("link/" + owner)),
        faulty(link, runtime, Rng(seed).derive("faults/" + owner), rates, nullptr, owner),
        broker(faulty),
        handler(runtime, probe, owner),
        engine(runtime, broker, history, handler, engine_options(owner, reap_idle_ms)) {}
  SimRuntime runtime;
  SimRedisLink link;
  FaultyLink faulty;  // no faults unless the test sets rates
  redis::RedisBroker broker;
  CommittingHandler handler;
  Engine engine;
};

struct World;
void print_history(const World& w, std::size_t count_max = 400);

struct World {
  Scheduler scheduler;
  ServerClock server_clock{scheduler};
  SimRedis redis{server_clock};
  ServerAdapter<SimRedis> server{redis};
  properties::VectorHistorySink history;
  Probe probe;
  SimRuntime publisher_runtime{scheduler, "publisher"};
  SimRedisLink publisher_link{publisher_runtime, server, Rng(kSeed).derive("link/publisher")};
  redis::RedisBroker publisher{publisher_link};
  std::map<std::string, std::vector<std::string>> published;  // key -> entry ids in order
  std::vector<std::unique_ptr<Instance>> instances;
  LinkFaultRates link_faults;      // for instances added from now on
  std::uint64_t seed = kSeed;      // for instances added from now on
  std::uint64_t reap_idle_ms = 0;  // for instances added from now on

  ~World() {
    if (::testing::Test::HasFailure()) print_history(*this);
    for (auto& instance : instances) instance->runtime.crash();
    publisher_runtime.crash();
  }

  Instance& add(const std::string& owner) {
    instances.push_back(std::make_unique<Instance>(scheduler, server, history, probe, owner,
                                                   link_faults, seed, reap_idle_ms));
    return *instances.back();
  }

  // Publishes `per_key` events for each key, interleaved across keys, one every `gap_ms`, with
  // per-key seqs from `seq_first` on.
  void publish(std::vector<std::string> keys, std::int64_t per_key, std::uint64_t gap_ms,
               std::int64_t seq_first = 1) {
    publisher_runtime.spawn("publisher", publish_all(std::move(keys), per_key, gap_ms, seq_first));
  }

  Task<void> publish_all(std::vector<std::string> keys, std::int64_t per_key, std::uint64_t gap_ms,
                         std::int64_t seq_first) {
    for (std::int64_t seq = seq_first; seq < seq_first + per_key; ++seq) {
      for (const auto& key : keys) {
        const std::string data = "{\"key\":\"" + key + "\",\"seq\":" + std::to_string(seq) + "}";
        // Named, not a braced temporary: g++ 12 frees a braced aggregate temporary inside a
        // co_await expression twice.
        const PartitionRef partition{kCategory, key};
        Result<std::string> id = co_await publisher.publish(partition, "created", data);
        SEQBY_CHECK(id.ok());
        published[key].push_back(id.value());
        HistoryRecord r;
        r.time_ms = publisher_runtime.clock().now_ms();
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

  // The key's committed effects in seq order (the sink accepts seq 1, 2, 3, ... only).
  std::vector<std::string> effects(const std::string& key) {
    redis::Reply r =
        redis.execute({"HGETALL", redis::effects_hash_name(PartitionRef{kCategory, key}, kGroup)});
    std::map<std::int64_t, std::string> by_seq;
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      by_seq[std::stoll(r.elements[i].str)] = r.elements[i + 1].str;
    }
    std::vector<std::string> out;
    for (const auto& [seq, effect] : by_seq) {
      EXPECT_EQ(seq, static_cast<std::int64_t>(out.size()) + 1) << "gap in the sink of " << key;
      out.push_back(effect);
    }
    return out;
  }

  std::size_t published_count() const {
    std::size_t n = 0;
    for (const auto& [key, ids] : published) n += ids.size();
    return n;
  }

  bool all_committed() {
    if (published.empty()) return false;
    for (const auto& [key, ids] : published) {
      if (effects(key).size() != ids.size()) return false;
    }
    return true;
  }

  // Runs until every published event is in the sink, then a little longer so that the last
  // replies (and their history records) arrive.
  void run_until_all_committed(std::uint64_t time_limit_ms) {
    scheduler.run_until([&] { return all_committed(); }, time_limit_ms);
    scheduler.run_until(scheduler.now_ms() + 1000);
  }

  // Crashes an instance, and says so in the history (its open executions end there).
  void crash(Instance& instance) {
    instance.runtime.crash();
    HistoryRecord r;
    r.time_ms = scheduler.now_ms();
    r.node = instance.engine.options().owner_id;
    r.op = HistoryOp::fault;
    r.detail = "crash";
    history.record(std::move(r));
    probe.inside[r.node].clear();
  }

  std::vector<HistoryRecord> records_of(HistoryOp op) const {
    std::vector<HistoryRecord> out;
    for (const auto& r : history.records()) {
      if (r.op == op) out.push_back(r);
    }
    return out;
  }
};

// On failure, the history tells the story (first records only, to keep logs readable).
void print_history(const World& w, std::size_t count_max) {
  std::size_t n = 0;
  for (const auto& r : w.history.records()) {
    if (n++ == count_max) break;
    std::fprintf(stderr, "%5llu t=%llu %s %s %s/%s g=%llu id=%s seq=%lld %s\n",
                 static_cast<unsigned long long>(r.index),
                 static_cast<unsigned long long>(r.time_ms), r.node.c_str(), history_op_name(r.op),
                 r.category.c_str(), r.key.c_str(), static_cast<unsigned long long>(r.generation),
                 r.event_id.c_str(), static_cast<long long>(r.seq), r.detail.c_str());
  }
}

// Every accepted commit and ack was made by the latest generation acquired for its key so far.
void expect_accepted_steps_under_latest_generation(const World& w) {
  std::map<std::string, std::uint64_t> latest;
  for (const auto& r : w.history.records()) {
    if (r.op == HistoryOp::acquire) {
      EXPECT_GT(r.generation, latest[r.key]) << "generation reused for " << r.key;
      latest[r.key] = r.generation;
    }
    if (r.op == HistoryOp::commit || r.op == HistoryOp::ack) {
      EXPECT_EQ(r.generation, latest[r.key])
          << history_op_name(r.op) << " by " << r.node << " at index " << r.index
          << " under a stale generation";
    }
  }
}

// Per key, handler executions never overlap (enter/exit strictly alternate).
void expect_no_overlap_per_key(const World& w) {
  std::map<std::string, std::string> inside;  // key -> node:event currently inside
  for (const auto& r : w.history.records()) {
    if (r.op == HistoryOp::enter) {
      EXPECT_EQ(inside[r.key], "")
          << "two executions of key " << r.key << " overlap at index " << r.index;
      inside[r.key] = r.node + ":" + r.event_id;
    } else if (r.op == HistoryOp::exit) {
      inside[r.key].clear();
    } else if (r.op == HistoryOp::fault && r.detail == "crash") {
      for (auto& [key, who] : inside) {
        if (who.rfind(r.node + ":", 0) == 0) who.clear();
      }
    }
  }
}

TEST(EngineBasic, ThreeInstancesCommitEveryEventInPublishOrderPerKey) {
  World w;
  for (const char* owner : {"a", "b", "c"}) w.add(owner).engine.start();
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3", "k4", "k5"};
  w.publish(keys, 20, 3);
  w.run_until_all_committed(60'000);

  ASSERT_EQ(w.published_count(), 120u);
  for (const auto& key : keys) EXPECT_EQ(w.effects(key), w.published[key]) << "key " << key;
  // Each instance took a share, and executions of different keys overlapped in time.
  for (const auto& instance : w.instances) {
    EXPECT_FALSE(instance->engine.held().empty()) << instance->engine.options().owner_id;
    EXPECT_LE(instance->engine.held().size(), 3u);  // ceil(6 / 3) + 1
  }
  std::size_t commits = w.records_of(HistoryOp::commit).size();
  EXPECT_EQ(commits, 120u);
  bool overlapped = false;
  std::map<std::string, bool> busy;
  for (const auto& r : w.history.records()) {
    if (r.op == HistoryOp::enter) {
      for (const auto& [key, in] : busy) overlapped = overlapped || (in && key != r.key);
      busy[r.key] = true;
    } else if (r.op == HistoryOp::exit) {
      busy[r.key] = false;
    }
  }
  EXPECT_TRUE(overlapped);
  expect_no_overlap_per_key(w);
  expect_accepted_steps_under_latest_generation(w);
}

std::string render(const std::vector<HistoryRecord>& records) {
  std::string out;
  for (const auto& r : records) {
    out += std::to_string(r.index) + " " + std::to_string(r.time_ms) + " " + r.node + " " +
           history_op_name(r.op) + " " + r.key + " " + std::to_string(r.generation) + " " +
           r.event_id + " " + std::to_string(r.seq) + " " + r.detail + "\n";
  }
  return out;
}

TEST(EngineBasic, SameSeedGivesTheSameHistory) {
  std::string first;
  for (int run = 0; run < 2; ++run) {
    World w;
    for (const char* owner : {"a", "b", "c"}) w.add(owner).engine.start();
    w.publish({"k0", "k1", "k2", "k3"}, 10, 3);
    w.run_until_all_committed(60'000);
    const std::string history = render(w.history.records());
    EXPECT_GT(history.size(), 0u);
    if (run == 0) {
      first = history;
    } else {
      EXPECT_EQ(history, first);
    }
  }
}

TEST(EngineBasic, CrashedOwnerIsReclaimedByAnotherInstanceWithoutLoss) {
  World w;
  w.add("a").engine.start();
  w.add("b").engine.start();
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  w.publish(keys, 15, 5);
  // Crash "a" while it is inside a handler, so that the event stays pending for it.
  w.scheduler.run_until([&] { return w.published_count() > 10 && !w.probe.inside["a"].empty(); },
                        30'000);
  const std::string key = w.probe.inside_key["a"];
  const std::string in_flight = w.probe.inside["a"];
  ASSERT_FALSE(in_flight.empty());
  w.crash(*w.instances[0]);
  w.run_until_all_committed(60'000);

  for (const auto& k : keys) EXPECT_EQ(w.effects(k), w.published[k]) << "key " << k;
  // "b" took the key over and reclaimed at least the in-flight entry from a's consumer.
  bool reclaimed = false;
  for (const auto& r : w.records_of(HistoryOp::reclaim)) {
    if (r.node == "b" && r.key == key && r.detail != "count=0") reclaimed = true;
  }
  EXPECT_TRUE(reclaimed) << "no reclaim by b of " << key;
  bool reread = false;
  for (const auto& r : w.records_of(HistoryOp::read)) {
    if (r.node == "b" && r.event_id == in_flight) reread = true;
  }
  EXPECT_TRUE(reread) << "b never read the in-flight entry " << in_flight;
  expect_no_overlap_per_key(w);
  expect_accepted_steps_under_latest_generation(w);
}

TEST(EngineBasic, HeartbeatStallPastTheTtlFencesTheStaleOwner) {
  World w;
  for (const char* owner : {"a", "b"}) {
    Instance& instance = w.add(owner);
    instance.handler.slow_key = "k0";
    instance.handler.slow_seq = 5;
    instance.handler.slow_ms = 6000;  // longer than the 3000 ms lease
    instance.engine.start();
  }
  w.publish({"k0", "k1"}, 12, 5);
  // When the owner of k0 enters the slow event, freeze its heartbeat well past the TTL.
  std::string stale;
  w.scheduler.run_until(
      [&] {
        if (w.published["k0"].size() < 5) return false;
        for (const char* node : {"a", "b"}) {
          if (w.probe.inside[node] == w.published["k0"][4]) stale = node;
        }
        return !stale.empty();
      },
      30'000);
  ASSERT_FALSE(stale.empty());
  Instance& owner = *w.instances[stale == "a" ? 0 : 1];
  std::uint64_t stale_generation = 0;
  for (const auto& p : owner.engine.held()) {
    if (p.key == "k0") stale_generation = p.generation;
  }
  ASSERT_GT(stale_generation, 0u);
  owner.runtime.stall_tasks_until(kHeartbeatTaskName, w.scheduler.now_ms() + 9000);
  w.run_until_all_committed(90'000);

  for (const auto& k : {"k0", "k1"}) EXPECT_EQ(w.effects(k), w.published[k]) << "key " << k;
  // The stale owner finished the slow handler, but its commit and its ack were refused.
  const std::string slow_id = w.published["k0"][4];
  bool commit_fenced = false;
  bool read_or_ack_fenced = false;
  for (const auto& r : w.history.records()) {
    if (r.node != stale || r.key != "k0" || r.generation != stale_generation) continue;
    if (r.op == HistoryOp::commit_fenced && r.seq == 5) commit_fenced = true;
    if (r.op == HistoryOp::ack_fenced || r.op == HistoryOp::read_fenced) read_or_ack_fenced = true;
    // Fenced before its next event: the stale generation never enters another k0 event.
    EXPECT_FALSE(r.op == HistoryOp::enter && id_less(slow_id, r.event_id))
        << "stale entered " << r.event_id;
  }
  EXPECT_TRUE(commit_fenced) << "stale commit of seq 5 was not fenced";
  EXPECT_TRUE(read_or_ack_fenced) << "the stale owner's next read or ack was not fenced";
  expect_accepted_steps_under_latest_generation(w);
}

TEST(EngineBasic, PoisonHeadHaltsItsPartitionOnlyAndStaysPending) {
  World w;
  for (const char* owner : {"a", "b"}) {
    Instance& instance = w.add(owner);
    instance.handler.poison_key = "k0";
    instance.handler.poison_seq = 4;
    instance.handler.transient_key = "k1";
    instance.handler.transient_failures = 2;  // within the budget of 3 retries
    instance.engine.start();
  }
  const std::vector<std::string> keys{"k0", "k1", "k2"};
  w.publish(keys, 10, 5);
  w.scheduler.run_until(
      [&] {
        return w.published_count() == 30 && w.effects("k1").size() == 10 &&
               w.effects("k2").size() == 10 && !w.records_of(HistoryOp::halt).empty();
      },
      60'000);
  w.scheduler.run_until(w.scheduler.now_ms() + 10'000);  // the halted partition stays halted

  // k0 stopped right before its poison head; k1 (transient failures) and k2 completed in order.
  const std::vector<std::string>& k0 = w.published["k0"];
  EXPECT_EQ(w.effects("k0"), std::vector<std::string>(k0.begin(), k0.begin() + 3));
  EXPECT_EQ(w.effects("k1"), w.published["k1"]);
  EXPECT_EQ(w.effects("k2"), w.published["k2"]);
  const auto halts = w.records_of(HistoryOp::halt);
  ASSERT_EQ(halts.size(), 1u);
  EXPECT_EQ(halts[0].key, "k0");
  EXPECT_EQ(halts[0].event_id, k0[3]);
  // 1 + retry_count_max executions of the head, each a fresh delivery of the pending entry.
  std::vector<std::string> deliveries;
  for (const auto& r : w.records_of(HistoryOp::read)) {
    if (r.event_id == k0[3]) deliveries.push_back(r.detail);
  }
  EXPECT_EQ(deliveries,
            (std::vector<std::string>{"delivery=1", "delivery=2", "delivery=3", "delivery=4"}));
  // The head is still pending in the group, and nothing went to a DLQ.
  redis::Reply pending =
      w.redis.execute({"XPENDING", PartitionRef{kCategory, "k0"}.stream(), kGroup});
  ASSERT_EQ(pending.kind, redis::Reply::Kind::array);
  EXPECT_EQ(pending.elements[0].integer, 1);
  EXPECT_EQ(pending.elements[1].str, k0[3]);
  EXPECT_FALSE(w.redis.key_exists(PartitionRef{kCategory, "k0"}.dlq()));
  // The halted owner keeps its lease (renewed), and shows the halt.
  bool shown = false;
  for (const auto& instance : w.instances) {
    for (const auto& p : instance->engine.held()) {
      if (p.key == "k0") shown = p.halted && p.halt_id == k0[3];
    }
  }
  EXPECT_TRUE(shown);
  EXPECT_TRUE(w.records_of(HistoryOp::lose).empty());
  expect_no_overlap_per_key(w);
  expect_accepted_steps_under_latest_generation(w);
}

TEST(EngineBasic, LostRequestsRepliesAndResetsNeverBreakOrderOrLoseEvents) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    World w;
    w.seed = seed;
    w.link_faults.request_lost_ppm = 20'000;
    w.link_faults.reply_lost_ppm = 20'000;
    w.link_faults.connection_reset_ppm = 10'000;
    w.link_faults.latency_ppm = 50'000;
    w.link_faults.latency_ms_max = 200;
    w.link_faults.timeout_ms = 500;
    for (const char* owner : {"a", "b", "c"}) w.add(owner).engine.start();
    const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
    w.publish(keys, 25, 20);
    w.scheduler.run_until(20'000);
    for (auto& instance : w.instances) instance->faulty.set_enabled(false);  // liveness phase
    w.run_until_all_committed(120'000);

    std::uint64_t fired = 0;
    for (auto& instance : w.instances) fired += instance->faulty.counters().total();
    EXPECT_GT(fired, 10u);
    for (const auto& k : keys) EXPECT_EQ(w.effects(k), w.published[k]) << "key " << k;
    // The history shows each accepted commit once, lost replies included.
    std::map<std::pair<std::string, std::int64_t>, int> commits;
    for (const auto& r : w.records_of(HistoryOp::commit)) ++commits[{r.key, r.seq}];
    EXPECT_EQ(commits.size(), 100u);
    for (const auto& [key_seq, count] : commits) {
      EXPECT_EQ(count, 1) << key_seq.first << " seq " << key_seq.second;
    }
    expect_accepted_steps_under_latest_generation(w);
  }
}

Task<void> stop_engine(Engine& engine, bool* done) {
  co_await engine.stop();
  *done = true;
}

TEST(EngineBasic, GracefulStopReleasesLeasesAndAnotherInstanceTakesOver) {
  World w;
  w.add("a").engine.start();
  w.add("b").engine.start();
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
  w.publish(keys, 20, 10);
  Instance& a = *w.instances[0];
  w.scheduler.run_until([&] { return w.published_count() >= 30 && !a.engine.held().empty(); },
                        30'000);
  ASSERT_FALSE(a.engine.held().empty());
  bool stopped = false;
  a.runtime.spawn("stop", stop_engine(a.engine, &stopped));
  w.run_until_all_committed(60'000);

  EXPECT_TRUE(stopped);
  EXPECT_EQ(a.engine.tasks_alive(), 0u);
  EXPECT_TRUE(a.engine.held().empty());
  for (const auto& k : keys) EXPECT_EQ(w.effects(k), w.published[k]) << "key " << k;
  std::size_t released = 0;
  for (const auto& r : w.records_of(HistoryOp::release)) released += r.node == "a" ? 1 : 0;
  EXPECT_GT(released, 0u);
  EXPECT_EQ(w.instances[1]->engine.held().size(), keys.size());
  EXPECT_TRUE(w.records_of(HistoryOp::lose).empty());  // nobody lost a lease: all graceful
  expect_no_overlap_per_key(w);
  expect_accepted_steps_under_latest_generation(w);
}

// The committed effects of `key` by seq (gaps allowed: an operator may void a skipped event).
std::map<std::int64_t, std::string> effects_by_seq(World& w, const std::string& key) {
  redis::Reply r =
      w.redis.execute({"HGETALL", redis::effects_hash_name(PartitionRef{kCategory, key}, kGroup)});
  std::map<std::int64_t, std::string> out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
    out[std::stoll(r.elements[i].str)] = r.elements[i + 1].str;
  }
  return out;
}

TEST(EngineOperate, HaltIsRecordedInRedisAndAnOperatorSkipLetsThePartitionGoOnInOrder) {
  World w;
  for (const char* owner : {"a", "b"}) {
    Instance& instance = w.add(owner);
    instance.handler.poison_key = "k0";
    instance.handler.poison_seq = 4;
    instance.engine.start();
  }
  w.publish({"k0", "k1"}, 8, 5);
  w.scheduler.run_until([&] { return !w.records_of(HistoryOp::halt).empty(); }, 60'000);
  w.scheduler.run_until(w.scheduler.now_ms() + 1'000);  // the halt record reaches Redis
  ASSERT_EQ(w.records_of(HistoryOp::halt).size(), 1u);
  const std::string head = w.published["k0"][3];
  const PartitionRef k0{kCategory, "k0"};

  // The owner wrote why and since when the partition halted, where operators look.
  const std::string halt_key = redis::halt_key_name(k0, kGroup);
  redis::Reply halt = w.redis.execute({"HGETALL", halt_key});
  std::map<std::string, std::string> fields;
  for (std::size_t i = 0; i + 1 < halt.elements.size(); i += 2) {
    fields[halt.elements[i].str] = halt.elements[i + 1].str;
  }
  const HistoryRecord halted = w.records_of(HistoryOp::halt)[0];
  EXPECT_EQ(fields["id"], head);
  EXPECT_EQ(fields["reason"], "poison");
  EXPECT_EQ(fields["owner"], halted.node + ":" + std::to_string(halted.generation));
  EXPECT_EQ(fields["delivery_count"], "4");
  EXPECT_FALSE(fields["since_ms"].empty());
  w.scheduler.run_until(w.scheduler.now_ms() + 5'000);
  EXPECT_EQ(effects_by_seq(w, "k0").size(), 3u) << "a halted partition must not advance";

  // The operator skips the head (what `seqby admin skip` does: ack it, clear the halt record)
  // and voids its effect in the test sink, so the next seq is the key's next commit.
  w.redis.execute({"XACK", k0.stream(), kGroup, head});
  w.redis.execute({"DEL", halt_key});
  w.redis.execute({"HSET", redis::sink_key_name(k0, kGroup), "last_seq", "4"});
  w.scheduler.run_until([&] { return effects_by_seq(w, "k0").size() == 7; }, 60'000);

  std::map<std::int64_t, std::string> expected;
  for (std::int64_t seq = 1; seq <= 8; ++seq) {
    if (seq != 4) expected[seq] = w.published["k0"][seq - 1];
  }
  EXPECT_EQ(effects_by_seq(w, "k0"), expected);
  const auto resumed = w.records_of(HistoryOp::resume);
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].event_id, head);
  EXPECT_EQ(w.effects("k1"), w.published["k1"]);
  expect_no_overlap_per_key(w);
}

TEST(EngineOperate, ColdPartitionIsReapedAndAPublishAfterwardsIsServedAtAFreshGeneration) {
  World w;
  w.reap_idle_ms = 2'000;
  for (const char* owner : {"a", "b"}) w.add(owner).engine.start();
  const PartitionRef k0{kCategory, "k0"};
  w.publish({"k0"}, 3, 5);
  w.scheduler.run_until([&] { return !w.records_of(HistoryOp::reap).empty(); }, 60'000);
  ASSERT_EQ(w.records_of(HistoryOp::reap).size(), 1u);
  EXPECT_EQ(w.effects("k0"), w.published["k0"]);  // reaped only once everything was done
  EXPECT_FALSE(w.redis.key_exists(k0.stream()));
  EXPECT_FALSE(w.redis.key_exists(k0.lease()));
  redis::Reply member = w.redis.execute({"SISMEMBER", k0.index(), "k0"});
  EXPECT_EQ(member.integer, 0);
  EXPECT_TRUE(w.redis.key_exists(k0.fence())) << "the generation counter must survive a reap";
  const std::uint64_t reaped_generation = w.records_of(HistoryOp::reap)[0].generation;

  // A publish after the reap re-creates the partition; discovery finds it again.
  w.publish({"k0"}, 2, 5, 4);
  w.scheduler.run_until([&] { return w.effects("k0").size() == 5; }, 60'000);
  EXPECT_EQ(w.effects("k0"), w.published["k0"]);
  std::uint64_t generation_after = 0;
  for (const auto& r : w.records_of(HistoryOp::acquire)) {
    if (r.index > w.records_of(HistoryOp::reap)[0].index) generation_after = r.generation;
  }
  EXPECT_GT(generation_after, reaped_generation);
  expect_accepted_steps_under_latest_generation(w);
}

}  // namespace
}  // namespace seqby::sim
