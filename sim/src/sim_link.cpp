#include "seqby/sim/sim_link.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "seqby/sim/server_gate.h"

namespace seqby::sim {

// The server's side of a link's connection, for the commands that take the held path: a blocking
// read, and every command sent while an earlier one's reply time is still open. It holds what
// arrives while a blocked read holds the connection and keeps the order replies go out in. The
// link's queued work shares it, so it outlives the link (a crash destroys the link, not what is
// on the wire).
struct SimRedisLink::Wire : std::enable_shared_from_this<Wire> {
  // Called once with the command's reply, or nullopt when the server closed the connection (or
  // refused the command) first: it decides when the reply reaches the client and schedules that.
  using Deliver = std::function<void(std::optional<redis::Reply>)>;
  struct Pending {
    redis::Command command;
    std::optional<std::uint64_t> block_ms;  // a blocking read's BLOCK
    Deliver deliver;
  };

  Wire(Scheduler& s, SimServer& server, GateConnection c)
      : scheduler(s), server(server), connection(c) {}

  void arrive(std::uint64_t epoch, Pending p);
  void enqueue_at_gate(Pending p);
  void accept(Pending p);
  void run(Pending p);
  void end_block(std::optional<redis::Reply> reply);
  void resume();
  void close();

  Scheduler& scheduler;
  SimServer& server;
  const GateConnection connection;
  std::uint64_t last_reply_ms = 0;  // FIFO: a reply never leaves before an earlier one
  // Commands sent whose reply time is not decided yet. While there is one, the link's later
  // commands take the held path too: their replies are then decided in order.
  std::uint64_t undecided_count = 0;
  bool held = false;  // a blocked read holds the connection
  BlockId block = 0;
  Deliver block_deliver;       // the held read's
  std::deque<Pending> behind;  // arrived while held (or while those before them waited), in order
  bool resume_queued = false;
};

void SimRedisLink::Wire::arrive(std::uint64_t epoch, Pending p) {
  ServerGate* gate = connection.gate;
  if (gate != nullptr) {
    switch (gate->arrive(connection.id, epoch)) {
      case ServerGate::Arrival::run:
        break;
      case ServerGate::Arrival::refuse:
        server.refused(p.command);
        p.deliver(std::nullopt);
        return;
      case ServerGate::Arrival::queue:
        enqueue_at_gate(std::move(p));
        return;
    }
  }
  accept(std::move(p));
}

void SimRedisLink::Wire::enqueue_at_gate(Pending p) {
  auto self = shared_from_this();
  auto waiting = std::make_shared<Pending>(std::move(p));
  connection.gate->enqueue_action(
      connection.id, [self, waiting] { self->accept(std::move(*waiting)); },
      [self, waiting] {
        self->server.refused(waiting->command);
        waiting->deliver(std::nullopt);
      });
}

void SimRedisLink::Wire::accept(Pending p) {
  // Redis reads a blocked client's later commands into its query buffer and runs them only
  // once it is unblocked.
  if (held || !behind.empty()) {
    behind.push_back(std::move(p));
    return;
  }
  run(std::move(p));
}

void SimRedisLink::Wire::run(Pending p) {
  SEQBY_CHECK(!held);
  if (!p.block_ms) {
    redis::Reply reply = server.execute(p.command);
    p.deliver(std::move(reply));
    return;
  }
  auto self = shared_from_this();
  // The wake comes from inside another command's execution: end_block only schedules.
  BlockResult result =
      server.execute_blocking(p.command, [self](redis::Reply r) { self->end_block(std::move(r)); });
  if (result.reply) {
    p.deliver(std::move(*result.reply));
    return;
  }
  held = true;
  block = result.block;
  block_deliver = std::move(p.deliver);
  if (connection.gate != nullptr)
    connection.gate->on_close(connection.id, [self] { self->close(); });
  const std::uint64_t block_ms = *p.block_ms;
  if (block_ms == 0 || block_ms >= kWaitForeverMs) return;  // BLOCK 0: until served
  // Redis times a blocked client out BLOCK ms after it blocked, paused or not.
  const BlockId id = block;
  scheduler.call_after(block_ms, [self, id] {
    if (!self->held || self->block != id) return;
    if (self->server.unblock(id)) self->end_block(redis::Reply::nil());
  });
}

void SimRedisLink::Wire::end_block(std::optional<redis::Reply> reply) {
  SEQBY_CHECK(held);
  held = false;
  block = 0;
  if (connection.gate != nullptr) connection.gate->on_close(connection.id, nullptr);
  Deliver deliver = std::move(block_deliver);
  block_deliver = nullptr;
  deliver(std::move(reply));
  // What waited behind runs at once, but not inside the command that served the block.
  if (behind.empty() || resume_queued) return;
  resume_queued = true;
  auto self = shared_from_this();
  scheduler.call_after(0, [self] { self->resume(); });
}

void SimRedisLink::Wire::resume() {
  resume_queued = false;
  ServerGate* gate = connection.gate;
  while (!held && !behind.empty()) {
    Pending p = std::move(behind.front());
    behind.pop_front();
    if (gate != nullptr) {
      // A pause that began meanwhile holds them (their order kept at the gate).
      switch (gate->arrive(connection.id, gate->epoch(connection.id))) {
        case ServerGate::Arrival::run:
          break;
        case ServerGate::Arrival::refuse:
          server.refused(p.command);
          p.deliver(std::nullopt);
          continue;
        case ServerGate::Arrival::queue:
          enqueue_at_gate(std::move(p));
          continue;
      }
    }
    run(std::move(p));
  }
}

void SimRedisLink::Wire::close() {
  // Redis frees the client: its blocked read ends without a reply, its query buffer is dropped.
  if (held) {
    const bool was_blocked = server.unblock(block);
    SEQBY_CHECK(was_blocked);
    held = false;
    block = 0;
    Deliver deliver = std::move(block_deliver);
    block_deliver = nullptr;
    deliver(std::nullopt);
  }
  while (!behind.empty()) {
    Pending p = std::move(behind.front());
    behind.pop_front();
    server.refused(p.command);
    p.deliver(std::nullopt);
  }
}

// The awaiter that sends one command. It lives in the execute() frame; the queued reply
// delivery writes into it only through work bound to the caller's task, which is dropped if
// the task (and so this frame) was destroyed by a crash.
struct SimRedisLink::Exchange {
  Exchange(SimRedisLink* l, redis::Command c) : link(l), command(std::move(c)) {}

