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
    if (!read.ok()) {
      if (read.code() == Errc::fenced) {
        env_.record(HistoryOp::read_fenced, &lane.lease, "", read.error().message);
        fenced("read fenced");
        co_return Turn::ended;
      }
      if (read.code() == Errc::no_group) {
        (void)co_await env_.broker.ensure_group(lane.lease.partition, env_.options.group);
      }
      lane.from = ReadFrom::pending;
      if (++lane.transport_failures > env_.options.transport_retry_count_max) {
        co_return Turn::ended;
      }
      co_await env_.runtime.sleep_ms(backoff_ms(env_.options.retry_backoff_ms,
                                                env_.options.retry_backoff_max_ms,
                                                lane.transport_failures));
      co_return Turn::worked;
    }
    lane.transport_failures = 0;
    if (!read.value().has_value()) {
      if (lane.from == ReadFrom::pending) {
        lane.from = ReadFrom::new_entries;
        co_return Turn::worked;
      }
      co_return Turn::idle;
    }
    StreamEntry entry = std::move(*read.value());
    active_ms_ = env_.runtime.clock().now_ms();
    env_.record(HistoryOp::read, &lane.lease, entry.id,
                "delivery=" + std::to_string(entry.delivery_count));
    co_return std::move(entry);
  }

  // fenced_ack.lua right after the handler.
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
