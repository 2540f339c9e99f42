// The previous release's protocol (seqby/testing/previous_release.h), as steps on the engine's
// seam: the worker's read, ack and idle wait, and leases one at a time.
#include "seqby/testing/previous_release.h"

#include <utility>

namespace seqby::testing {
namespace {

class PreviousReleaseWorker final : public PartitionWorker {
 public:
  using PartitionWorker::PartitionWorker;

 protected:
  // fenced_read.lua: the read alone, no ack riding on it, and no stream id to wait after.
  Task<Next> next_entry(Lane& lane) override {
    check_may_send();
    Result<std::optional<StreamEntry>> read =
        co_await env_.broker.fenced_read(lane.lease, env_.options.group, lane.from);
    NextReply reply;
    if (read.ok()) reply.entry = std::move(read.value());
    Result<NextReply> came =
        read.ok() ? Result<NextReply>(std::move(reply)) : Result<NextReply>(read.error());
    Next next = co_await read_came_to(lane, std::move(came));
    co_return next;
  }

  // fenced_ack.lua right after the handler (a handler's commit_with_step is made before it, by
  // itself: the previous release had no step to carry it).
  bool commits_with_step() const override { return false; }
  Task<Step> handled(Lane& lane, const StreamEntry& entry) override {
    const Step acked = co_await ack(lane, entry.id);
    co_return acked;
  }

  // Polling: a poll interval's sleep (a stop still ends it at once).
  Task<void> idle_wait() override {
    const bool rung = co_await env_.runtime.wait_alarm(idle_alarm_, env_.options.poll_interval_ms);
    (void)rung;
  }
};

class PreviousReleaseSteps final : public EngineSteps {
 public:
  std::shared_ptr<PartitionWorker> make_worker(const EngineEnv& env, Lease lease) const override {
    return std::make_shared<PreviousReleaseWorker>(env, std::move(lease));
  }
  bool leases_by_batch() const override { return false; }
};

}  // namespace

std::unique_ptr<EngineSteps> previous_release_steps() {
  return std::make_unique<PreviousReleaseSteps>();
}

}  // namespace seqby::testing
