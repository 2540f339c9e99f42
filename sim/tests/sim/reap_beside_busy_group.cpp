// A reap while another group has an entry in flight (issue 18), reached by chance in a seeded
// campaign: a handler group `billing` that reaps cold partitions (reap_idle_ms 500) beside the
// process manager `fulfil` on category order, over one SimRedis running the very Lua scripts
// real Redis runs. Each seed draws bursts of events on four keys, separated by idle gaps around
// the reap time, and which events fulfil's handler is slow on (1 to 3 s, well past billing's reap
// time): billing acks such an event and goes idle while fulfil has been delivered it and not
// acked it. Asserted per seed: both groups commit every event exactly once and in order (a reap
// that went ahead would have deleted fulfil's entry with the stream), and the history checker
// finds no violation. Asserted over the campaign: the situation was reached
// (Reached::reap_refused_for_other_group, counted from the histories as campaigns count it) and
// partitions were reaped after all.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"
#include "seqby/properties/markers.h"
#include "seqby/properties/reached.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {
namespace {

constexpr const char* kCategory = "order";
constexpr const char* kBilling = "billing";  // the handler group, which reaps
constexpr const char* kFulfil = "fulfil";    // the process manager, slow on some events
constexpr std::uint64_t kReapIdleMs = 500;
constexpr std::uint64_t kSeedFirst = 1;
constexpr std::uint64_t kSeedLast = 12;

std::int64_t seq_of(const std::string& data) {
  const std::string field = "\"seq\":";
  const auto at = data.find(field);
  SEQBY_CHECK(at != std::string::npos);
  return std::stoll(data.substr(at + field.size()));
}

// Commits each event's seq with its id as the effect after its drawn time: 10 ms, or for the
// slow group on a drawn third of the events 1 to 3 s.
class DrawnTimeHandler final : public Handler {
 public:
  DrawnTimeHandler(Runtime& runtime, Rng rng, bool slow)
      : runtime_(runtime), rng_(std::move(rng)), slow_(slow) {}

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override {
    const std::int64_t seq = seq_of(event.data);
    Rng draw = rng_.derive(event.category + ":" + event.key + ":" + std::to_string(seq));
    const bool slow_here = slow_ && draw.below(3) == 0;
    const std::uint64_t ms = slow_here ? draw.uniform(1000, 3000) : 10;
    co_await runtime_.sleep_ms(ms);
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
  Rng rng_;
  bool slow_;
};

EngineOptions options_for(const std::string& owner, bool process_manager) {
  EngineOptions o;
  o.owner_id = owner;
  o.lease_ttl_ms = 5000;  // the slow events stay inside the lease: no failover muddles the count
  o.heartbeat_interval_ms = 1000;
  o.discovery_interval_ms = 250;
  o.poll_interval_ms = 20;
  o.retry_count_max = 3;
  o.retry_backoff_ms = 50;
  if (process_manager) {
    o.group = kFulfil;
    o.pm_categories = {kCategory};
  } else {
    o.category = kCategory;
    o.group = kBilling;
    o.reap_idle_ms = kReapIdleMs;
  }
  return o;
}

struct Instance {
  Instance(Scheduler& scheduler, SimServer& server, HistorySink& history, const Rng& root,
           EngineOptions options, bool slow)
      : runtime(scheduler, options.owner_id),
        link(runtime, server, root.derive("link/" + options.owner_id)),
        broker(link),
        handler(runtime, root.derive("handler/" + options.owner_id), slow),
        engine(runtime, broker, history, handler, std::move(options)) {}
  SimRuntime runtime;
  SimRedisLink link;
  redis::RedisBroker broker;
  DrawnTimeHandler handler;
  Engine engine;
};

struct SeedRun {
  std::uint64_t waits = 0;  // Reached::reap_refused_for_other_group
  std::uint64_t reaps = 0;
  std::uint64_t published = 0;
};

class SeedWorld {
 public:
  explicit SeedWorld(std::uint64_t seed) : root_(Rng(seed).derive("reap_beside_busy_group")) {
    billing_ = std::make_unique<Instance>(scheduler_, server_, history_, root_,
                                          options_for("h", false), false);
    fulfil_ = std::make_unique<Instance>(scheduler_, server_, history_, root_,
                                         options_for("pm", true), true);
  }
  ~SeedWorld() {
    if (::testing::Test::HasFailure()) {
      std::fprintf(stderr, "%s", properties::history_to_jsonl(history_.records()).c_str());
    }
    billing_->runtime.crash();
    fulfil_->runtime.crash();
    publisher_runtime_.crash();
  }

