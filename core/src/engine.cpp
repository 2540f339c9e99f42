// Engine: lifecycle, discovery with fair sharing (decision 7) and the lease heartbeat
// (decision 5). The partition worker is in engine_worker.cpp.
#include "seqby/core/engine.h"

#include <algorithm>

#include "seqby/core/keys.h"

namespace seqby {
namespace {

// FNV-1a, 64 bit: a fixed hash so that the acquire order is the same in every run and build.
std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace

Engine::Engine(Runtime& runtime, Broker& broker, HistorySink& history, Handler& handler,
               EngineOptions options)
    : runtime_(runtime),
      broker_(broker),
      history_(history),
      handler_(handler),
      options_(std::move(options)),
      unit_category_(options_.pm_categories.empty() ? options_.category
                                                    : pm_lease_category(options_.group)) {
  SEQBY_CHECK(validate_engine_options(options_).ok());
}

void Engine::start() {
  SEQBY_CHECK(!started_);
  started_ = true;
  tasks_alive_ += 2;
  runtime_.spawn("discovery", discovery_loop());
  runtime_.spawn("heartbeat", heartbeat_loop());
}

Task<void> Engine::stop() {
  stopping_ = true;
  for (auto& [key, slot] : slots_) slot->stop_requested = true;
  const std::uint64_t start_ms = runtime_.clock().now_ms();
  while (tasks_alive_ > 0 && runtime_.clock().now_ms() - start_ms < options_.stop_wait_max_ms) {
    co_await runtime_.sleep_ms(options_.poll_interval_ms);
  }
  (void)co_await broker_.leave_members(unit_category_, options_.group, options_.owner_id);
}

std::vector<PartitionStatus> Engine::held() const {
  std::vector<PartitionStatus> out;
  for (const auto& [key, slot] : slots_) {
    if (slot->lost || slot->released) continue;
    PartitionStatus status{key, slot->lease.generation, false, ""};
    for (const Lane& lane : slot->lanes) {
      if (lane.halted && !status.halted) {
        status.halted = true;
        status.halt_id = lane.halt_id;
      }
    }
    out.push_back(std::move(status));
  }
  return out;
}

void Engine::record(HistoryOp op, const Lease* lease, std::string event_id, std::string detail) {
  HistoryRecord r;
  r.time_ms = runtime_.clock().now_ms();
  r.node = options_.owner_id;
  r.op = op;
  r.category = lease != nullptr ? lease->partition.category : unit_category_;
  r.group = options_.group;
  if (lease != nullptr) {
    r.key = lease->partition.key;
    r.generation = lease->generation;
  }
  r.event_id = std::move(event_id);
  r.detail = std::move(detail);
  history_.record(std::move(r));
}

void Engine::lose(Slot& slot, std::string detail) {
  if (slot.lost) return;
  slot.lost = true;
  record(HistoryOp::lose, &slot.lease, "", std::move(detail));
}

Task<void> Engine::transport_backoff(std::uint32_t attempt) {
  co_await runtime_.sleep_ms(
      backoff_ms(options_.retry_backoff_ms, options_.retry_backoff_max_ms, attempt));
}

// --- discovery ------------------------------------------------------------------------------

Task<void> Engine::discovery_loop() {
  while (!stopping_) {
    co_await discover_once();
    if (stopping_) break;
    co_await runtime_.sleep_ms(options_.discovery_interval_ms);
  }
  --tasks_alive_;
}

// Instance-specific but deterministic: each instance walks the partitions in its own order, so
// instances do not all race for the same partition first.
std::vector<std::string> Engine::acquire_order(std::vector<std::string> keys) const {
  std::vector<std::pair<std::uint64_t, std::string>> ranked;
  ranked.reserve(keys.size());
  for (auto& key : keys) {
    ranked.emplace_back(fnv1a64(options_.owner_id + ":" + key), std::move(key));
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  out.reserve(ranked.size());
  for (auto& [hash, key] : ranked) out.push_back(std::move(key));
  return out;
}

Task<std::uint64_t> Engine::live_member_count() {
  Result<std::vector<std::string>> members =
      co_await broker_.live_members(unit_category_, options_.group);
  // Unknown membership: count only ourselves (never hold back partitions for lack of a reply).
  if (!members.ok()) co_return 1;
  const auto& names = members.value();
  const bool self_listed = std::find(names.begin(), names.end(), options_.owner_id) != names.end();
  co_return names.size() + (self_listed ? 0 : 1);
}

// Once subscribed, a category's partitions are not reaped before this group joined them (its
// consumer group exists there), so nothing is acquired before: a failed subscribe is retried
// on the next discovery cycle.
Task<bool> Engine::subscribe_categories() {
  const std::vector<std::string> own{options_.category};
  for (const std::string& category : process_manager() ? options_.pm_categories : own) {
    Status subscribed = co_await broker_.subscribe(category, options_.group);
    if (!subscribed.ok()) co_return false;
  }
  co_return true;
}

Task<void> Engine::discover_once() {
  if (!subscribed_) {
    const bool subscribed = co_await subscribe_categories();  // not inside the if (g++ 12)
    if (!subscribed) co_return;
    subscribed_ = true;
  }
  // A process manager's units are the correlation values found in any of its categories.
  std::vector<std::string> keys;
  const std::vector<std::string> own{options_.category};
  for (const std::string& category : process_manager() ? options_.pm_categories : own) {
    Result<std::vector<std::string>> index = co_await broker_.partitions(category);
    if (!index.ok()) co_return;
    for (const auto& key : index.value()) {
      if (validate_partition_key(key).ok()) keys.push_back(key);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  warn_partition_count(keys.size());
  if (lease_free()) {  // KNOWN-BROKEN shared_group, message_lock: every instance serves every key
    for (const auto& key : keys) {
      if (!stopping_ && slots_.count(key) == 0) serve_without_lease(key);
    }
    co_return;
  }
  const std::uint64_t members = co_await live_member_count();
  std::uint64_t target = (keys.size() + members - 1) / members;  // ceil(P / N)
  if (options_.partitions_max > 0 && target > options_.partitions_max) {
    target = options_.partitions_max;
  }

  std::vector<std::string> holding;
  for (const auto& [key, slot] : slots_) {
    // A correlation value gone from every index was reaped on each of its streams (a reap needs
    // the process manager's group to have acked everything there): release it. A partition's
    // own worker ends itself when it reaps, so this only ever applies to process managers.
    if (process_manager() && !std::binary_search(keys.begin(), keys.end(), key)) {
      slot->stop_requested = true;
    }
    if (active(*slot)) holding.push_back(key);
  }
  if (holding.size() > target) {
    // Over the fair share: release the least preferred extras, each after its current event.
    std::vector<std::string> order = acquire_order(holding);
    for (std::size_t i = target; i < order.size(); ++i) {
      auto it = slots_.find(order[i]);
      if (it != slots_.end()) it->second->stop_requested = true;
    }
    co_return;
  }
  std::uint64_t count = holding.size();
  for (const auto& key : acquire_order(std::move(keys))) {
    if (stopping_ || count >= target) break;
    if (slots_.count(key) != 0) continue;             // held, or its worker is still ending
    const bool acquired = co_await try_acquire(key);  // not inside the if: see engine_worker.cpp
    if (acquired) ++count;
  }
}

// A category past the threshold is a high-cardinality misuse in the making (ADR, limits).
void Engine::warn_partition_count(std::size_t count) {
  const std::uint32_t threshold = options_.partitions_warn_threshold;
  if (threshold == 0) return;
  if (count <= threshold) {
    partitions_warned_ = false;
    return;
  }
  if (partitions_warned_) return;
  partitions_warned_ = true;
  record(
      HistoryOp::warn, nullptr, "",
      "live partitions " + std::to_string(count) + " over threshold " + std::to_string(threshold));
}

Engine::SlotPtr Engine::make_slot(Lease lease) const {
  auto slot = std::make_shared<Slot>();
  if (process_manager()) {
    lease.process_manager = options_.group;
    for (const std::string& category : options_.pm_categories) {
      slot->lanes.emplace_back().lease = lease.on(category);
    }
  } else {
    slot->lanes.emplace_back().lease = lease;
  }
  slot->lease = std::move(lease);
  return slot;
}

Task<bool> Engine::try_acquire(const std::string& key) {
  const PartitionRef partition{unit_category_, key};
  const std::string scope = options_.lease_per_group ? options_.group : std::string();
  const std::uint64_t sent_ms = runtime_.clock().now_ms();
  Result<std::optional<Lease>> got =
      co_await broker_.acquire(partition, scope, options_.owner_id, options_.lease_ttl_ms);
  if (!got.ok() || !got.value().has_value()) co_return false;
  Lease lease = std::move(*got.value());
  if (stopping_ || slots_.count(key) != 0) {
    (void)co_await broker_.release(lease);
    co_return false;
  }
  SlotPtr slot = make_slot(std::move(lease));
  slot->last_renew_ok_ms = sent_ms;
  slot->active_ms = sent_ms;
  slots_[key] = slot;
  record(HistoryOp::acquire, &slot->lease, "", "");
  ++tasks_alive_;
  ++workers_alive_;
  runtime_.spawn("worker", worker(slot));
  co_return true;
}

// --- heartbeat ------------------------------------------------------------------------------

Task<void> Engine::heartbeat_loop() {
  while (!(stopping_ && workers_alive_ == 0)) {
    if (!stopping_) {
      (void)co_await broker_.announce_member(unit_category_, options_.group, options_.owner_id,
                                             options_.lease_ttl_ms);
    }
    std::vector<SlotPtr> snapshot;
    for (const auto& [key, slot] : slots_) {
      // Generation 0: a broken variant's worker without a lease (nothing to renew).
      if (!slot->lost && !slot->released && slot->lease.generation > 0) snapshot.push_back(slot);
    }
    for (const auto& slot : snapshot) co_await renew_one(slot);
    co_await runtime_.sleep_ms(options_.heartbeat_interval_ms);
  }
  --tasks_alive_;
}

Task<void> Engine::renew_one(const SlotPtr& slot) {
  const std::uint64_t sent_ms = runtime_.clock().now_ms();
  Status renewed = co_await broker_.renew(slot->lease, options_.lease_ttl_ms);
  if (slot->lost || slot->released) co_return;
  if (renewed.ok()) {
    slot->last_renew_ok_ms = sent_ms;
    record(HistoryOp::renew, &slot->lease, "", "");
    co_return;
  }
  if (renewed.code() == Errc::fenced) {
    lose(*slot, "renew refused");
    co_return;
  }
  // No answer: once a whole TTL has passed since the last confirmed renew, the lease may be
  // gone; stop acting on it (the fence would refuse us anyway).
  if (runtime_.clock().now_ms() - slot->last_renew_ok_ms >= options_.lease_ttl_ms) {
    lose(*slot, "no renew confirmed within lease_ttl_ms");
  }
}

}  // namespace seqby
