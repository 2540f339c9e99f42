// RedisCluster: a Redis Cluster of 3 masters and 3 replicas for one test or one chaos run
// (`seqby chaos --cluster`), on loopback ports it
// picks (each node's client port and cluster bus port chosen free, --cluster-port), no
// persistence, its files in a temporary directory. It starts the six redis-servers, waits for
// each to answer PING, runs `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`,
// then waits until every node says cluster_state:ok, agrees on the 16384 slots, every replica
// has its master's link up and has applied a write made on its master after that (its master
// streams to it); every wait is bounded and a failure says what it waited for (and
// the tail of the log of the node it concerns). It stops every node it started by pid when
// destroyed, a failed test included (and each dies with the thread that started it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/subprocess.h"

namespace seqby::scenarios {

struct RedisClusterOptions {
  std::size_t masters = 3;
  std::size_t replicas_per_master = 1;
  // cluster-node-timeout: how long a master may be unreachable before its replica takes over.
  std::uint64_t node_timeout_ms = 2000;
  std::uint64_t start_limit_ms = 60000;  // creation and the wait for cluster_state:ok, together
};

class RedisCluster {
 public:
  struct Node {
    std::uint16_t port = 0;
    std::uint16_t bus_port = 0;
    std::string id;  // CLUSTER MYID
    redis::Subprocess process;
    bool killed = false;
  };
  // How long each phase of the start took, for the test log.
  struct Timings {
    std::uint64_t spawn_ms = 0;   // six servers answering PING
    std::uint64_t create_ms = 0;  // redis-cli --cluster create
    std::uint64_t ok_ms = 0;      // until every node is ok, agrees and replicas are in sync
  };