  SeedRun go() {
    // The run header tells the checker that fulfil is a process manager (its lease unit is the
    // correlation value across its categories).
    properties::RunHeader header;
    header.process_managers = {kFulfil};
    header.pm_categories[kFulfil] = {kCategory};
    history_.record(properties::run_header_record(header));
    billing_->engine.start();
    fulfil_->engine.start();
    publisher_runtime_.spawn("publisher", publish_all());
    scheduler_.run_until(
        [this] { return done_ && committed_by(kBilling) && committed_by(kFulfil); }, 120'000);
    EXPECT_TRUE(done_ && committed_by(kBilling) && committed_by(kFulfil))
        << "not every event was committed by both groups";
    scheduler_.run_until(scheduler_.now_ms() + 4 * kReapIdleMs);  // the last reaps
    for (const auto& [key, ids] : published_) {
      EXPECT_EQ(effects(key, kBilling), ids) << "billing's sink of order:" << key;
      EXPECT_EQ(effects(key, kFulfil), ids) << "fulfil's sink of order:" << key;
    }
    properties::CheckOptions check;
    check.skip = {properties::Property::parallel};  // one instance per group
    const properties::CheckReport report = properties::check_history(history_.records(), check);
    EXPECT_TRUE(report.violations.empty()) << properties::render_report_text(report);
    SeedRun out;
    out.waits = properties::count_reached(history_.records())
                    .count(properties::Reached::reap_refused_for_other_group);
    out.reaps = properties::count_reap_races(history_.records()).reaps;
    out.published = published_count_;
    return out;
  }

 private:
  // Four keys, each in bursts of 1 or 2 events, with idle gaps around the reap time.
  Task<void> publish_all() {
    Rng draw = root_.derive("publish");
    const std::vector<std::string> keys = {"A", "B", "C", "D"};
    std::map<std::string, std::int64_t> seqs;
    for (int burst = 0; burst < 24; ++burst) {
      const std::string& key = keys[draw.below(keys.size())];
      const std::uint64_t count = draw.uniform(1, 2);
      for (std::uint64_t n = 0; n < count; ++n) {
        const std::int64_t seq = ++seqs[key];
        const std::string data = "{\"key\":\"" + key + "\",\"seq\":" + std::to_string(seq) + "}";
        const PartitionRef partition{kCategory, key};  // named: no temporary inside co_await
        Result<std::string> id = co_await publisher_.publish(partition, "created", data);
        SEQBY_CHECK(id.ok());
        published_[key].push_back(id.value());
        ++published_count_;
        HistoryRecord r;
        r.time_ms = publisher_runtime_.clock().now_ms();
        r.node = "publisher";
        r.op = HistoryOp::publish;
        r.category = kCategory;
        r.key = key;
        r.event_id = id.value();
        r.seq = seq;
        history_.record(std::move(r));
      }
      const std::uint64_t gap_ms = draw.uniform(kReapIdleMs / 2, 4 * kReapIdleMs);
      co_await publisher_runtime_.sleep_ms(gap_ms);
    }
    done_ = true;
  }

  std::vector<std::string> effects(const std::string& key, const std::string& group) {
    redis::Reply r =
        redis_.execute({"HGETALL", redis::effects_hash_name(PartitionRef{kCategory, key}, group)});
    std::map<std::int64_t, std::string> by_seq;
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      by_seq[std::stoll(r.elements[i].str)] = r.elements[i + 1].str;
    }
    std::vector<std::string> out;
    for (const auto& [seq, effect] : by_seq) out.push_back(effect);
    return out;
  }

  bool committed_by(const std::string& group) {
    for (const auto& [key, ids] : published_) {
      if (effects(key, group).size() != ids.size()) return false;
    }
    return true;
  }

  Rng root_;
  Scheduler scheduler_;
  ServerClock server_clock_{scheduler_};
  SimRedis redis_{server_clock_};
  ServerAdapter<SimRedis> server_{redis_};
  properties::VectorHistorySink history_;
  SimRuntime publisher_runtime_{scheduler_, "publisher"};
  SimRedisLink publisher_link_{publisher_runtime_, server_, Rng(1).derive("link/publisher")};
  redis::RedisBroker publisher_{publisher_link_};
  std::unique_ptr<Instance> billing_;
  std::unique_ptr<Instance> fulfil_;
  std::map<std::string, std::vector<std::string>> published_;
  std::uint64_t published_count_ = 0;
  bool done_ = false;
};

TEST(ReapBesideBusyGroup, ACampaignReachesRefusedReapsAndLosesNothing) {
  SeedRun total;
  for (std::uint64_t seed = kSeedFirst; seed <= kSeedLast; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SeedRun run = SeedWorld(seed).go();
    total.waits += run.waits;
    total.reaps += run.reaps;
    total.published += run.published;
    if (::testing::Test::HasFailure()) break;
  }
  std::printf(
      "seeds %llu..%llu: published %llu, reaps %llu, reap_refused_for_other_group=%llu\n",
      static_cast<unsigned long long>(kSeedFirst), static_cast<unsigned long long>(kSeedLast),
      static_cast<unsigned long long>(total.published),
      static_cast<unsigned long long>(total.reaps), static_cast<unsigned long long>(total.waits));
  EXPECT_GT(total.waits, 0u) << "no seed reached a reap refused for the other group";
  EXPECT_GT(total.reaps, 0u) << "nothing was ever reaped: the campaign tests no reap at all";
}

}  // namespace
}  // namespace seqby::sim
