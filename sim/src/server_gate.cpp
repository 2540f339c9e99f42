#include "seqby/sim/server_gate.h"

#include <algorithm>
#include <utility>

#include "seqby/core/check.h"

namespace seqby::sim {

ServerGate::ServerGate(Scheduler& scheduler, SimRedis& redis)
    : scheduler_(scheduler), redis_(redis), admin_(connect("admin", true)) {}

ConnectionId ServerGate::connect(std::string name, bool exempt) {
  SEQBY_CHECK(connections_.size() < UINT32_MAX);
  Connection c;
  c.name = std::move(name);
  c.exempt = exempt;
  connections_.push_back(std::move(c));
  return static_cast<ConnectionId>(connections_.size() - 1);
}

ServerGate::Arrival ServerGate::arrive(ConnectionId id, std::uint64_t epoch) const {
  const Connection& c = connections_.at(id);
  if (c.epoch != epoch) return Arrival::refuse;
  if (down()) return c.exempt ? Arrival::queue : Arrival::refuse;
  if (c.node >= 0 && node_is_down(static_cast<std::uint32_t>(c.node))) {
    return c.exempt ? Arrival::queue : Arrival::refuse;
  }
  // Behind what still waits (the pause just ended, its queue not yet run): in order.
  if (paused() || queued_live_ > 0 || draining_) return Arrival::queue;
  return Arrival::run;
}

void ServerGate::enqueue(ConnectionId id, SimServer& server, redis::Command command,
                         Respond respond) {
  SEQBY_CHECK(id < connections_.size());
  SimServer* s = &server;
  auto shared =
      std::make_shared<std::pair<redis::Command, Respond>>(std::move(command), std::move(respond));
  Queued q;
  q.connection = id;
  q.run = [s, shared] { shared->second(s->execute(shared->first)); };
  q.discard = [s, shared] {
    s->refused(shared->first);
    shared->second(std::nullopt);
  };
  push(std::move(q));
}

void ServerGate::enqueue_action(ConnectionId id, std::function<void()> run,
                                std::function<void()> discard) {
  SEQBY_CHECK(id < connections_.size());
  SEQBY_CHECK(run && discard);
  Queued q;
  q.connection = id;
  q.run = std::move(run);
  q.discard = std::move(discard);
  push(std::move(q));
}

void ServerGate::push(Queued q) {
  const std::int64_t node = connections_.at(q.connection).node;
  if (node >= 0 && node_is_down(static_cast<std::uint32_t>(node))) {
    held_.push_back(std::move(q));
    return;
  }
  queue_.push_back(std::move(q));
  ++queued_live_;
}

void ServerGate::set_node(ConnectionId id, std::uint32_t node) { connections_.at(id).node = node; }

bool ServerGate::node_is_down(std::uint32_t node) const {
  auto it = node_down_until_ms_.find(node);
  return it != node_down_until_ms_.end() && scheduler_.now_ms() < it->second;
}

bool ServerGate::node_down(std::uint32_t node, std::uint64_t down_ms) {
  if (node_is_down(node)) return false;
  const std::uint64_t until = scheduler_.now_ms() + down_ms;
  node_down_until_ms_[node] = until;
  for (ConnectionId id = 0; id < connections_.size(); ++id) {
    if (connections_[id].node == node && !connections_[id].exempt) close(id);
  }
  scheduler_.call_at(until, [this, node] { node_up(node); });
  return true;
}

void ServerGate::node_up(std::uint32_t node) {
  std::vector<Queued> still_held;
  for (Queued& q : held_) {
    if (connections_.at(q.connection).node != node || q.done) {
      if (!q.done) still_held.push_back(std::move(q));
      continue;
    }
    queue_.push_back(std::move(q));
    ++queued_live_;
  }
  held_ = std::move(still_held);
  drain();
}

void ServerGate::on_close(ConnectionId id, std::function<void()> hook) {
  Connection& c = connections_.at(id);
  SEQBY_CHECK(!hook || !c.on_close);  // one holder at a time
  c.on_close = std::move(hook);
}

std::uint64_t ServerGate::reply_time(ConnectionId id, std::uint64_t due_ms) {
  Connection& c = connections_.at(id);
  c.last_reply_ms = std::max(c.last_reply_ms, due_ms);
  return c.last_reply_ms;
}

void ServerGate::close(ConnectionId id) {
  ++connections_.at(id).epoch;
  free_queued(id);
}

void ServerGate::free_queued(ConnectionId id) {
  // The held read first: it was sent before anything queued behind it or at the gate.
  if (connections_.at(id).on_close) {
    std::function<void()> hook = std::move(connections_[id].on_close);
    connections_[id].on_close = nullptr;
    hook();
  }
  for (Queued& q : queue_) {
    if (q.done || q.connection != id) continue;
    q.done = true;
    --queued_live_;
    q.discard();
  }
  for (Queued& q : held_) {
    if (q.done || q.connection != id) continue;
    q.done = true;
    q.discard();
  }
}

void ServerGate::client_gone(std::string_view name) {
  for (ConnectionId id = 0; id < connections_.size(); ++id) {
    const std::string& n = connections_[id].name;
    const bool of_client =
        n == name || (n.size() > name.size() && n.starts_with(name) && n[name.size()] == '/');
    if (!of_client || connections_[id].exempt) continue;
    free_queued(id);
  }
}

void ServerGate::admin(std::function<void()> action) {
  if (paused() || queued_live_ > 0 || draining_) {
    Queued q;
    q.connection = admin_;
    q.run = std::move(action);
    q.discard = [] {};
    queue_.push_back(std::move(q));
    ++queued_live_;
    return;
  }
  action();
}

bool ServerGate::restart(bool keep_data, std::uint64_t down_ms) {
  if (down()) return false;
  for (ConnectionId id = 0; id < connections_.size(); ++id) {
    if (!connections_[id].exempt) close(id);
  }
  paused_until_ms_ = 0;  // the new process is not paused
  down_until_ms_ = scheduler_.now_ms() + down_ms;
  // appendfsync always: what ran is on disk; the script cache never is.
  redis_.execute({"SCRIPT", "FLUSH"});
  if (!keep_data) redis_.execute({"FLUSHALL"});
  scheduler_.call_at(down_until_ms_, [this] { drain(); });
  return true;
}

bool ServerGate::flush_scripts() {
  if (down()) return false;
  admin([this] { redis_.execute({"SCRIPT", "FLUSH"}); });
  return true;
}

void ServerGate::start_pause(std::uint64_t duration_ms) {
  const std::uint64_t until = scheduler_.now_ms() + duration_ms;
  paused_until_ms_ = std::max(paused_until_ms_, until);
  scheduler_.call_at(until, [this] { drain(); });
}

bool ServerGate::pause_clients(std::uint64_t duration_ms) {
  if (down()) return false;
  admin([this, duration_ms] { start_pause(duration_ms); });
  return true;
}

bool ServerGate::kill_client(std::string_view client) {
  if (down()) return false;
  ConnectionId latest = 0;
  bool found = false;
  for (ConnectionId id = 0; id < connections_.size(); ++id) {
    if (connections_[id].name == client && !connections_[id].exempt) {
      latest = id;
      found = true;
    }
  }
  if (!found) return false;
  admin([this, latest] { close(latest); });
  return true;
}

void ServerGate::drain() {
  if (draining_ || down() || paused()) return;  // another pause or downtime runs on
  draining_ = true;
  // Redis 7.0 unblocks paused clients in the order they were paused, and each runs every command
  // its query buffer holds: by connection, in the order of each one's first queued command.
  std::vector<ConnectionId> order;
  for (const Queued& q : queue_) {
    if (!q.done && std::find(order.begin(), order.end(), q.connection) == order.end()) {
      order.push_back(q.connection);
    }
  }
  bool held = false;
  for (ConnectionId id : order) {
    // By index: running a command never adds to the queue (arrivals are later scheduled work),
    // but an admin action may close a connection (marking its entries done) or pause again.
    for (std::size_t i = 0; i < queue_.size() && !held; ++i) {
      if (queue_[i].done || queue_[i].connection != id) continue;
      if (paused()) {
        held = true;  // a queued CLIENT PAUSE ran: the rest waits for its end
        break;
      }
      queue_[i].done = true;
      --queued_live_;
      std::function<void()> run = std::move(queue_[i].run);
      run();
    }
    if (held) break;
  }
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [](const Queued& q) { return q.done; }),
               queue_.end());
  SEQBY_CHECK(held || queued_live_ == 0);
  draining_ = false;
}

}  // namespace seqby::sim
