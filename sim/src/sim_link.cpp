#include "seqby/sim/sim_link.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace seqby::sim {

// The awaiter that sends one command. It lives in the execute() frame; the queued reply
// delivery writes into it only through work bound to the caller's task, which is dropped if
// the task (and so this frame) was destroyed by a crash.
struct SimRedisLink::Exchange {
  Exchange(SimRedisLink* l, redis::Command c) : link(l), command(std::move(c)) {}

  SimRedisLink* link;
  redis::Command command;
  std::optional<redis::Reply> reply;

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
    const std::uint64_t back = std::max(arrival + reply_ms, link->last_reply_ms_);
    link->last_arrival_ms_ = arrival;
    link->last_reply_ms_ = back;
    link->sent_count_++;
    const std::uint64_t deadline = now + client.global_delay_ms(o.timeout_ms);
    const bool in_time = back <= deadline;

    SimServer* server = &link->server_;
    Exchange* self = this;
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

  std::optional<redis::Reply> await_resume() { return std::move(reply); }
};

SimRedisLink::SimRedisLink(SimRuntime& client, SimServer& server, Rng rng, SimLinkOptions options)
    : client_(client), server_(server), rng_(rng), options_(options) {
  SEQBY_CHECK(options_.request_latency_min_ms <= options_.request_latency_max_ms);
  SEQBY_CHECK(options_.reply_latency_min_ms <= options_.reply_latency_max_ms);
  SEQBY_CHECK(options_.timeout_ms > 0);
}

Task<Result<redis::Reply>> SimRedisLink::execute(redis::Command command) {
  SEQBY_CHECK(!command.empty());
  // Not an aggregate temporary: g++ 12 destroys those twice (see task.h).
  std::optional<redis::Reply> reply = co_await Exchange(this, std::move(command));
  if (!reply) {
    co_return make_error(Errc::timeout,
                         "no reply within " + std::to_string(options_.timeout_ms) + " ms");
  }
  co_return std::move(*reply);
}

}  // namespace seqby::sim
