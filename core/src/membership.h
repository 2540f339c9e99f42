// Membership: which units this instance serves (ADR decision 7). It discovers the units from the
// maintained partition indexes, counts the live instances of its group, and takes a fair share
// (ceil(P / N), at most partitions_max) of the units' leases, each instance in its own
// deterministic order; over its share, it releases the least preferred extras. Before it
// acquires anything, it subscribes its group to every category it serves.
//
// It states that the generations this instance is granted rise per unit: the fence counter
// never hands a generation out twice.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "seqby/core/engine_env.h"
#include "seqby/core/engine_steps.h"
#include "seqby/core/task.h"
#include "worker_set.h"

namespace seqby {

class Membership final : public UnitShare {
 public:
  // REQUIRES: every reference outlives the membership and its tasks.
  Membership(const EngineEnv& env, const EngineSteps& steps, WorkerSet& workers)
      : env_(env), steps_(steps), workers_(workers) {}
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  // Discovers and takes a share every discovery_interval_ms until the instance stops.
  Task<void> loop();

  // Index members skipped because they cannot be partition keys (a:b, __partitions__, ...),
  // each counted (and warned of in the history) once per instance: for the metrics.
  std::uint64_t members_skipped() const { return skipped_members_.size(); }
  // Distinct members remembered; beyond, a bad member is skipped without a warning.
  static constexpr std::size_t kSkippedMembersMax = 10'000;

  // UnitShare, for the steps' take_share: the design's share is take_fair_share.
  const EngineEnv& env() const override { return env_; }
  bool stopping() const override { return workers_.stopping(); }
  bool serves(const std::string& key) const override { return workers_.serves(key); }
  void launch(std::shared_ptr<PartitionWorker> worker) override;
  Task<void> take_fair_share(const std::vector<std::string>& keys) override;

 private:
  Task<void> discover_once();
  // The index count's gate: true when this cycle has nothing to do (engine_options.h,
  // kDiscoveryCountedIndexMin).
  Task<bool> share_unchanged();
  // ceil(partitions / members), at most partitions_max.
  std::uint64_t share_target(std::uint64_t partitions, std::uint64_t members) const;
  // The workers whose unit this instance still serves (not asked to stop).
  std::uint64_t active_count() const;
  // Subscribes the group to each category it serves; true once every subscribe succeeded.
  Task<bool> subscribe_categories();
  Task<std::uint64_t> live_member_count();
  std::vector<std::string> acquire_order(std::vector<std::string> keys) const;
  Task<bool> try_acquire(const std::string& key);
  // Returns how many workers it launched.
  Task<std::uint64_t> acquire_batch(const std::vector<std::string>& order, std::uint64_t want);
  // Starts the worker of a lease just granted (sent at `sent_ms`), or releases it when the unit
  // is served already, the instance stops, or its generation is not above the highest this
  // instance was granted for the unit (the fence counter went back: warned). Returns whether a
  // worker started.
  Task<bool> granted(const PartitionRef& partition, const std::string& scope, Lease lease,
                     std::uint64_t sent_ms);
  // The lease an acquire of (partition, scope) granted is well formed (the broker's contract).
  void check_granted(const PartitionRef& partition, const std::string& scope, const Lease& lease);
  // Whether the holder keeps `worker`, whose unit discovery found in no index: only when its
  // lease is held and a stream of it holds entries, and then its key is back in the index
  // (warned).
  Task<bool> keep_unindexed(const PartitionWorker& worker);
  void warn_partition_count(std::size_t count);
  void skip_member(const std::string& category, const std::string& key, const std::string& why);

  const EngineEnv& env_;
  const EngineSteps& steps_;
  WorkerSet& workers_;
  bool subscribed_ = false;         // the group is in every served category's subscriber set
  bool partitions_warned_ = false;  // the index is over partitions_warn_threshold (warned once)
  // The index count's gate: the last full read's member count (before validation); the
  // partitions its share was taken of (and units put back), that share's target and the workers
  // active after it; the full cycles in a row whose acquire (under the target) launched no
  // worker; the count the last cycle read (none when it read none); the cycles ended by the gate
  // since the last full read.
  std::uint64_t indexed_ = 0;
  std::uint64_t shared_partitions_ = 0;
  std::uint64_t shared_target_ = 0;
  std::uint64_t shared_active_ = 0;
  std::uint32_t empty_acquires_ = 0;
  std::optional<std::uint64_t> counted_;
  std::uint32_t cycles_gated_ = 0;
  std::map<std::string, std::uint64_t> granted_generation_;  // per unit key: the highest granted
  std::set<std::string> skipped_members_;                    // "category\nkey", warned of once
};

}  // namespace seqby
