// The World's private parts: one instance's objects, and the decision-order machinery.
//
// Decision order: every command the server runs gets a stamp (a world-wide counter). The link
// chain of an incarnation is OuterStampLink -> FaultyLink -> InnerStampLink -> SimRedisLink ->
// StampServer. The inner link learns the stamp of its command (the link is FIFO: its k-th command
// is its server's k-th execution) and leaves it for the calling task; the outer link, when a reply
// does come through, publishes that stamp as the node's decision stamp right before returning to
// the broker, and the engine records synchronously after the broker returns. So a record about a
// broker reply is sorted to where its command ran; every other record to "now".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seqby/broker/cluster_link.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine.h"
#include "seqby/sim/faulty_link.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_runtime.h"
#include "seqby/sim/world.h"

namespace seqby::sim {

// An accepted fenced_commit or fenced_ack as the server saw it.
struct ServerDecision {
  HistoryOp op = HistoryOp::commit;  // commit or ack
  std::string event_id;              // ack: the entry acknowledged
  std::uint64_t stamp = 0;
  std::uint64_t time_ms = 0;
  std::string token;  // O:N
  std::string category;
  std::string key;
  std::string group;
  std::int64_t seq = 0;
  std::string effect;
};

// The history sink: keeps (sort key, arrival, record) and sorts at the end.
class World::Sink final : public HistorySink {
 public:
  explicit Sink(World& world) : world_(world) {}
  void record(HistoryRecord record) override;
  void reserve(std::size_t records) { pending_.reserve(records); }
  void record_header();
  void record_liveness_marker();

  // Stamps.
  std::uint64_t next_stamp() { return ++stamp_count_; }
  std::uint64_t command_count() const { return stamp_count_; }
  // Where the node's decision stamp is kept (stable for the sink's life); kNoDecision until the
  // node's first reply or failure.
  static constexpr std::uint64_t kNoDecision = UINT64_MAX;
  std::uint64_t* decision_slot(const std::string& node) {
    return &decision_stamp_.try_emplace(node, kNoDecision).first->second;
  }
  void add_server_commit(ServerDecision commit) { server_commits_.push_back(std::move(commit)); }
  // The sort key a record made now gets.
  std::uint64_t now_key() const { return 2 * stamp_count_; }
  // A lossy failover of the shard serving partition keys `keys` happens now, undoing their writes
  // since sort key `lag_begin_key`: a commit or ack undone and made again after it is a decision
  // of its own.
  void note_lossy_failover(std::uint64_t lag_begin_key, std::vector<std::string> keys) {
    lossy_failovers_.push_back(LossyFailover{lag_begin_key, now_key(), std::move(keys)});
  }
  // Under the cluster layout one call may be several scripts (per-slot acquire_many and
  // renew_many batches, the three steps of a publish), and the records of a call are made once
  // it has returned. The links note each command of a task (its root's context) with the hash
  // tags of the keys it named and its sort key, and which task a reply resumes last: a decision
  // record is sorted to the newest command of its task that named its partition's tag.
  void note_tagged_command(void* context, std::vector<std::string> tags, std::uint64_t sort_key);
  // The hash tags of the keys `command` names (a script's KEYS, any other command's first
  // argument).
  static std::vector<std::string> hash_tags(const redis::Command& command);

  std::vector<HistoryRecord> take();

