// World: one simulated run of a SimCase. It builds the virtual-time Scheduler, the simulated
// server (SimRedis), one SimRuntime per engine instance plus a fault-free publisher, and per
// instance incarnation the chain SimRedisLink -> FaultyLink -> RedisBroker -> Engine with a
// TestHandler. Instance faults come from the case's schedule (FaultInjector), link faults from
// the case's rates, handler faults from the events' behaviours; every one is counted and recorded.
// A stall_replace runs two processes under one owner id for a while: the stalled one, which
// resumes and is killed a lease TTL later, and its replacement, which stands for the instance.
//
// The history it returns stands in the order the server DECIDED things (what the checker
// assumes): a record made right after a broker reply is placed where the server ran that command,
// not where its reply arrived (a stalled instance may get a reply seconds later). A commit the
// effect sink accepted but whose reply never reached its instance (it crashed, or the reply was
// lost and no retry told it) is recorded by the world, marked as such. Same case => same history,
// byte for byte. It does not judge the history: see scenarios/run.h.
//
// A process-manager case (SimCase::pm_categories) runs the same way: each event is published to
// its stream category:key, the engines are the process manager's instances, and whatever the
// world tracks per event or commit is kept per stream (category, key); a key is a correlation
// value, held as one unit across its categories. The run header names the process manager and
// its categories ("run pm=G:order+payment ...", properties/markers.h).
//
// A case with a beside group (SimCase::beside_group) runs one more instance, after the case's
// (index instance_count): the process manager beside the case's group, on its own handler plan.
// No scheduled instance fault strikes it; the world waits for both groups' commits, and the
// instance queries below (holder_of, inside) answer for the case's group only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/core/keyspace.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/server_gate.h"
#include "seqby/sim/sim_case.h"
#include "seqby/sim/sim_redis.h"
#include "seqby/sim/test_handler.h"

namespace seqby::sim {

// The owner id of `instance` in its `incarnation` (1, 2, ...): "i0-g1". No colon.
std::string owner_id_for(std::uint32_t instance, std::uint32_t incarnation);

struct WorldStats {
  std::uint64_t events_published = 0;
  std::uint64_t events_committed = 0;  // accepted by the effect sink (server side)
  std::uint64_t sim_ms = 0;            // virtual time at the end
  std::uint64_t scheduler_steps = 0;
  std::uint64_t redis_commands = 0;
  std::uint64_t handler_calls = 0;
  std::uint64_t restarts = 0;
  std::uint64_t slot_migrations = 0;    // finished (WorldOptions::cluster_shards)
  std::uint64_t failovers = 0;          // replicas promoted (WorldOptions::cluster_shards)
  std::uint64_t lossy_failovers = 0;    // of them, after a lag and their master's death
  SimRedis::Redirections redirections;  // what the cluster's nodes answered instead
  bool liveness_reached = false;        // every committable event was committed in time
  std::uint64_t liveness_ms_used = 0;   // how long the liveness phase took
};

// How a World runs beyond its case (not part of a saved case: it changes no decision).
struct WorldOptions {
  // > 0: every instance's broker keeps the decision journal (RedisBrokerOptions::journal_maxlen)
  // in the simulated server, as a real worker with --journal-maxlen does. The commands then carry
  // the journal's arguments, so the run's history is not the journal-free run's.
  std::uint64_t journal_maxlen = 0;
  // KeyLayout::cluster: every broker spells its keys in the cluster layout
  // (RedisBrokerOptions::key_layout) and the simulated server runs in cluster mode
  // (SimRedis::enable_cluster_mode: a script or command spanning hash slots is refused as Redis
  // Cluster refuses it). The commands then carry other names, so the history is not the flat one.
  KeyLayout key_layout = KeyLayout::flat;
  // > 0 (REQUIRES the cluster layout): the server is a cluster of this many shards
  // (SimRedis::enable_cluster_nodes), every broker reaches it through a ClusterLink (the real
  // one, seqby/broker/cluster_link.h) over one simulated connection per node, with no wake
  // links (the engine polls, as a worker on a real cluster). During the active phase, slots
  // migrate (from 2 shards on: a drawn lane's slot, key by key: MOVED, ASK and TRYAGAIN
  // meanwhile) and shards fail over (CLUSTER FAILOVER: the replica in sync takes over), each a
  // `fault` record ("slot_migration ...", "failover ..."). Histories are not the one-server
  // cluster layout's.
  std::uint32_t cluster_shards = 0;
  // With cluster_shards: a lossy failover is drawn also in a case whose schedule has a
  // stall_replace (two processes under one owner id). Off: such a case's lossy failovers are
  // clean ones instead, since a failover that undoes an acquire can give that owner's token
  // again, and with one owner id in two processes the stalled one then holds the replacement's
  // token (docs/ARCHITECTURE.md "What a failover keeps": fence): the documented hole, not a
  // finding. On for the test that shows the hole is real.
  bool lossy_failover_beside_replacement = false;
};

class World {
 public:
  // REQUIRES: c.instance_count >= 1; the case's schedule targets exist.
  explicit World(const SimCase& c, WorldOptions options = {});
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // The whole run: start(), run_active(), run_liveness(), stop_engines().
  void run();

  // Phases, for drivers that act between them (scenarios).
  void start();       // run header, engines, publisher, fault schedule
  void run_active();  // until case.run_ms
  // Runs until `done()` holds or global time `limit_ms`; false when the limit came first.
  bool run_until(const std::function<bool()>& done, std::uint64_t limit_ms);
  void run_liveness();  // faults off, everyone up; until all_committed() or bound
  void stop_engines();  // graceful stop of every live engine (bounded)