  SimRedisLink* link;
  redis::Command command;
  std::optional<redis::Reply> reply;
  bool closed = false;        // the server closed the connection (or was down): no reply
  std::uint64_t wait_ms = 0;  // how long the caller waits for the reply (client's clock)

  bool await_ready() const noexcept { return false; }

  template <typename P>
  void await_suspend(std::coroutine_handle<P> h) {
    SimRuntime& client = link->client_;
    Scheduler& scheduler = client.scheduler();
    const TaskBinding binding = client.binding_of(detail::context_of(h));
    const SimLinkOptions& o = link->options_;
    const std::uint64_t now = scheduler.now_ms();
    const std::uint64_t request_ms =
        link->rng_.uniform(o.request_latency_min_ms, o.request_latency_max_ms);
    const std::uint64_t reply_ms =
        link->rng_.uniform(o.reply_latency_min_ms, o.reply_latency_max_ms);
    const std::uint64_t arrival = std::max(now + request_ms, link->last_arrival_ms_);
    Wire& wire = *link->wire_;
    std::optional<std::uint64_t> block_ms = block_ms_of(command);
    if (block_ms || wire.undecided_count > 0) {
      link->last_arrival_ms_ = arrival;
      link->sent_count_++;
      suspend_held(binding, arrival, reply_ms, block_ms, h);
      return;
    }
    wait_ms = o.timeout_ms;
    std::uint64_t back = std::max(arrival + reply_ms, wire.last_reply_ms);
    ServerGate* gate = link->connection_.gate;
    if (gate != nullptr) back = gate->reply_time(link->connection_.id, back);
    link->last_arrival_ms_ = arrival;
    wire.last_reply_ms = back;
    link->sent_count_++;
    const std::uint64_t deadline = now + client.global_delay_ms(o.timeout_ms);
    const bool in_time = back <= deadline;

    SimServer* server = &link->server_;
    Exchange* self = this;
    if (gate != nullptr) {
      suspend_gated(gate, link->connection_.id, server, binding, arrival, back, deadline, reply_ms,
                    in_time, h);
      return;
    }
    if (in_time) {
      scheduler.call_at(arrival,
                        [server, &scheduler, binding, back, self, h, command = std::move(command)] {
                          redis::Reply r = server->execute(command);
                          scheduler.call_bound_at(back, binding.domain, binding.tag,
                                                  [self, h, r = std::move(r)]() mutable {
                                                    self->reply = std::move(r);
                                                    h.resume();
                                                  });
                        });
    } else {
      // The reply would come too late: the command still runs, the caller wakes at its deadline.
      scheduler.call_at(arrival,
                        [server, command = std::move(command)] { (void)server->execute(command); });
      scheduler.resume_at(deadline, binding.domain, binding.tag, h);
    }
  }

