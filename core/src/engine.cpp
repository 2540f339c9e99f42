// Engine: the lifecycle of one instance; it owns the membership, the heartbeat and the workers.
#include "seqby/core/engine.h"

#include <algorithm>
#include <utility>

#include "heartbeat.h"
#include "membership.h"
#include "step_batcher.h"
#include "waker.h"
#include "worker_set.h"

namespace seqby {
namespace {

std::unique_ptr<StepBatcher> batcher_for(const EngineEnv& env) {
  const std::size_t max =
      std::min<std::size_t>(env.options.step_batch_max, env.broker.steps_per_call_max());
  return max >= 2 ? std::make_unique<StepBatcher>(env, max) : nullptr;
}

}  // namespace

Engine::Engine(Runtime& runtime, Broker& broker, HistorySink& history, Handler& handler,
               EngineOptions options, std::unique_ptr<EngineSteps> steps)
    : env_(runtime, broker, history, handler, std::move(options)),
      steps_(steps != nullptr ? std::move(steps) : std::make_unique<EngineSteps>()),
      waker_(std::make_unique<Waker>(env_)),
      batcher_(batcher_for(env_)),
      workers_(std::make_unique<WorkerSet>(env_)),
      membership_(std::make_unique<Membership>(env_, *steps_, *workers_)),
      heartbeat_(std::make_unique<Heartbeat>(env_, *steps_, *workers_)) {
  env_.waker = waker_.get();
  env_.batcher = batcher_.get();
}

Engine::~Engine() = default;

void Engine::start() {
  SEQBY_CHECK(!started_);
  started_ = true;
  loops_alive_ += 3;
  env_.runtime.spawn("discovery", run_loop(membership_->loop()));
  env_.runtime.spawn("heartbeat", run_loop(heartbeat_->loop()));
  env_.runtime.spawn("waker", run_loop(waker_->loop()));
}

Task<void> Engine::run_loop(Task<void> loop) {
  co_await loop;
  SEQBY_CHECK(loops_alive_ > 0);
  --loops_alive_;
}

Task<void> Engine::stop() {
  workers_->stop_all();
  waker_->stop();
  // Ends the waker's blocking reads now rather than at their block time (unsupported: none).
  co_await waker_->ring_all();
  const std::uint64_t start_ms = env_.runtime.clock().now_ms();
  while (tasks_alive() > 0 &&
         env_.runtime.clock().now_ms() - start_ms < env_.options.stop_wait_max_ms) {
    co_await env_.runtime.sleep_ms(env_.options.poll_interval_ms);
  }
  (void)co_await env_.broker.leave_members(env_.unit_category, env_.options.group,
                                           env_.options.owner_id);
}

std::vector<PartitionStatus> Engine::held() const {
  std::vector<PartitionStatus> out;
  for (const auto& [key, worker] : workers_->workers()) {
    if (worker->holds()) out.push_back(worker->status());
  }
  return out;
}

std::uint32_t Engine::tasks_alive() const { return loops_alive_ + workers_->alive(); }

std::uint64_t Engine::index_members_skipped() const { return membership_->members_skipped(); }

std::vector<std::uint64_t> Engine::heartbeat_rounds_ms() const {
  return heartbeat_->recent_rounds_ms();
}

}  // namespace seqby
