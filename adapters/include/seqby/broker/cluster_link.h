// ClusterLink: the RedisLink to a Redis Cluster. It keeps the slot map (CLUSTER SLOTS), one
// ClusterNodeLink per node it sends to (made by a ClusterNodeConnect: HiredisLinks in
// seqby/hiredis/cluster_link.h, simulated links in the simulator, so the simulator runs this very
// routing), and routes each command by the slot of its keys
// (route_command, seqby/broker/cluster_slot.h). It follows what a node answers when the command
// did not run: MOVED (the map is updated and the command sent to the new owner), ASK (ASKING
// then the command on the importing node, once, the map unchanged), TRYAGAIN (sent again after a
// bounded backoff, then returned), NOSCRIPT for a script it saw loaded (loaded on that node, then
// sent again). Nothing that may have run is sent again: a timeout or a lost connection returns
// Errc::timeout / Errc::closed as its node link does, and marks the map stale. Commands whose keys
// span slots are refused here with a CROSSSLOT error reply naming the keys.
//
// It does not do blocking reads over several slots (a wake link's XREAD BLOCK over many
// partitions is one CROSSSLOT refusal: give RedisBroker no wake link on a cluster and the engine
// polls; docs/ARCHITECTURE.md "The cluster link"), nor reads from replicas, nor MULTI/WATCH.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "seqby/broker/cluster_slot.h"
#include "seqby/broker/redis_link.h"
#include "seqby/core/runtime.h"

namespace seqby::redis {

// The connection to one cluster node: a RedisLink that can also send ASKING right before a
// command, nothing in between (a node then runs it on a slot it is importing: an ASK
// redirection).
class ClusterNodeLink : public RedisLink {
 public:
  virtual Task<Result<Reply>> execute_asking(Command command) = 0;
  // execute_replicated with ASKING before `command`; this default answers Errc::unsupported.
  virtual Task<Result<ReplicatedReply>> execute_replicated_asking(Command command,
                                                                  std::uint32_t replicas,
                                                                  std::uint64_t timeout_ms);
};

// Makes the connection to the node at host:port (null when none can be made).
using ClusterNodeConnect =
    std::function<std::unique_ptr<ClusterNodeLink>(const std::string& host, std::uint16_t port)>;

struct ClusterLinkOptions {
  std::uint32_t redirects_max = 5;              // MOVED and ASK followed for one command
  std::uint32_t tryagain_count_max = 6;         // TRYAGAIN: sends after the first at most
  std::uint64_t tryagain_backoff_min_ms = 10;   // doubling: 10 + 20 + ... + 320 ms at most
  std::uint64_t refresh_interval_min_ms = 100;  // stale map: at most one CLUSTER SLOTS per this
  std::size_t nodes_max = 64;                   // node connections made at most
  std::size_t scripts_max = 256;                // script sources kept for NOSCRIPT reloads
};

class ClusterLink : public RedisLink {
 public:
  struct Stats {
    std::uint64_t refreshes = 0;         // CLUSTER SLOTS answered and applied
    std::uint64_t refresh_failures = 0;  // refreshes no node answered
    std::uint64_t moved = 0;             // MOVED replies followed
    std::uint64_t asked = 0;             // ASK replies followed (ASKING sent)
    std::uint64_t tryagain = 0;          // TRYAGAIN replies waited out
    std::uint64_t script_reloads = 0;    // NOSCRIPT cured by loading the script on that node
    std::uint64_t refused = 0;           // commands refused here (CROSSSLOT and the like)
    std::uint64_t transport_errors = 0;  // timeouts and lost connections passed on
    // Failovers seen: a MOVED to a node that served no slot in the last map (a promoted
    // replica: counted at once), or a refresh that found a slot's master replaced (gone or
    // demoted, or a replica promoted), at most one per refresh. After one the new master may
    // lack a suffix of the old one's writes. A migration between masters does not count.
    std::uint64_t failovers_seen = 0;
  };

  // `seed_host`:`seed_port`: any cluster node; `connect` makes each node's connection. The slot
  // map is read on the first command. REQUIRES: `runtime` outlives the link; every call on the
  // runtime's loop (as the node links' calls).
  ClusterLink(Runtime& runtime, std::string seed_host, std::uint16_t seed_port,
              ClusterNodeConnect connect, ClusterLinkOptions options = {});
  ~ClusterLink() override;