 private:
  struct Pending {
    std::uint64_t sort_key;
    HistoryRecord record;
  };
  World& world_;
  std::uint64_t stamp_count_ = 0;
  std::map<std::string, std::uint64_t> decision_stamp_;
  struct TaggedCommand {
    std::vector<std::string> tags;  // the hash tags of the keys it named
    std::uint64_t sort_key;
  };
  static constexpr std::size_t kRecentTagged = 32;  // per task, newest last
  std::map<void*, std::vector<TaggedCommand>> recent_tagged_;
  void* resumed_context_ = nullptr;  // the task the last reply resumed
  std::vector<Pending> pending_;
  std::vector<ServerDecision> server_commits_;
  struct LossyFailover {
    std::uint64_t begin_key;        // the lag's start
    std::uint64_t end_key;          // the failover
    std::vector<std::string> keys;  // sorted
  };
  std::vector<LossyFailover> lossy_failovers_;  // in order
  // Whether a decision about partition key `key` at sort key `decided` was undone by a lossy
  // failover that ended before sort key `again`.
  bool undone_before(std::string_view key, std::uint64_t decided, std::uint64_t again) const;
};

// One incarnation's (or the publisher's) server endpoint: stamps each command it forwards.
class World::StampServer final : public SimServer {
 public:
  StampServer(World& world, SimRedis& redis, std::string node);
  redis::Reply execute(const redis::Command& command) override;
  // A command that never ran keeps its place (stamp 0): the link's k-th command stays the k-th.
  void refused(const redis::Command&) override { stamps_.push_back(0); }
  // The stamp of this server's k-th execution (0-based). REQUIRES: it ran.
  std::uint64_t stamp_at(std::uint64_t k) const { return stamps_.at(k); }
  // With cluster nodes (WorldOptions::cluster_shards): this endpoint is one connection's to
  // `node`, its commands run there (SimRedis::execute_on_node), and a command sent as
  // {"ASKING", command...} (NodeLink::execute_asking) runs after ASKING.
  void set_cluster_node(std::uint32_t node) { cluster_node_ = static_cast<std::int32_t>(node); }
  const std::string& node() const { return node_; }

 private:
  World& world_;
  SimRedis& redis_;
  std::string node_;
  std::int32_t cluster_node_ = -1;
  std::vector<std::uint64_t> stamps_;
};

// Maps instance runtime names ("i0") to the current owner id ("i0-g2") for fault records, and
// forwards to the FaultRecorder.
class World::StampObserver final : public FaultObserver {
 public:
  explicit StampObserver(World& world) : world_(world) {}
  void set_recorder(FaultRecorder* recorder) { recorder_ = recorder; }
  void set_node(const std::string& runtime_name, const std::string& owner) {
    names_[runtime_name] = owner;
  }
  void on_fault(FaultKind kind, std::string_view node, std::string_view detail) override;

 private:
  World& world_;
  FaultRecorder* recorder_ = nullptr;
  std::map<std::string, std::string, std::less<>> names_;
};

// The stamp each task's last successful run of a command got, across an incarnation's
// connections (one, or one per cluster node: a command redirected or preceded by CLUSTER SLOTS
// ends on the connection whose reply it returns). Keyed by the task and the command (its
// command_key): one task may have several commands in flight at once (when_all: the heartbeat's
// announce beside its renewals, under the task's one context), and a reply held up on its way
// back must not take the stamp of another command that completed first.
class World::TaskStamps {
 public:
  // What tells a task's commands in flight apart: a key mixed from the command's name and first
  // three arguments (script sha, key count, first key), a leading ASKING left out.
  static std::uint64_t command_key(const redis::Command& command);
  void put(void* context, std::uint64_t command, std::uint64_t stamp);
  // 0 if none.
  std::uint64_t take(void* context, std::uint64_t command);

 private:
  // Per task at most this many stamps no outer call took yet (a cluster link's own commands,
  // CLUSTER SLOTS or a SCRIPT LOAD on a new master, are stamped and never taken).
  static constexpr std::size_t kUntakenPerTaskMax = 4;
  struct Stamp {
    void* context;
    std::uint64_t command;
    std::uint64_t stamp;
    std::uint64_t put_seq;
  };
  std::vector<Stamp> stamps_;  // a few tasks, a few commands each: a flat list
  std::uint64_t puts_ = 0;
};

class World::InnerStampLink final : public redis::RedisLink {
 public:
  InnerStampLink(redis::RedisLink& inner, StampServer& server, TaskStamps& stamps)
      : inner_(inner), server_(server), stamps_(stamps) {}
  Task<Result<redis::Reply>> execute(redis::Command command) override;

