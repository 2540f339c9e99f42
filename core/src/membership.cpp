// Membership: discovery with fair sharing (ADR decision 7).
#include "membership.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "seqby/core/fnv1a.h"
#include "seqby/core/keys.h"
#include "seqby/core/keyspace.h"

namespace seqby {

Task<void> Membership::loop() {
  while (!workers_.stopping()) {
    co_await discover_once();
    if (workers_.stopping()) break;
    co_await env_.runtime.sleep_ms(env_.options.discovery_interval_ms);
  }
}

// Instance-specific but deterministic: each instance walks the partitions in its own order, so
// instances do not all race for the same partition first.
std::vector<std::string> Membership::acquire_order(std::vector<std::string> keys) const {
  std::vector<std::pair<std::uint64_t, std::string>> ranked;
  ranked.reserve(keys.size());
  for (auto& key : keys) {
    ranked.emplace_back(fnv1a64(env_.options.owner_id + ":" + key), std::move(key));
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  out.reserve(ranked.size());
  for (auto& [hash, key] : ranked) out.push_back(std::move(key));
  return out;
}

Task<std::uint64_t> Membership::live_member_count() {
  Result<std::vector<std::string>> members =
      co_await env_.broker.live_members(env_.unit_category, env_.options.group);
  // Unknown membership: count only ourselves (never hold back partitions for lack of a reply).
  if (!members.ok()) co_return 1;
  const auto& names = members.value();
  const std::string& self = env_.options.owner_id;
  const bool self_listed = std::find(names.begin(), names.end(), self) != names.end();
  co_return names.size() + (self_listed ? 0 : 1);
}

// Once subscribed, a category's partitions are not reaped before this group joined them (its
// consumer group exists there), so nothing is acquired before: a failed subscribe is retried
// on the next discovery cycle.
Task<bool> Membership::subscribe_categories() {
  const std::vector<std::string> own{env_.options.category};
  for (const std::string& category : env_.process_manager() ? env_.options.pm_categories : own) {
    Status subscribed = co_await env_.broker.subscribe(category, env_.options.group);
    if (!subscribed.ok()) co_return false;
  }
  co_return true;
}

Task<void> Membership::discover_once() {
  if (!subscribed_) {
    const bool subscribed = co_await subscribe_categories();  // not inside the if (g++ 12)
    if (!subscribed) co_return;
    subscribed_ = true;
  }
  const bool unchanged = co_await share_unchanged();  // not inside the if (g++ 12)
  if (unchanged) co_return;
  // A process manager's units are the correlation values found in any of its categories.
  std::vector<std::string> keys;
  std::uint64_t indexed = 0;
  const std::vector<std::string> own{env_.options.category};
  for (const std::string& category : env_.process_manager() ? env_.options.pm_categories : own) {
    Result<std::vector<std::string>> index = co_await env_.broker.partitions(category);
    if (!index.ok()) co_return;
    indexed += index.value().size();
    for (const auto& key : index.value()) {
      if (Status valid = validate_partition_key(key); valid.ok()) {
        keys.push_back(key);
      } else {
        skip_member(category, key, valid.error().message);
      }
    }
  }
  // One index comes sorted from the broker (RedisBroker::partitions); ten thousand keys sorted
  // again every cycle were a twentieth of an idle instance's CPU.
  if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  warn_partition_count(keys.size());
  indexed_ = indexed;
  shared_partitions_ = 0;  // take_fair_share says of how many, if it is the share taken
  cycles_gated_ = 0;
  co_await steps_.take_share(*this, keys);
  shared_active_ = active_count();
}

// Only a cycle that would do nothing is ended here (engine_options.h, kDiscoveryCountedIndexMin):
// the index's count, the share's target and the instance's active workers are those of the last
// full cycle, and the instance holds its target, or is short of it by less than the live
// members with the last kDiscoveryEmptyAcquiresMin full cycles' acquires granted nothing (the
// rest is held by others: ceil(P / N) * N > P leaves some instance short for good). The previous
// release's protocol (leases one at a time) and a process manager (an index per category) read
// every index every cycle.
Task<bool> Membership::share_unchanged() {
  if (env_.process_manager() || !steps_.leases_by_batch() || indexed_ < kDiscoveryCountedIndexMin) {
    counted_.reset();
    co_return false;
  }
  const Result<std::uint64_t> count = co_await env_.broker.partition_count(env_.options.category);
  if (!count.ok()) {
    counted_.reset();
    co_return false;
  }
  const bool same = counted_ == count.value();
  counted_ = count.value();
  if (!same || cycles_gated_ + 1 >= kDiscoveryFullReadEvery || shared_partitions_ == 0) {
    co_return false;
  }
  const std::uint64_t members = co_await live_member_count();
  const std::uint64_t target = share_target(shared_partitions_, members);
  const std::uint64_t active = active_count();
  const bool held = active == target;
  // Short by less than the members: what ceil(P / N) * N - P (at most N - 1) leaves; a joining
  // instance is short by its whole share, and reads the index every cycle until it holds it.
  const bool short_for_good =
      active < target && target - active < members && empty_acquires_ >= kDiscoveryEmptyAcquiresMin;
  if (workers_.stopping() || target != shared_target_ || active != shared_active_ ||
      !(held || short_for_good)) {
    co_return false;
  }
  ++cycles_gated_;
  co_return true;
}

std::uint64_t Membership::share_target(std::uint64_t partitions, std::uint64_t members) const {
  const std::uint64_t target = (partitions + members - 1) / members;  // ceil(P / N)
  const std::uint64_t max = env_.options.partitions_max;
  return max > 0 && target > max ? max : target;
}

std::uint64_t Membership::active_count() const {
  std::uint64_t count = 0;
  for (const auto& [key, worker] : workers_.workers()) {
    if (worker->active()) ++count;
  }
  return count;
}

// A unit gone from every index was reaped (a process manager's correlation value: on each of its
// streams, which needs its group to have acked everything there), or lost its index entry while
// its stream kept its entries (a failover to a replica that lacked the publish's SADD, an
// operator's SREM). Reaped: release it. This is the worker of an instance whose discovery read the
// unit before the reap and acquired it after (its lease was deleted with the stream, so the
// acquire got a fresh one, and its group made the stream again, empty): left alone it holds a
// partition nobody publishes to for good, and counts it in its share (cluster seed 514: the last
// event of another key starved). Lost: its entries would wait for the next publish to the key, so
// the holder puts it back (Broker::reindex) and keeps serving it.
Task<bool> Membership::keep_unindexed(const PartitionWorker& worker) {
  if (!worker.active() || !worker.leased()) co_return false;
  const Lease lease = worker.lease();
  const Result<bool> live = co_await env_.broker.reindex(lease);
  if (!live.ok() || !live.value()) co_return false;
  env_.record(HistoryOp::warn, &lease, "", std::string(kPutBackWarning));
  co_return true;
}

void Membership::launch(std::shared_ptr<PartitionWorker> worker) {
  SEQBY_CHECK(!workers_.stopping());
  workers_.launch(std::move(worker));
}

Task<void> Membership::take_fair_share(const std::vector<std::string>& keys) {
  // A held unit gone from every index: reaped, or its index entry lost (keep_unindexed). The
  // workers and `keys` are both in key order: one walk, not a search per worker.
  std::vector<std::shared_ptr<PartitionWorker>> unindexed;
  auto indexed = keys.begin();
  for (const auto& [key, worker] : workers_.workers()) {
    while (indexed != keys.end() && *indexed < key) ++indexed;
    if (indexed == keys.end() || *indexed != key) unindexed.push_back(worker);
  }
  std::uint64_t partitions = keys.size();  // and the units put back, which it did not list
  for (const std::shared_ptr<PartitionWorker>& worker : unindexed) {
    const bool kept = co_await keep_unindexed(*worker);  // not inside the if (g++ 12)
    if (kept) {
      ++partitions;
    } else {
      worker->request_stop();
    }
  }
  const std::uint64_t members = co_await live_member_count();
  const std::uint64_t target = share_target(partitions, members);
  shared_partitions_ = partitions;
  shared_target_ = target;
  std::uint64_t count = active_count();
  // Counted again below when this cycle's acquire launches nothing.
  const std::uint32_t empty_before = std::exchange(empty_acquires_, 0);
  if (count > target) {
    // Over the fair share: release the least preferred extras, each after its current event.
    std::vector<std::string> holding;
    for (const auto& [key, worker] : workers_.workers()) {
      if (worker->active()) holding.push_back(key);
    }
    const std::vector<std::string> order = acquire_order(holding);
    for (std::size_t i = target; i < order.size(); ++i) {
      auto it = workers_.workers().find(order[i]);
      if (it != workers_.workers().end()) it->second->request_stop();
    }
    co_return;
  }
  // The share is held: nothing to acquire, so no order to rank (a hash of every key of the index
  // and a sort of them, each discovery cycle of an instance that holds its share).
  if (count >= target || workers_.stopping()) co_return;
  const std::vector<std::string> order = acquire_order(keys);
  if (steps_.leases_by_batch()) {
    const std::uint64_t launched = co_await acquire_batch(order, target - count);
    if (launched == 0) empty_acquires_ = empty_before + 1;
    co_return;
  }
  for (const auto& key : order) {
    if (workers_.stopping() || count >= target) break;
    if (workers_.serves(key)) continue;               // held, or its worker is still ending
    const bool acquired = co_await try_acquire(key);  // not inside the if (g++ 12)
    if (acquired) ++count;
  }
}

// The units of `order` this instance does not serve, acquired in that order by the batch until
// `want` were granted (Broker::acquire_many: one round trip per batch, not per unit).
Task<std::uint64_t> Membership::acquire_batch(const std::vector<std::string>& order,
                                              std::uint64_t want) {
  if (want == 0 || workers_.stopping()) co_return 0;
  std::vector<PartitionRef> candidates;
  for (const auto& key : order) {
    if (!workers_.serves(key)) candidates.push_back(PartitionRef{env_.unit_category, key});
  }
  if (candidates.empty()) co_return 0;
  const std::string scope = env_.options.lease_per_group ? env_.options.group : std::string();
  const std::uint64_t sent_ms = env_.runtime.clock().now_ms();
  Result<std::vector<std::optional<Lease>>> got = co_await env_.broker.acquire_many(
      candidates, scope, env_.options.owner_id, env_.options.lease_ttl_ms, want);
  if (!got.ok()) co_return 0;
  std::uint64_t launched = 0;
  for (std::size_t i = 0; i < got.value().size(); ++i) {
    if (!got.value()[i].has_value()) continue;
    Lease lease = std::move(*got.value()[i]);
    const bool started = co_await granted(candidates[i], scope, std::move(lease), sent_ms);
    if (started) ++launched;
  }
  co_return launched;
}

Task<bool> Membership::granted(const PartitionRef& partition, const std::string& scope, Lease lease,
                               std::uint64_t sent_ms) {
  check_granted(partition, scope, lease);
  std::uint64_t& highest = granted_generation_[partition.key];
  if (lease.generation <= highest) {
    // The fence counter went back: the server lost writes (a failover to a replica that lagged,
    // a restart without persistence; docs/ARCHITECTURE.md "What a failover keeps"). A generation
    // is never acted on twice: the lease is given back unused, and a later acquire gets the next
    // generation, until it passes the highest this instance held.
    env_.record(HistoryOp::warn, nullptr, "",
                "generation " + std::to_string(lease.generation) + " of " + partition.category +
                    ":" + partition.key + " granted again (this instance held " +
                    std::to_string(highest) +
                    "): the fence counter went back, as after a failover that lost writes; "
                    "released unused");
    (void)co_await env_.broker.release(lease);
    co_return false;
  }
  highest = lease.generation;
  if (workers_.stopping() || workers_.serves(partition.key)) {
    (void)co_await env_.broker.release(lease);
    co_return false;
  }
  std::shared_ptr<PartitionWorker> worker = steps_.make_worker(env_, std::move(lease));
  worker->acquired_at(sent_ms);
  env_.record(HistoryOp::acquire, &worker->lease(), "", "");
  workers_.launch(std::move(worker));
  co_return true;
}

// A member of an index that no publisher of seqby writes (a foreign publisher's bad key): it is
// never a unit, so no lease is taken for it; the operator hears of it once per instance.
void Membership::skip_member(const std::string& category, const std::string& key,
                             const std::string& why) {
  const std::string seen = category + '\n' + key;
  if (skipped_members_.size() >= kSkippedMembersMax || !skipped_members_.insert(seen).second) {
    return;
  }
  env_.record(HistoryOp::warn, nullptr, "",
              "index member of " + partition_index_name(category) +
                  " is no partition, skipped (no lease taken): " + why);
}

// A category past the threshold is a high-cardinality misuse in the making (ADR, limits).
void Membership::warn_partition_count(std::size_t count) {
  const std::uint32_t threshold = env_.options.partitions_warn_threshold;
  if (threshold == 0) return;
  if (count <= threshold) {
    partitions_warned_ = false;
    return;
  }
  if (partitions_warned_) return;
  partitions_warned_ = true;
  env_.record(
      HistoryOp::warn, nullptr, "",
      "live partitions " + std::to_string(count) + " over threshold " + std::to_string(threshold));
}

void Membership::check_granted(const PartitionRef& partition, const std::string& scope,
                               const Lease& lease) {
  // The partition asked for, in whatever key layout the broker spells it (keyspace.h).
  SEQBY_CHECK(lease.partition.category == partition.category);
  SEQBY_CHECK(lease.partition.key == partition.key);
  SEQBY_CHECK(lease.scope == scope);
  SEQBY_CHECK(lease.owner_id == env_.options.owner_id);
  SEQBY_CHECK(lease.process_manager.empty());
  SEQBY_CHECK(lease.generation >= 1);
}

Task<bool> Membership::try_acquire(const std::string& key) {
  const PartitionRef partition{env_.unit_category, key};
  const std::string scope = env_.options.lease_per_group ? env_.options.group : std::string();
  const std::uint64_t sent_ms = env_.runtime.clock().now_ms();
  Result<std::optional<Lease>> got = co_await env_.broker.acquire(
      partition, scope, env_.options.owner_id, env_.options.lease_ttl_ms);
  if (!got.ok() || !got.value().has_value()) co_return false;
  Lease lease = std::move(*got.value());
  const bool launched = co_await granted(partition, scope, std::move(lease), sent_ms);
  co_return launched;
}

}  // namespace seqby