  Exchange* await_resume() { return this; }

  // The held path (a blocking read, or a command behind one): the reply time is decided on the
  // server, when the command ran (or was served, or closed); the caller wakes with the reply or
  // at its deadline, whichever comes first.
  void suspend_held(TaskBinding binding, std::uint64_t arrival, std::uint64_t reply_ms,
                    std::optional<std::uint64_t> block_ms, std::coroutine_handle<> h) {
    SimRuntime& client = link->client_;
    Scheduler& scheduler = client.scheduler();
    std::shared_ptr<Wire> wire = link->wire_;
    const GateConnection connection = link->connection_;
    const std::uint64_t epoch =
        connection.gate != nullptr ? connection.gate->epoch(connection.id) : 0;
    wait_ms = reply_wait_ms(command, link->options_.timeout_ms);
    const bool forever = wait_ms >= kWaitForeverMs;
    const std::uint64_t deadline =
        forever ? UINT64_MAX : scheduler.now_ms() + client.global_delay_ms(wait_ms);
    struct Settle {
      bool settled = false;
      std::uint64_t reply_at_ms = UINT64_MAX;  // when the reply reaches the client, once decided
    };
    auto settle = std::make_shared<Settle>();
    Exchange* self = this;
    if (!forever) {
      scheduler.call_bound_at(deadline, binding.domain, binding.tag, [settle, deadline, h] {
        // A reply due exactly at the deadline is in time, as on the direct path.
        if (settle->settled || settle->reply_at_ms <= deadline) return;
        settle->settled = true;
        h.resume();
      });
    }
    ++wire->undecided_count;
    Wire::Deliver deliver = [wire = wire.get(), connection, epoch, binding, reply_ms, deadline,
                             settle, self, h](std::optional<redis::Reply> r) mutable {
      Scheduler& s = wire->scheduler;
      std::uint64_t at = std::max(s.now_ms() + reply_ms, wire->last_reply_ms);
      if (connection.gate != nullptr) at = connection.gate->reply_time(connection.id, at);
      wire->last_reply_ms = at;
      SEQBY_CHECK(wire->undecided_count > 0);
      --wire->undecided_count;
      if (settle->settled || at > deadline) return;  // the caller gives up first
      settle->reply_at_ms = at;
      s.call_bound_at(
          at, binding.domain, binding.tag,
          [connection, epoch, settle, self, h, r = std::move(r)]() mutable {
            if (settle->settled) return;
            settle->settled = true;
            ServerGate* gate = connection.gate;
            // Closed meanwhile: the reply is lost with the connection.
            if (r.has_value() && (gate == nullptr || gate->epoch(connection.id) == epoch)) {
              self->reply = std::move(*r);
            } else {
              self->closed = true;
            }
            h.resume();
          });
    };
    Wire::Pending pending{std::move(command), block_ms, std::move(deliver)};
    scheduler.call_at(arrival, [wire, epoch, pending = std::move(pending)]() mutable {
      wire->arrive(epoch, std::move(pending));
    });
  }