  RedisCluster();
  explicit RedisCluster(RedisClusterOptions options);
  ~RedisCluster();
  RedisCluster(const RedisCluster&) = delete;
  RedisCluster& operator=(const RedisCluster&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  const Timings& timings() const { return timings_; }
  const std::string& dir() const { return dir_; }

  // The node connection settings of node `port` (127.0.0.1), and of the first node (a seed).
  static redis::RedisConfig config_of(std::uint16_t port);
  redis::RedisConfig seed() const { return config_of(nodes_.front().port); }

  std::vector<std::uint16_t> ports() const;
  const Node* node(std::uint16_t port) const;
  std::string id_of(std::uint16_t port) const;

  // One command on node `port` over a fresh blocking connection.
  static Result<redis::Reply> run(std::uint16_t port, const redis::Command& command);

  // The port of the master serving `slot` in node `asked_port`'s CLUSTER SLOTS (any live node
  // when 0); nullopt when no node answers or none serves it.
  std::optional<std::uint16_t> master_of_slot(std::uint16_t slot, std::uint16_t asked_port = 0);
  // The masters (ports) by the live nodes' CLUSTER NODES flags, and the replicas of `master`.
  std::vector<std::uint16_t> masters();
  std::vector<std::uint16_t> replicas_of(std::uint16_t master);

  // Until every replica of `master` has applied every write the master had made when called
  // (its INFO replication slave_repl_offset reaches the master's master_repl_offset), within
  // `limit_ms`. A WAIT on a fresh connection cannot say so: WAIT counts only the writes of its own
  // connection, and a connection that wrote nothing is answered at once.
  bool wait_replicated(std::uint16_t master, std::uint64_t limit_ms);

  // Moves `slot` from master `from` to master `to` the way `redis-cli --cluster reshard` does:
  // begin_slot_move marks it IMPORTING on `to` and MIGRATING on `from`; migrate_keys MIGRATEs
  // `keys` (of that slot, on `from`); finish_slot_move migrates what is left, in batches of
  // `batch` keys, and gives the slot to `to` on every master (`to` first, then `from`). Each is
  // false with error() naming the step that failed.
  bool begin_slot_move(std::uint16_t slot, std::uint16_t from, std::uint16_t to);
  bool migrate_keys(std::uint16_t from, std::uint16_t to, const std::vector<std::string>& keys);
  // Migrates every key `slot` still has on `from`, in batches of `batch` keys, and leaves the
  // slot migrating: a command all of whose keys have moved then meets ASK on `from`.
  bool migrate_slot_keys(std::uint16_t slot, std::uint16_t from, std::uint16_t to,
                         std::size_t batch = 1000);
  bool finish_slot_move(std::uint16_t slot, std::uint16_t from, std::uint16_t to,
                        std::size_t batch = 1000);

  // SIGKILLs node `port` and reaps it (a crash); it stays down until restart().
  void kill(std::uint16_t port);
  // A crash of master `master` that loses no write it accepted: pauses its clients' writes
  // (CLIENT PAUSE WRITE, for at most `limit_ms`; commands already sent wait in the pause and
  // meet the crash), waits until every replica has applied what the master holds
  // (wait_replicated), then kill(). Without the wait a failover keeps only what had reached the
  // replica, which may be nothing of a key written a moment before. False with error() when the
  // pause is refused or the replicas do not catch up in time (the master is then not killed).
  bool kill_replicated(std::uint16_t master, std::uint64_t limit_ms);
  // The same stall of master `master` that loses no write it accepted: the pause and the wait of
  // kill_replicated, then SIGSTOP (signal(SIGCONT) ends the stall). A stopped master keeps its
  // connections open and answers nothing: its clients wait out their command timeouts.
  bool stop_replicated(std::uint16_t master, std::uint64_t limit_ms);
  // Starts killed node `port` again on its ports and its nodes.conf, and waits until it answers
  // PING. It has no data (no persistence) and rejoins as a replica of whichever node took its
  // slots; restart it only once another node took them (master_of_slot on a live node says
  // so), or it comes back as the master of its slots with none of their keys. False with error().
  bool restart(std::uint16_t port);
  // Ends an unfinished slot move (begin_slot_move without finish_slot_move): the slot is STABLE
  // again on `from` and `to` (keys already migrated stay on `to`, whose owner is then settled by
  // finish_slot_move or by the cluster). False with error() naming the node that refused.
  bool abort_slot_move(std::uint16_t slot, std::uint16_t from, std::uint16_t to);
  // The ports of the nodes that are not killed.
  std::vector<std::uint16_t> live_ports() const;
  // Sends `signal` to node `port` by pid (SIGSTOP, SIGCONT: a stall); false when it is not running.
  bool signal(std::uint16_t port, int signal);
  // The last lines of node `port`'s log (a failed test prints every node's).
  std::string log_tail(std::uint16_t port) const;

  // Every live node: cluster_state:ok, 16384 slots assigned and ok, and every live replica's
  // master link up, within `limit_ms`; otherwise false with error() naming what was not so.
  bool wait_healthy(std::uint64_t limit_ms);
  // Polls `done` until it holds within `limit_ms`; false with error() "waited LIMIT ms for WHAT".
  bool wait_until(const std::function<bool()>& done, std::uint64_t limit_ms,
                  const std::string& what);

 private:
  bool start();
  // The words of each line of CLUSTER NODES, as the first live node that answers tells it
  // (none when no node answers).
  std::vector<std::vector<std::string>> cluster_nodes();
  bool spawn_node(Node& node);
  // Waits (bounded) until `node`, spawned, answers PING; false with error() naming it as `name`
  // (the wait, or its exit) and the tail of its log.
  bool wait_answering(Node& node, const std::string& name);
  bool create();
  std::string why_unhealthy();
  // Until every master streams its writes to its replicas, within `limit_ms`: one write (SET and
  // DEL of a key of its slots) on each master, and wait_replicated. A replica says
  // master_link_status:up once it has loaded its first copy, but its master sends it later
  // writes only after the replica's first REPLCONF ACK (once a second; one that comes before the
  // master has finished the transfer does not count). A master killed in that second is replaced
  // by a replica at offset 0, with none of the writes made since: seen on a master SIGKILLed
  // 0.8 s after its replica's sync, whose keys all came back empty after the failover.
  bool wait_streaming(std::uint64_t limit_ms);
  // kill_replicated's pause and wait: true once every replica of `master` holds what it holds.
  bool pause_replicated(std::uint16_t master, std::uint64_t limit_ms);

  RedisClusterOptions options_;
  bool ok_ = false;
  std::string error_;
  std::string dir_;
  std::vector<Node> nodes_;
  Timings timings_;
};

}  // namespace seqby::scenarios
