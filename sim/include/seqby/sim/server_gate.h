// ServerGate: the simulated server as its clients' connections see it, for the server faults
// (DESIGN.md section 5): up, paused (CLIENT PAUSE ALL: commands queue, then run in the order
// Redis 7.0 runs paused clients), or down (a restart: every connection drops, commands are
// refused until it is back, the script cache is empty after, and without persistence every key
// is gone). Each SimRedisLink holds one connection, which the server may close (CLIENT KILL, a
// restart): a command in flight on it either never ran or ran with its reply lost, and its
// caller gets Errc::closed; the client reconnects at once (its next command goes on a new
// connection). An exempt connection (the publisher, an outbox relay that publishes exactly once,
// and the harness's own admin connection) is never closed: it only waits.
//
// A connection held by a blocking read (sim_link.h) registers a close hook: closing the
// connection, or its client going away, ends the block (Redis frees the client) and drops what
// waited behind it. A blocked read of an exempt connection survives a restart (as if its relay
// reconnected and sent it again).
//
// It does not model a restart losing acknowledged writes (appendfsync always: what ran is on
// disk), nor a client recycling its connection after a timeout (HiredisLink does, and Redis then
// discards the commands still queued; here a timed-out caller's queued commands still run when
// the pause ends: the harsher of the two). Key expiry follows the server clock during a pause:
// Redis 7.0 skips deleting expired keys while paused, but they are logically expired, so a lease
// past its TTL is gone to the queued commands (redis tests/unit/pause.tcl, "Test both active and
// passive expires are skipped during client pause").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_redis.h"

namespace seqby::sim {

class ServerGate final : public ServerFaultTarget {
 public:
  // REQUIRES: `scheduler` and `redis` outlive the gate.
  ServerGate(Scheduler& scheduler, SimRedis& redis);
  ServerGate(const ServerGate&) = delete;
  ServerGate& operator=(const ServerGate&) = delete;

  // A new connection of client `name` (an instance's runtime name; kill_client closes the latest
  // connection of that name). `exempt`: never closed; commands wait while the server is down.
  ConnectionId connect(std::string name, bool exempt);
  // Bumps each time the server closes the connection: a command sent under an older epoch is lost.
  std::uint64_t epoch(ConnectionId id) const { return connections_.at(id).epoch; }
  bool exempt(ConnectionId id) const { return connections_.at(id).exempt; }
  // The SimRedis behind the gate as a SimServer (blocking reads included), for a link that needs
  // no server of its own (a wake link: no stamps); it lives as long as the gate.
  SimServer& server() { return redis_; }

  enum class Arrival : std::uint8_t { run, refuse, queue };
  // What becomes of a command of connection `id`, sent under `epoch`, reaching the server now.
  Arrival arrive(ConnectionId id, std::uint64_t epoch) const;

  // Called once, at the moment the command ran (with its reply) or was discarded (nullopt: its
  // connection closed first).
  using Respond = std::function<void(std::optional<redis::Reply>)>;
  // Queues a command arrive() said to queue; it runs on `server` once the server is up and
  // unpaused. REQUIRES: `server` outlives the gate.
  void enqueue(ConnectionId id, SimServer& server, redis::Command command, Respond respond);
  // The same for work of the connection's own (a link that holds commands behind a blocking
  // read): `run` once the server runs commands again, or `discard` if the connection closes first.
  void enqueue_action(ConnectionId id, std::function<void()> run, std::function<void()> discard);
  // `hook` runs once when the server closes connection `id` or frees it (its client gone), before
  // its queued commands are discarded; an empty hook clears it. One hook per connection.
  void on_close(ConnectionId id, std::function<void()> hook);

  // Replies of one connection come back in the order they were sent: the time a reply due at
  // `due_ms` arrives (never before an earlier reply of `id`).
  std::uint64_t reply_time(ConnectionId id, std::uint64_t due_ms);

  // The client `name` went away (its instance crashed): Redis frees it and the commands it had
  // queued, on each of its connections (named `name`, or `name/...` for a second connection of
  // the same instance). Commands still on the wire are not touched (the simulator lets them run).
  void client_gone(std::string_view name) override;

  // --- ServerFaultTarget ---
  bool restart(bool keep_data, std::uint64_t down_ms) override;
  // SCRIPT FLUSH, CLIENT PAUSE and CLIENT KILL come from an admin client, which a pause holds
  // like any other: issued during a pause they take effect, in order, when it ends.
  bool flush_scripts() override;
  bool pause_clients(std::uint64_t duration_ms) override;
  // Closes the latest connection named exactly `client` (not its `client/...` connections).
  bool kill_client(std::string_view client) override;

  // With cluster nodes (WorldOptions::cluster_shards): connection `id` talks to node `node`.
  void set_node(ConnectionId id, std::uint32_t node);
  // Node `node`'s process is gone for `down_ms` (a killed master, until its replica is elected):
  // its connections close, and commands on them are refused until it is back; an exempt
  // connection's commands wait and run once it is back (as whatever node it is then: a former
  // master rejoins as a replica). False when it is down already.
  bool node_down(std::uint32_t node, std::uint64_t down_ms);
  bool node_is_down(std::uint32_t node) const;

  bool down() const { return scheduler_.now_ms() < down_until_ms_; }
  bool paused() const { return scheduler_.now_ms() < paused_until_ms_; }
  std::size_t queued_count() const { return queued_live_; }

 private:
  struct Connection {
    std::string name;
    bool exempt = false;
    std::uint64_t epoch = 0;
    std::uint64_t last_reply_ms = 0;
    std::function<void()> on_close;
    std::int64_t node = -1;  // the cluster node it talks to; -1: the server as a whole
  };
  struct Queued {
    ConnectionId connection = 0;
    std::function<void()> run;      // runs it (a command: executes it and responds)
    std::function<void()> discard;  // its connection closed first (a command: responds nullopt)
    bool done = false;
  };

  // Runs `action` now, or queues it on the admin connection while the server holds commands.
  void admin(std::function<void()> action);
  void close(ConnectionId id);        // epoch++, then free_queued
  void free_queued(ConnectionId id);  // its close hook run, its queued commands discarded
  void start_pause(std::uint64_t duration_ms);
  // Queues `q` (counted in queued_live_), or holds it while its connection's node is down.
  void push(Queued q);
  // Node `node` is back: what its exempt connections held joins the queue, in order.
  void node_up(std::uint32_t node);
  // Runs what queued, once the server is up and unpaused (called when a pause or a downtime ends).
  void drain();

  Scheduler& scheduler_;
  ServerAdapter<SimRedis> redis_;
  std::vector<Connection> connections_;  // by ConnectionId; kept to the end
  ConnectionId admin_;
  std::vector<Queued> queue_;  // arrival order
  std::size_t queued_live_ = 0;
  std::uint64_t paused_until_ms_ = 0;
  std::uint64_t down_until_ms_ = 0;
  bool draining_ = false;
  std::map<std::uint32_t, std::uint64_t> node_down_until_ms_;
  std::vector<Queued> held_;  // commands of exempt connections to a down node, in arrival order
};

}  // namespace seqby::sim