  // The same exchange through a ServerGate: at its arrival the gate runs it, refuses it or queues
  // it. Scheduled work is the same as without a gate while the server does not fault (an
  // arrival, then a reply), so a run without server faults keeps its history byte for byte.
  void suspend_gated(ServerGate* gate, ConnectionId id, SimServer* server, TaskBinding binding,
                     std::uint64_t arrival, std::uint64_t back, std::uint64_t deadline,
                     std::uint64_t reply_ms, bool in_time, std::coroutine_handle<> h) {
    Scheduler& scheduler = link->client_.scheduler();
    const std::uint64_t epoch = gate->epoch(id);
    Exchange* self = this;
    if (!in_time) {
      // The caller wakes at its deadline whatever happens; the command runs, waits or is lost.
      scheduler.call_at(arrival, [gate, id, epoch, server, command = std::move(command)]() mutable {
        switch (gate->arrive(id, epoch)) {
          case ServerGate::Arrival::run:
            (void)server->execute(command);
            break;
          case ServerGate::Arrival::refuse:
            server->refused(command);
            break;
          case ServerGate::Arrival::queue:
            gate->enqueue(id, *server, std::move(command), [](std::optional<redis::Reply>) {});
            break;
        }
      });
      scheduler.resume_at(deadline, binding.domain, binding.tag, h);
      return;
    }
    scheduler.call_at(arrival, [gate, id, epoch, server, &scheduler, binding, back, deadline,
                                reply_ms, self, h, command = std::move(command)]() mutable {
      switch (gate->arrive(id, epoch)) {
        case ServerGate::Arrival::run: {
          redis::Reply r = server->execute(command);
          scheduler.call_bound_at(back, binding.domain, binding.tag,
                                  [gate, id, epoch, self, h, r = std::move(r)]() mutable {
                                    // Closed meanwhile: the reply is lost with the connection.
                                    if (gate->epoch(id) == epoch) {
                                      self->reply = std::move(r);
                                    } else {
                                      self->closed = true;
                                    }
                                    h.resume();
                                  });
          return;
        }
        case ServerGate::Arrival::refuse:
          server->refused(command);
          scheduler.call_bound_at(back, binding.domain, binding.tag, [self, h] {
            self->closed = true;
            h.resume();
          });
          return;
        case ServerGate::Arrival::queue:
          break;
      }
      // Held by a pause (or a downtime, for an exempt connection): the caller wakes at its
      // deadline or with the reply, whichever comes first (the other finds it settled).
      auto settled = std::make_shared<bool>(false);
      if (!gate->exempt(id)) {
        scheduler.call_bound_at(deadline, binding.domain, binding.tag, [settled, h] {
          if (*settled) return;
          *settled = true;
          h.resume();
        });
      }
      gate->enqueue(id, *server, std::move(command),
                    [gate, id, epoch, &scheduler, binding, reply_ms, settled, self,
                     h](std::optional<redis::Reply> r) mutable {
                      const std::uint64_t at = gate->reply_time(id, scheduler.now_ms() + reply_ms);
                      scheduler.call_bound_at(
                          at, binding.domain, binding.tag,
                          [gate, id, epoch, settled, self, h, r = std::move(r)]() mutable {
                            if (*settled) return;
                            *settled = true;
                            if (r.has_value() && gate->epoch(id) == epoch) {
                              self->reply = std::move(*r);
                            } else {
                              self->closed = true;
                            }
                            h.resume();
                          });
                    });
    });
  }
};

SimRedisLink::SimRedisLink(SimRuntime& client, SimServer& server, Rng rng, SimLinkOptions options,
                           GateConnection connection)
    : client_(client),
      server_(server),
      rng_(rng),
      options_(options),
      connection_(connection),
      wire_(std::make_shared<Wire>(client.scheduler(), server, connection)) {
  SEQBY_CHECK(options_.request_latency_min_ms <= options_.request_latency_max_ms);
  SEQBY_CHECK(options_.reply_latency_min_ms <= options_.reply_latency_max_ms);
  SEQBY_CHECK(options_.timeout_ms > 0);
}

Task<Result<redis::Reply>> SimRedisLink::execute(redis::Command command) {
  SEQBY_CHECK(!command.empty());
  // Not an aggregate temporary: g++ 12 destroys those twice (see task.h).
  Exchange exchange(this, std::move(command));
  Exchange* done = co_await exchange;
  if (done->closed) co_return make_error(Errc::closed, "connection closed by the server");
  if (!done->reply) {
    co_return make_error(Errc::timeout, "no reply within " + std::to_string(done->wait_ms) + " ms");
  }
  co_return std::move(*done->reply);
}

}  // namespace seqby::sim
