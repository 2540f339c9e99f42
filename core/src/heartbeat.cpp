// Heartbeat: membership announcements and lease renewal (ADR decision 5).
#include "heartbeat.h"

#include <vector>

#include "seqby/core/when_all.h"

namespace seqby {

Task<void> Heartbeat::loop() {
  while (!(workers_.stopping() && workers_.alive() == 0)) {
    const std::uint64_t started_ms = env_.runtime.clock().now_ms();
    // The announce and the renewals at once: a server that does not answer one of them (a
    // stopped cluster master) holds the round for one command timeout, not for two.
    std::vector<Task<void>> beats;
    if (!workers_.stopping()) beats.push_back(announce());
    beats.push_back(renew_held());
    co_await when_all(std::move(beats));
    // A round starts every heartbeat_interval_ms, or at once after a round that took longer:
    // a round held by a timeout must not push the next renewal of every lease past its TTL.
    const std::uint64_t took_ms = env_.runtime.clock().now_ms() - started_ms;
    recent_rounds_ms_.push_back(took_ms);
    if (recent_rounds_ms_.size() > kRecentRoundsMax) recent_rounds_ms_.pop_front();
    const std::uint64_t interval_ms = env_.options.heartbeat_interval_ms;
    co_await env_.runtime.sleep_ms(took_ms < interval_ms ? interval_ms - took_ms : 0);
  }
}

Task<void> Heartbeat::announce() {
  (void)co_await env_.broker.announce_member(env_.unit_category, env_.options.group,
                                             env_.options.owner_id, env_.options.lease_ttl_ms);
}

Task<void> Heartbeat::renew_held() {
  if (steps_.leases_by_batch()) {
    co_await renew_all();
    co_return;
  }
  std::vector<std::shared_ptr<PartitionWorker>> snapshot;
  for (const auto& [key, worker] : workers_.workers()) {
    if (worker->holds() && worker->leased()) snapshot.push_back(worker);
  }
  for (const auto& worker : snapshot) co_await renew_one(worker);
}

Task<void> Heartbeat::renew_all() {
  // A worker's lease never changes, so while the set is the same (WorkerSet::changes) so are the
  // leases of the workers that still hold theirs: the round then copies and compares no lease.
  bool same = members_changes_ == workers_.changes();
  if (!same) {
    members_.clear();
    members_.reserve(workers_.workers().size());
    for (const auto& [key, worker] : workers_.workers()) members_.push_back(worker);
    members_changes_ = workers_.changes();
  }
  std::size_t n = 0;
  for (std::size_t m = 0; m < members_.size(); ++m) {
    const PartitionWorker& worker = *members_[m];
    if (!worker.holds() || !worker.leased()) continue;
    if (n == renewing_.size()) {
      renewing_.push_back(m);
      same = false;
    } else if (renewing_[n] != m) {
      renewing_[n] = m;
      same = false;
    }
    ++n;
  }
  if (n != renewing_.size()) {
    renewing_.resize(n);
    same = false;
  }
  if (renewing_.empty()) co_return;
  if (!same || !leases_) {
    auto leases = std::make_shared<std::vector<Lease>>();
    leases->reserve(renewing_.size());
    for (const std::size_t m : renewing_) leases->push_back(members_[m]->lease());
    leases_ = std::move(leases);
  }
  // Only this loop changes members_, renewing_ and leases_, and not while renew_kept reads them.
  const std::uint64_t sent_ms = env_.runtime.clock().now_ms();
  const std::vector<Status> renewed =
      co_await env_.broker.renew_kept(leases_, env_.options.lease_ttl_ms);
  SEQBY_CHECK(renewed.size() == renewing_.size());
  for (std::size_t i = 0; i < renewing_.size(); ++i) {
    this->renewed(members_[renewing_[i]], renewed[i], sent_ms);
  }
}

Task<void> Heartbeat::renew_one(const std::shared_ptr<PartitionWorker>& worker) {
  SEQBY_CHECK(worker->leased());
  const std::uint64_t sent_ms = env_.runtime.clock().now_ms();
  const Status status = co_await env_.broker.renew(worker->lease(), env_.options.lease_ttl_ms);
  renewed(worker, status, sent_ms);
}

void Heartbeat::renewed(const std::shared_ptr<PartitionWorker>& worker, const Status& renewed,
                        std::uint64_t sent_ms) {
  if (!worker->holds()) return;
  if (renewed.ok()) {
    worker->renew_confirmed(sent_ms);
    env_.record(HistoryOp::renew, &worker->lease(), "", "");
    return;
  }
  if (renewed.code() == Errc::fenced) {
    worker->lose("renew refused");
    return;
  }
  // No answer: once a whole TTL has passed since the last confirmed renew, the lease may be
  // gone; stop acting on it (the fence would refuse us anyway).
  if (env_.runtime.clock().now_ms() - worker->last_renew_ok_ms() >= env_.options.lease_ttl_ms) {
    worker->lose("no renew confirmed within lease_ttl_ms");
  }
}

}  // namespace seqby
