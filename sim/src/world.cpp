// World: wiring, phases and instance lifecycle. The decision-order bookkeeping (stamps, the
// sink, the server's view of commits) is in world_stamps.cpp.
#include "seqby/sim/world.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/sim/faulty_link.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_runtime.h"
#include "seqby/testing/previous_release.h"
#include "world_internal.h"

namespace seqby::sim {

std::string owner_id_for(std::uint32_t instance, std::uint32_t incarnation) {
  return "i" + std::to_string(instance) + "-g" + std::to_string(incarnation);
}

namespace {

// Graceful stop of one engine; sets *done when it returns.
Task<void> stop_engine(Engine& engine, bool* done) {
  co_await engine.stop();
  *done = true;
}

}  // namespace

World::World(const SimCase& c, WorldOptions options)
    : case_(c),
      options_(options),
      server_clock_(scheduler_),
      redis_(server_clock_),
      gate_(scheduler_, redis_),
      sink_(std::make_unique<Sink>(*this)),
      observer_(std::make_unique<StampObserver>(*this)),
      recorder_(std::make_unique<FaultRecorder>(scheduler_.clock(), sink_.get())),
      plan_(case_, observer_.get()),
      rng_(Rng(c.seed).derive("world")) {
  SEQBY_CHECK(case_.instance_count >= 1);
  SEQBY_CHECK(case_.beside_group.empty() || !is_process_manager(case_));
  if (!case_.beside_group.empty()) {
    beside_plan_ = std::make_unique<HandlerPlan>(case_, observer_.get(), true);
  }
  if (options_.key_layout == KeyLayout::cluster) redis_.enable_cluster_mode();
  if (options_.cluster_shards > 0) {
    SEQBY_CHECK(options_.key_layout == KeyLayout::cluster);
    redis_.enable_cluster_nodes(options_.cluster_shards);
  }
  observer_->set_recorder(recorder_.get());
  // The beside group was deployed before the run: its subscription (what its engine SADDs before
  // it acquires anything) is in place from the start, so a reap waits for it from the first event
  // on, as the checker expects of it. A group that subscribes only later is protected only from
  // then on (docs/ARCHITECTURE.md "Operating partitions", Subscribers): with its first SADD lost,
  // seed 1470 reaped order:client-07 before the beside group ever joined it.
  if (!case_.beside_group.empty()) {
    redis_.execute({"SADD", subscribers_set_name(case_.category), case_.beside_group});
  }
  // Each stream's events and first poison seq (events_of, first_poison_seq), in one pass over
  // the case's events rather than one per stream.
  struct StreamEvents {
    std::size_t count = 0;
    std::int64_t first_poison = 0;
  };
  std::map<std::pair<std::string_view, std::string_view>, StreamEvents> streams;  // category, key
  for (const CaseEvent& e : case_.events) {
    StreamEvents& s = streams[{category_of(case_, e), e.key}];
    ++s.count;
    if (e.behaviour.poison && (s.first_poison == 0 || e.seq < s.first_poison)) {
      s.first_poison = e.seq;
    }
  }
  for (const auto& category : categories_of(case_)) {
    for (const auto& key : case_.keys) {
      const auto found = streams.find({category, key});
      const StreamEvents s = found == streams.end() ? StreamEvents{} : found->second;
      if (s.count == 0 && is_process_manager(case_)) continue;  // X has no events on C
      target_seq_[{category, key}] =
          s.first_poison > 0 ? s.first_poison - 1 : static_cast<std::int64_t>(s.count);
      if (s.first_poison > 0) poisoned_.insert({category, key});
    }
  }
  // The injector strikes the case's instances only (the schedule's targets), not the beside one.
  std::vector<SimRuntime*> runtimes;
  for (std::uint32_t i = 0; i < world_instance_count(case_); ++i) {
    instances_.push_back(std::make_unique<Instance>(scheduler_, "i" + std::to_string(i)));
    if (i < case_.instance_count) runtimes.push_back(instances_.back()->runtime.get());
  }
  publisher_ = std::make_unique<Instance>(scheduler_, "publisher");
  FaultHooks hooks;
  hooks.on_crash = [this](std::uint32_t i) { tear_down(i); };
  hooks.on_restart = [this](std::uint32_t i) {
    ++restarts_;
    bring_up(i);
  };
  injector_ = std::make_unique<FaultInjector>(scheduler_, runtimes, server_clock_, observer_.get(),
                                              std::move(hooks));
  injector_->set_server(&gate_);
  injector_->set_replace_hook(
      [this](std::uint32_t i, std::uint64_t resume_ms) { return replace(i, resume_ms); });
}

World::~World() {
  // Frames first (they point into the incarnations), then the objects they pointed at.
  for (auto& instance : instances_) instance->runtime->crash();
  for (auto& old : replaced_) old->runtime->crash();
  publisher_->runtime->crash();
  for (auto& instance : instances_) instance->live.reset();
  for (auto& old : replaced_) old->live.reset();
  publisher_->live.reset();
}

void World::bring_up(std::uint32_t i, bool same_owner) {
  Instance& instance = *instances_[i];
  SEQBY_CHECK(!instance.live);
  if (!same_owner) ++instance.incarnation;
  SEQBY_CHECK(instance.incarnation >= 1);
  const std::string owner = owner_id_for(i, instance.incarnation);
  // A replacement's link draws from streams of its own (the name of an ordinary incarnation's
  // streams is unchanged).
  const std::string streams =
      same_owner ? owner + "/replacement" + std::to_string(instance.replacements) : owner;
  SimRuntime& runtime = *instance.runtime;
  observer_->set_node(runtime.name(), owner);
  servers_.push_back(std::make_unique<StampServer>(*this, redis_, owner));
  const bool beside = i >= case_.instance_count;
  SEQBY_CHECK(!beside || beside_plan_);
  EngineOptions engine_options =
      beside ? beside_engine_options_for(case_, owner) : engine_options_for(case_, owner);
  auto inc =
      std::make_unique<Incarnation>(*this, runtime, *servers_.back(), owner,
                                    rng_.derive("link/" + streams), true, engine_options.group);
  inc->faulty->set_enabled(link_faults_on_);
  inc->handler = std::make_unique<TestHandler>(runtime, beside ? *beside_plan_ : plan_, owner);
  const bool previous_release = i < case_.previous_release_instances;
  SEQBY_CHECK(!previous_release || case_.variant == testing::Variant::correct);
  inc->engine = std::make_unique<Engine>(
      runtime, *inc->broker, *sink_, *inc->handler, std::move(engine_options),
      previous_release ? testing::previous_release_steps()
                       : testing::make_engine_steps(case_.variant));
  instance.live = std::move(inc);
  instance.live->engine->start();
}

void World::tear_down(std::uint32_t i) {
  Instance& instance = *instances_[i];
  // The runtime already destroyed every frame; now the objects they used.
  (i < case_.instance_count ? plan_ : *beside_plan_).inside().erase(owner_id(i));
  instance.live.reset();
}

SimRuntime* World::replace(std::uint32_t i, std::uint64_t resume_ms) {
  Instance& instance = *instances_[i];
  SEQBY_CHECK(instance.live);
  SEQBY_CHECK(resume_ms >= scheduler_.now_ms());
  auto old = std::make_unique<Replaced>();
  old->runtime = std::move(instance.runtime);
  old->live = std::move(instance.live);
  replaced_.push_back(std::move(old));
  const std::size_t index = replaced_.size() - 1;
  // The old process runs a lease TTL beside its replacement after it resumes: long enough for
  // its workers to try their fenced steps and its heartbeat to learn its leases are gone.
  scheduler_.call_at(resume_ms + case_.engine.lease_ttl_ms,
                     [this, index] { kill_replaced(index); });
  ++instance.replacements;
  instance.runtime = std::make_unique<SimRuntime>(
      scheduler_, instance.name + "r" + std::to_string(instance.replacements));
  bring_up(i, true);
  return instance.runtime.get();
}

void World::kill_replaced(std::size_t index) {
  // A kill inside a handler would leave its execution open in the history (a real process's
  // journal has the enter without an exit too, but then a crash record ends it, and a crash
  // record names the owner id, which the replacement shares): wait until it is out, bounded.
  constexpr std::uint32_t kKillPostponedMax = 200;
  constexpr std::uint64_t kKillPostponeMs = 50;
  Replaced& old = *replaced_.at(index);
  if (!old.live) return;
  if (old.live->handler->calls_open() > 0 && old.kill_postponed < kKillPostponedMax) {
    ++old.kill_postponed;
    scheduler_.call_at(scheduler_.now_ms() + kKillPostponeMs,
                       [this, index] { kill_replaced(index); });
    return;
  }
  old.runtime->crash();
  gate_.client_gone(old.runtime->name());
  old.live.reset();
}

void World::set_link_faults(bool enabled) {
  link_faults_on_ = enabled;
  for (auto& instance : instances_) {
    if (instance->live) instance->live->set_link_faults(enabled);
  }
  for (auto& old : replaced_) {
    if (old->live) old->live->set_link_faults(enabled);
  }
}

void World::Incarnation::set_link_faults(bool enabled) {
  faulty->set_enabled(enabled);
  for (auto& channel : wake) channel.faulty->set_enabled(enabled);
  for (auto& chain : more_nodes) chain.faulty->set_enabled(enabled);
}

std::string World::owner_id(std::uint32_t i) const {
  return owner_id_for(i, instances_.at(i)->incarnation);
}

bool World::is_down(std::uint32_t i) const { return !instances_.at(i)->live; }

std::optional<std::uint32_t> World::holder_of(const std::string& key) const {
  for (std::uint32_t i = 0; i < case_.instance_count; ++i) {
    const auto& live = instances_[i]->live;
    if (!live) continue;
    for (const auto& p : live->engine->held()) {
      if (p.key == key) return i;
    }
  }
  return std::nullopt;
}

std::optional<std::uint32_t> World::inside(const std::string& key, std::int64_t* seq,
                                           std::string* category) const {
  for (std::uint32_t i = 0; i < case_.instance_count; ++i) {
    if (!instances_[i]->live) continue;
    auto it = plan_.inside().find(owner_id(i));
    if (it != plan_.inside().end() && it->second.key == key) {
      if (seq != nullptr) *seq = it->second.seq;
      if (category != nullptr) *category = it->second.category;
      return i;
    }
  }
  return std::nullopt;
}

void World::inject(const TimedFault& fault) { injector_->inject(fault); }

std::int64_t World::accepted_seq(const std::string& key, const std::string& category) const {
  SEQBY_CHECK(!category.empty() || !is_process_manager(case_));
  auto it = accepted_seq_.find({case_.group, category.empty() ? case_.category : category, key});
  return it == accepted_seq_.end() ? 0 : it->second;
}

bool World::all_committed() const {
  if (!publisher_done_) return false;
  for (const std::string& group : groups_of(case_)) {
    for (const auto& [stream, target] : target_seq_) {
      auto it = accepted_seq_.find({group, stream.first, stream.second});
      if ((it == accepted_seq_.end() ? 0 : it->second) < target) return false;
    }
    // A poisoned stream is done once its poison head halted it, not when the events before it
    // were committed (with the poison event first, that is at once: nothing would be checked).
    for (const StreamRef& stream : poisoned_) {
      if (halted_.count({group, stream.first, stream.second}) == 0) return false;
    }
  }
  return true;
}

FaultCounters World::faults() const { return recorder_->counters(); }

WorldStats World::stats() const {
  WorldStats s;
  s.events_published = events_published_;
  for (const auto& [stream, seq] : accepted_seq_) {
    // The case's group's: a beside group commits the same events again.
    if (std::get<0>(stream) == case_.group) s.events_committed += static_cast<std::uint64_t>(seq);
  }
  s.sim_ms = scheduler_.now_ms();
  s.scheduler_steps = scheduler_.step_count();
  s.redis_commands = sink_->command_count();
  s.handler_calls = plan_.calls() + (beside_plan_ ? beside_plan_->calls() : 0);
  s.restarts = restarts_;
  s.slot_migrations = slot_migrations_;
  s.failovers = failovers_;
  s.lossy_failovers = lossy_failovers_;
  s.redirections = redis_.redirections();
  s.liveness_reached = liveness_reached_;
  s.liveness_ms_used = liveness_ms_used_;
  return s;
}

// --- phases ---------------------------------------------------------------------------------

void World::start() {
  SEQBY_CHECK(!started_);
  started_ = true;
  sink_->reserve(case_.events.size() * 8 + 1024);
  sink_->record_header();
  publisher_->live = std::make_unique<Incarnation>(
      *this, *publisher_->runtime,
      *servers_.emplace_back(std::make_unique<StampServer>(*this, redis_, std::string())),
      std::string(), rng_.derive("link/publisher"), false, case_.group);
  for (std::uint32_t i = 0; i < instances_.size(); ++i) bring_up(i);
  publisher_->runtime->spawn("publisher", publish_all());
  injector_->apply(case_.schedule);
  if (options_.cluster_shards >= 1) {
    migration_rng_ = std::make_unique<Rng>(rng_.derive("slot-migrations"));
    schedule_slot_migration(migration_rng_->uniform(200, 2'000));
  }
}

// Every 0.2-2 s of the active phase, one of three: a slot migration (3 in 4), the slot of a drawn
// key of the case (its stream, lease, sink and journal share it) to a drawn other shard, one key
// per 1-5 ms (as `redis-cli --cluster reshard` moves a slot with MIGRATE), then SETSLOT NODE; a
// CLUSTER FAILOVER of a drawn shard (1 in 8: its replica, in sync, takes over: nothing is lost;
// the old master answers MOVED; the new one has no scripts); or a lossy failover of a drawn
// shard (1 in 8: lag_then_fail_over). One at a time; one under way when the active phase ends is
// finished.
void World::schedule_slot_migration(std::uint64_t at_ms) {
  if (at_ms >= case_.run_ms || case_.keys.empty()) return;
  scheduler_.call_at(at_ms, [this] {
    Rng& rng = *migration_rng_;
    if (rng.below(4) == 0) {
      const auto shard = static_cast<std::uint32_t>(rng.below(redis_.shard_count()));
      if (rng.below(2) == 0 &&
          (options_.lossy_failover_beside_replacement || !schedules_a_replacement())) {
        lag_then_fail_over(shard);
        return;
      }
      promote(shard);
      return;
    }
    if (redis_.shard_count() < 2) {  // nowhere to migrate to
      schedule_slot_migration(scheduler_.now_ms() + rng.uniform(200, 2'000));
      return;
    }
    const std::string& key = case_.keys[rng.below(case_.keys.size())];
    const std::string category = categories_of(case_).front();
    const std::uint16_t slot =
        key_hash_slot(PartitionRef{category, key, KeyLayout::cluster}.stream());
    const std::uint32_t from = redis_.shard_of_slot(slot);
    const auto to = static_cast<std::uint32_t>((from + 1 + rng.below(redis_.shard_count() - 1)) %
                                               redis_.shard_count());
    SEQBY_CHECK(redis_.begin_slot_migration(slot, to));
    record_cluster_fault("slot_migration slot=" + std::to_string(slot) + " key=" + key +
                         " from=" + std::to_string(from) + " to=" + std::to_string(to) + " begin");
    scheduler_.call_at(scheduler_.now_ms() + rng.uniform(1, 5), [this] { migrate_step(); });
  });
}

void World::promote(std::uint32_t shard) {
  redis_.promote_replica(shard);
  ++failovers_;
  record_cluster_fault("failover shard=" + std::to_string(shard) +
                       " master=" + SimRedis::node_address(redis_.master_of_shard(shard)));
  schedule_slot_migration(scheduler_.now_ms() + migration_rng_->uniform(200, 2'000));
}

// Whether the case runs two processes under one owner id (a stall_replace).
bool World::schedules_a_replacement() const {
  return std::any_of(case_.schedule.faults.begin(), case_.schedule.faults.end(),
                     [](const TimedFault& f) { return f.kind == FaultKind::stall_replace; });
}

// The shard's replica stops receiving writes for 50-1500 ms while its master acknowledges them
// (a replication link down, a replica stalled); then the master dies: the shard's keys become
// what the replica has (lose_lagged_writes), the dead master's connections close and refuse
// until the cluster elects the replica 100-1000 ms later (node timeout), and the replica takes
// over. The two markers around the lost writes (spelled as properties/markers.h's
// replica_lag_record and lossy_failover_record spell them: sim does not link properties) tell the
// checker what the failover undid, for the keys of the case the shard served and the categories
// whose index it served.
void World::lag_then_fail_over(std::uint32_t shard) {
  redis_.begin_replica_lag(shard);
  const std::string category = categories_of(case_).front();
  std::vector<std::string> keys;
  for (const std::string& key : case_.keys) {
    const PartitionRef partition{category, key, KeyLayout::cluster};
    if (redis_.shard_of_slot(key_hash_slot(partition.stream())) == shard) keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::string listed;
  for (const std::string& key : keys) listed += (listed.empty() ? "" : ",") + key;
  // The categories whose index the shard serves: a publish that (re)indexed a key in the lag is
  // undone there even when its entry, on another shard, stays.
  std::string indexes;
  for (const std::string& indexed : categories_of(case_)) {
    if (redis_.shard_of_slot(key_hash_slot(partition_index_name(indexed))) != shard) continue;
    indexes += (indexes.empty() ? "" : ",") + indexed;
  }
  record_cluster_fault("replica_lag shard=" + std::to_string(shard) + " keys=" + listed +
                       (indexes.empty() ? "" : " indexes=" + indexes) + " begin");
  lagging_keys_ = std::move(keys);
  lag_begin_key_ = sink_->now_key();
  const std::uint64_t lag_ms = migration_rng_->uniform(50, 1'500);
  scheduler_.call_at(scheduler_.now_ms() + lag_ms, [this, shard] {
    const std::uint32_t master = redis_.master_of_shard(shard);
    record_cluster_fault("lossy_failover shard=" + std::to_string(shard) +
                         " master=" + SimRedis::node_address(master));
    redis_.lose_lagged_writes(shard);
    take_back_accepted(lagging_keys_);
    sink_->note_lossy_failover(lag_begin_key_, std::move(lagging_keys_));
    ++lossy_failovers_;
    const std::uint64_t down_ms = migration_rng_->uniform(100, 1'000);
    // Promoted before the dead node's held commands run (the same due time, queued first): they
    // reach it as a replica and are redirected.
    scheduler_.call_at(scheduler_.now_ms() + down_ms, [this, shard] { promote(shard); });
    SEQBY_CHECK(gate_.node_down(master, down_ms));
  });
}

// The commits a lossy failover undid are not accepted any more: each lane of `keys` is back at
// the last seq its sink kept, so the liveness phase waits for them to be made again.
void World::take_back_accepted(const std::vector<std::string>& keys) {
  for (auto& [lane, seq] : accepted_seq_) {
    const auto& [group, category, key] = lane;
    if (!std::binary_search(keys.begin(), keys.end(), key)) continue;
    const PartitionRef partition{category, key, KeyLayout::cluster};
    const redis::Reply kept = redis_.execute({"HGET", sink_key_name(partition, group), "last_seq"});
    std::int64_t last = 0;
    if (kept.kind == redis::Reply::Kind::bulk) last = std::stoll(kept.str);
    seq = std::min(seq, last);
  }
}

void World::migrate_step() {
  Rng& rng = *migration_rng_;
  if (redis_.migrate_one_key()) {
    scheduler_.call_at(scheduler_.now_ms() + rng.uniform(1, 5), [this] { migrate_step(); });
    return;
  }
  redis_.end_slot_migration();
  ++slot_migrations_;
  record_cluster_fault("slot_migration end");
  schedule_slot_migration(scheduler_.now_ms() + rng.uniform(200, 2'000));
}

void World::record_cluster_fault(std::string detail) {
  HistoryRecord record;
  record.time_ms = scheduler_.now_ms();
  record.op = HistoryOp::fault;
  record.detail = std::move(detail);
  sink_->record(std::move(record));
}

void World::run_active() { scheduler_.run_until(case_.run_ms); }

bool World::run_until(const std::function<bool()>& done, std::uint64_t limit_ms) {
  scheduler_.run_until(done, limit_ms);
  return done();
}

void World::run_liveness() {
  const std::uint64_t start_ms = scheduler_.now_ms();
  sink_->record_liveness_marker();
  injector_->stop();
  set_link_faults(false);
  // Not while a replica lags: its failover, still to come, may undo commits all_committed counts
  // (seed 602287 of the cluster layout: the run ended in a lag, and the failover after it undid a
  // process manager's last eight commits).
  liveness_reached_ = run_until([this] { return !redis_.replica_lagging() && all_committed(); },
                                start_ms + case_.liveness_ms);
  liveness_ms_used_ = scheduler_.now_ms() - start_ms;
}

void World::stop_engines() {
  std::vector<std::unique_ptr<bool>> done;
  for (auto& instance : instances_) {
    if (!instance->live) continue;
    done.push_back(std::make_unique<bool>(false));
    instance->runtime->spawn("stop", stop_engine(*instance->live->engine, done.back().get()));
  }
  const auto all_done = [&done] {
    return std::all_of(done.begin(), done.end(), [](const auto& d) { return *d; });
  };
  scheduler_.run_until(all_done, scheduler_.now_ms() + case_.engine.stop_wait_max_ms + 10'000);
}

void World::run() {
  start();
  run_active();
  run_liveness();
  stop_engines();
}

Task<void> World::publish_all() {
  Runtime& rt = *publisher_->runtime;
  redis::RedisBroker& broker = *publisher_->live->broker;
  for (const CaseEvent& e : case_.events) {
    const std::uint64_t now = rt.clock().now_ms();
    if (e.at_ms > now) co_await rt.sleep_ms(e.at_ms - now);
    const PartitionRef partition{category_of(case_, e), e.key};
    const std::string data = event_data_json(e.key, e.seq);
    for (std::uint32_t attempt = 1;; ++attempt) {
      Result<std::string> id = co_await broker.publish(partition, e.type, data);
      if (id.ok()) {
        ++events_published_;
        HistoryRecord r;
        r.time_ms = rt.clock().now_ms();
        r.op = HistoryOp::publish;
        r.category = partition.category;
        r.key = e.key;
        r.event_id = id.value();
        r.seq = e.seq;
        if (e.behaviour.poison) r.detail = "poison";
        sink_->record(std::move(r));
        break;
      }
      // The publisher's link has no faults: a failure here is a simulator bug.
      SEQBY_CHECK(attempt < 10 && "the publisher could not publish");
      co_await rt.sleep_ms(10);
    }
  }
  publisher_done_ = true;
}

}  // namespace seqby::sim