  // The history in decision order, indices 0, 1, 2, ... (call once, after the run).
  std::vector<HistoryRecord> take_history();

  // --- for scenarios and reports ---
  const SimCase& sim_case() const { return case_; }
  Scheduler& scheduler() { return scheduler_; }
  SimRedis& redis() { return redis_; }
  HandlerPlan& plan() { return plan_; }
  std::uint64_t now_ms() const { return scheduler_.now_ms(); }
  std::string owner_id(std::uint32_t instance) const;
  bool is_down(std::uint32_t instance) const;
  // The instance whose live engine holds `key` (not halted-aware), if any; a process manager's:
  // the instance holding correlation value `key`'s lease.
  std::optional<std::uint32_t> holder_of(const std::string& key) const;
  // The instance whose handler is inside an event of `key` (any category) right now, if any;
  // fills the event's seq and category when asked.
  std::optional<std::uint32_t> inside(const std::string& key, std::int64_t* seq = nullptr,
                                      std::string* category = nullptr) const;
  // Applies an instance fault now (recorded and counted like a scheduled one).
  void inject(const TimedFault& fault);
  // Seq of the last commit the effect sink accepted for stream `category`:`key` of the case's
  // group (0: none). `category` "" is the case's category. REQUIRES: a process-manager case
  // names the category.
  std::int64_t accepted_seq(const std::string& key, const std::string& category = "") const;
  // Every event not behind a poison head was published and accepted by the sink, for every
  // group of the case (groups_of).
  bool all_committed() const;
  bool publisher_done() const { return publisher_done_; }
  FaultCounters faults() const;
  WorldStats stats() const;

 private:
  struct Incarnation;
  struct Instance;
  struct Replaced;
  class Sink;
  class StampServer;
  class StampObserver;
  class InnerStampLink;
  class OuterStampLink;
  class TaskStamps;
  class NodeLink;

  // A fresh engine in the instance's runtime: a new owner id, or with `same_owner` the current
  // one (a stall_replace's replacement).
  void bring_up(std::uint32_t instance, bool same_owner = false);
  void tear_down(std::uint32_t instance);
  // stall_replace (FaultInjector::set_replace_hook): the instance's process, stalled until
  // `resume_ms`, is set aside and killed later; a replacement with the same owner id starts in a
  // new runtime, which is returned.
  SimRuntime* replace(std::uint32_t instance, std::uint64_t resume_ms);
  void kill_replaced(std::size_t index);
  Task<void> publish_all();
  void set_link_faults(bool enabled);

  SimCase case_;
  WorldOptions options_;
  Scheduler scheduler_;
  ServerClock server_clock_;
  SimRedis redis_;
  ServerGate gate_;  // the server faults; every link is a connection through it
  std::unique_ptr<Sink> sink_;
  std::unique_ptr<StampObserver> observer_;
  std::unique_ptr<FaultRecorder> recorder_;
  HandlerPlan plan_;
  std::unique_ptr<HandlerPlan> beside_plan_;  // the beside group's (null without one)
  Rng rng_;
  std::vector<std::unique_ptr<StampServer>> servers_;  // kept to the end: late commands use them
  std::vector<std::unique_ptr<Instance>> instances_;
  std::unique_ptr<Instance> publisher_;
  std::vector<std::unique_ptr<Replaced>> replaced_;  // kept to the end, like servers_
  std::unique_ptr<FaultInjector> injector_;
  // Per stream (category, key), and per group and stream (group, category, key): from the
  // server's view of the sink, and what each group must have accepted in the end.
  using StreamRef = std::pair<std::string, std::string>;
  using GroupStreamRef = std::tuple<std::string, std::string, std::string>;
  std::map<GroupStreamRef, std::int64_t> accepted_seq_;
  std::map<StreamRef, std::int64_t> target_seq_;
  // The streams whose target ends at a poison event, and per group those of them whose head was
  // halted on (or moved to the DLQ, by a variant that does): the liveness phase waits for both.
  std::set<StreamRef> poisoned_;
  std::set<GroupStreamRef> halted_;
  std::uint64_t events_published_ = 0;
  std::uint64_t restarts_ = 0;
  // Cluster nodes: the slot migrations' own stream, and how many finished.
  std::unique_ptr<Rng> migration_rng_;
  std::uint64_t slot_migrations_ = 0;
  std::uint64_t failovers_ = 0;
  std::uint64_t lossy_failovers_ = 0;
  std::vector<std::string> lagging_keys_;  // the case's keys on the lagging shard (sorted)
  std::uint64_t lag_begin_key_ = 0;        // the history's sort key at the lag's start
  // Schedules the next slot migration (WorldOptions::cluster_shards), one key per step.
  void schedule_slot_migration(std::uint64_t at_ms);
  void migrate_step();
  // The shard's replica takes over now, in sync (CLUSTER FAILOVER); the next cluster event is
  // scheduled.
  void promote(std::uint32_t shard);
  // A lagging replica, its master's death, and its promotion (world.cpp).
  void lag_then_fail_over(std::uint32_t shard);
  void take_back_accepted(const std::vector<std::string>& keys);
  bool schedules_a_replacement() const;
  // A `fault` record of the world's own ("slot_migration ...", "failover ...").
  void record_cluster_fault(std::string detail);
  std::uint64_t liveness_ms_used_ = 0;
  bool liveness_reached_ = false;
  bool link_faults_on_ = true;
  bool publisher_done_ = false;
  bool started_ = false;
};

}  // namespace seqby::sim
