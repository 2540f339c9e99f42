#include "seqby/sim/sim_link.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "seqby/sim/server_gate.h"

namespace seqby::sim {

// The awaiter that sends one command. It lives in the execute() frame; the queued reply
// delivery writes into it only through work bound to the caller's task, which is dropped if
// the task (and so this frame) was destroyed by a crash.
struct SimRedisLink::Exchange {
  Exchange(SimRedisLink* l, redis::Command c) : link(l), command(std::move(c)) {}

  SimRedisLink* link;
  redis::Command command;
  std::optional<redis::Reply> reply;
  bool closed = false;  // the server closed the connection (or was down): no reply

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
    std::uint64_t back = std::max(arrival + reply_ms, link->last_reply_ms_);
    ServerGate* gate = link->connection_.gate;
    if (gate != nullptr) back = gate->reply_time(link->connection_.id, back);
    link->last_arrival_ms_ = arrival;
    link->last_reply_ms_ = back;
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
    : client_(client), server_(server), rng_(rng), options_(options), connection_(connection) {
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
    co_return make_error(Errc::timeout,
                         "no reply within " + std::to_string(options_.timeout_ms) + " ms");
  }
  co_return std::move(*done->reply);
}

}  // namespace seqby::sim