 private:
  redis::RedisLink& inner_;
  StampServer& server_;
  TaskStamps& stamps_;
  std::uint64_t sent_ = 0;
};

// One cluster node's connection as the ClusterLink sees it: ASKING travels with its command.
class World::NodeLink final : public redis::ClusterNodeLink {
 public:
  explicit NodeLink(redis::RedisLink& inner) : inner_(inner) {}
  Task<Result<redis::Reply>> execute(redis::Command command) override;
  Task<Result<redis::Reply>> execute_asking(redis::Command command) override;

 private:
  redis::RedisLink& inner_;
};

class World::OuterStampLink final : public redis::RedisLink {
 public:
  OuterStampLink(World& world, redis::RedisLink& inner, TaskStamps& stamps, std::string node)
      : world_(world),
        inner_(inner),
        stamps_(stamps),
        node_(std::move(node)),
        decision_stamp_(world_.sink_->decision_slot(node_)) {}
  Task<Result<redis::Reply>> execute(redis::Command command) override;

 private:
  World& world_;
  redis::RedisLink& inner_;
  TaskStamps& stamps_;
  std::string node_;
  std::uint64_t* decision_stamp_;  // the sink's slot for node_
};

// One engine incarnation (or the publisher, without faults, handler or engine) of `group`.
struct World::Incarnation {
  Incarnation(World& world, SimRuntime& runtime, StampServer& server, const std::string& node,
              Rng rng, bool with_faults, const std::string& group);

  TaskStamps stamps;
  std::unique_ptr<SimRedisLink> link;
  std::unique_ptr<InnerStampLink> inner;
  std::unique_ptr<FaultyLink> faulty;  // null for the publisher
  // With cluster nodes: the ClusterLink over one chain per node it connects to (the first, to
  // the seed node, is link/inner/faulty above).
  struct NodeChain {
    std::unique_ptr<SimRedisLink> link;
    std::unique_ptr<InnerStampLink> inner;
    std::unique_ptr<FaultyLink> faulty;
  };
  std::vector<NodeChain> more_nodes;
  bool seed_connected = false;
  std::unique_ptr<redis::ClusterLink> cluster;
  void set_link_faults(bool enabled);
  // The engine's wake links, one per wake channel used (Broker::wake_channels): each a
  // connection of its own ("i0/wake", then "i0/wake#1", ...), straight to SimRedis (a wake-up is
  // no decision: no stamp), with its own latency and fault sub-streams. None for the publisher.
  struct WakeChannel {
    std::unique_ptr<SimRedisLink> link;
    std::unique_ptr<FaultyLink> faulty;
  };
  std::vector<WakeChannel> wake;
  void add_wake_channel(World& world, SimRuntime& runtime, const Rng& rng, const std::string& node);
  std::unique_ptr<OuterStampLink> outer;
  std::unique_ptr<redis::RedisBroker> broker;
  std::unique_ptr<TestHandler> handler;
  std::unique_ptr<Engine> engine;
};

struct World::Instance {
  Instance(Scheduler& scheduler, const std::string& name)
      : name(name), runtime(std::make_unique<SimRuntime>(scheduler, name)) {}
  std::string name;                     // "i0": its first runtime's name
  std::unique_ptr<SimRuntime> runtime;  // its current process ("i0", then "i0r1", ... after a
                                        // stall_replace)
  std::uint32_t incarnation = 0;
  std::uint32_t replacements = 0;     // stall_replaces so far
  std::unique_ptr<Incarnation> live;  // null while down
};

// The process a stall_replace left behind: stalled, then running beside its replacement under
// the same owner id until the world kills it (a lease TTL after it resumed, once it is not inside
// a handler, so that its executions end in the history as they do in a real process's journal).
struct World::Replaced {
  std::unique_ptr<SimRuntime> runtime;
  std::unique_ptr<Incarnation> live;  // null once killed
  std::uint32_t kill_postponed = 0;
};

}  // namespace seqby::sim