  Task<Result<Reply>> execute(Command command) override;
  // The commands of each master (by the map when the call starts) one after another, and the
  // masters' at once (when_all). A transport failure stops only the later commands for the same
  // node (its master by the map when each is sent): they answer that error unsent. One master
  // gone or stopped must not withhold the rest of a round (the heartbeat's renewals of leases on
  // live masters), neither by a failure nor by the wait for its command timeout.
  Task<std::vector<Result<Reply>>> execute_many(std::vector<Command> commands) override;
  // A command of one slot, and WAIT on the connection that ran it (RedisLink's contract); a
  // command of no slot or of every master is Errc::invalid.
  Task<Result<ReplicatedReply>> execute_replicated(Command command, std::uint32_t replicas,
                                                   std::uint64_t timeout_ms) override;

  // Reads CLUSTER SLOTS from the known nodes in turn (the seed first until a map exists, a node
  // whose last command met a timeout or a lost connection last) and replaces the map. Errc::closed
  // naming each node tried when none answered.
  Task<Status> refresh();
  // Told, when a refresh found no map, of the last node that answered CLUSTER SLOTS with an
  // error reply ("host:port", the reply's text: an ACL's NOPERM, a server without cluster
  // support): a node that refuses the map is no transport failure, and the link cannot route.
  // On the runtime's loop; not when another node answered.
  using MapRefusedObserver =
      std::function<void(const std::string& address, const std::string& error)>;
  void set_map_refused_observer(MapRefusedObserver observer) { map_refused_ = std::move(observer); }
  // `command` on every master of the map, each reply in map order ("host:port", reply).
  Task<Result<std::vector<std::pair<std::string, Reply>>>> execute_on_each_master(Command command);

  // "host:port" of the master the map gives `slot` ("" before the first refresh).
  std::string node_of_slot(std::uint16_t slot) const;
  // The masters of the map, "host:port", sorted.
  std::vector<std::string> masters() const;
  // Commands sent to each node so far ("host:port" -> count), ASKING and CLUSTER SLOTS included,
  // the durability option's WAITs not (a node link may share one among several commands).
  std::map<std::string, std::uint64_t> commands_per_node() const;
  Stats stats() const { return stats_; }

 private:
  struct Node {
    std::string address;  // host:port
    std::unique_ptr<ClusterNodeLink> link;
  };
  struct Redirection {
    bool ask = false;
    std::uint16_t slot = 0;
    std::string address;
  };

  struct WaitAsk {
    std::uint32_t replicas = 0;
    std::uint64_t timeout_ms = 0;
  };
  // With `wait`, WAIT follows the command to the node that runs it, on its connection.
  Task<Result<ReplicatedReply>> execute_on_slot(Command command, std::uint16_t slot,
                                                std::optional<WaitAsk> wait);
  Task<Result<Reply>> execute_on_all(Command command, const std::string& name);
  Task<Result<Reply>> send(const std::string& address, const Command& command, bool asking);
  // send_on_link, and whether the node answered (unanswered_).
  Task<Result<ReplicatedReply>> send_on(const std::string& address, const Command& command,
                                        bool asking, std::optional<WaitAsk> wait);
  Task<Result<ReplicatedReply>> send_on_link(const std::string& address, const Command& command,
                                             bool asking, std::optional<WaitAsk> wait);
  Task<Status> ensure_map();
  // execute_many's rule for commands of one node (or of none known): one after another.
  Task<std::vector<Result<Reply>>> execute_in_order(std::vector<Command> commands);
  Result<std::size_t> node_index(const std::string& address);
  // Replaces the map with CLUSTER SLOTS reply `reply` (an unknown endpoint is `asked_host`).
  Status apply_slots(const Reply& reply, const std::string& asked_host);
  static std::optional<Redirection> parse_redirect(const Reply& reply);
  bool replaced_a_master(const std::vector<std::uint32_t>& owner) const;
  void remember_script(const Command& command, const Reply& reply);
  void mark_stale() { stale_ = true; }

  Runtime& runtime_;
  const std::string seed_host_;
  const std::uint16_t seed_port_;
  const ClusterNodeConnect connect_;
  const ClusterLinkOptions options_;
  std::vector<Node> nodes_;                     // every node ever addressed; never shrinks
  std::vector<std::uint32_t> slot_owner_;       // slot -> index into nodes_, kNoOwner when unknown
  std::vector<std::string> replica_addresses_;  // from the last map, tried by refresh()
  bool have_map_ = false;
  // A MOVED to a promoted replica counted a failover the next refresh would count again.
  bool failover_counted_since_refresh_ = false;
  bool stale_ = false;
  bool refreshing_ = false;
  std::uint64_t last_refresh_ms_ = 0;
  std::map<std::string, std::string> scripts_;  // sha -> source, from SCRIPT LOAD replies
  // Nodes whose last command met a timeout or a lost connection (until one answers again).
  std::set<std::string> unanswered_;
  Stats stats_;
  std::map<std::string, std::uint64_t> sent_;  // per node address
  MapRefusedObserver map_refused_;
};

}  // namespace seqby::redis
