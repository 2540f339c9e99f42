// Heartbeat: the lease renewal of one engine instance (ADR decision 5). Every
// heartbeat_interval_ms (or at once after a round that took longer) it announces the instance as
// a live member of its group and, at the same time, renews the lease of every unit it holds, all
// of them in one batched step (Broker::renew_kept: while the held set is the same, the same set
// of leases, which the broker need not make into commands again). A refused renew, or no renew
// confirmed within a whole lease_ttl_ms, loses the unit at once (its worker stops before its next
// step).
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "seqby/core/engine_env.h"
#include "seqby/core/engine_steps.h"
#include "seqby/core/partition_worker.h"
#include "seqby/core/task.h"
#include "worker_set.h"

namespace seqby {

class Heartbeat {
 public:
  // REQUIRES: every reference outlives the heartbeat and its task.
  Heartbeat(const EngineEnv& env, const EngineSteps& steps, const WorkerSet& workers)
      : env_(env), steps_(steps), workers_(workers) {}
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // Beats until the instance stops and its last worker has ended.
  Task<void> loop();

  // How long the last rounds took (the announce and the renewals, ms), oldest first, at most
  // kRecentRoundsMax.
  static constexpr std::size_t kRecentRoundsMax = 64;
  std::vector<std::uint64_t> recent_rounds_ms() const {
    return {recent_rounds_ms_.begin(), recent_rounds_ms_.end()};
  }

 private:
  // The instance as a live member of its group (Broker::announce_member); its outcome is not
  // looked at (the next round announces again).
  Task<void> announce();
  // The lease of every worker that holds one, as renew_all or renew_one renew it.
  Task<void> renew_held();
  // Every held lease in O(1) round trips (Broker::renew_many), or one after another.
  Task<void> renew_all();
  Task<void> renew_one(const std::shared_ptr<PartitionWorker>& worker);
  // What a renew of `worker`'s lease sent at `sent_ms` came to: renewed, refused, or no answer.
  void renewed(const std::shared_ptr<PartitionWorker>& worker, const Status& renewed,
               std::uint64_t sent_ms);

  const EngineEnv& env_;
  const EngineSteps& steps_;
  const WorkerSet& workers_;
  // renew_all's state, kept from round to round so that a round over an unchanged set copies
  // and compares no lease: the set's workers as of WorkerSet::changes() == members_changes_ (in
  // the set's order), which of them it renews (indices into members_), and their leases as sent
  // (Broker::renew_kept: the same pointer while they are the same).
  std::vector<std::shared_ptr<PartitionWorker>> members_;
  std::uint64_t members_changes_ = 0;
  std::vector<std::size_t> renewing_;
  std::shared_ptr<const std::vector<Lease>> leases_;
  std::deque<std::uint64_t> recent_rounds_ms_;
};

}  // namespace seqby
