// Heartbeat: membership announcements and lease renewal (ADR decision 5).
#include "heartbeat.h"

#include <vector>

namespace seqby {

Task<void> Heartbeat::loop() {
  while (!(workers_.stopping() && workers_.alive() == 0)) {
    if (!workers_.stopping()) {
      (void)co_await env_.broker.announce_member(env_.unit_category, env_.options.group,
                                                 env_.options.owner_id, env_.options.lease_ttl_ms);
    }
    std::vector<std::shared_ptr<PartitionWorker>> snapshot;
    for (const auto& [key, worker] : workers_.workers()) {
      if (worker->holds() && worker->leased()) snapshot.push_back(worker);
    }
    if (steps_.leases_by_batch()) {
      co_await renew_all(snapshot);
    } else {
      for (const auto& worker : snapshot) co_await renew_one(worker);
    }
    co_await env_.runtime.sleep_ms(env_.options.heartbeat_interval_ms);
  }
}

Task<void> Heartbeat::renew_all(const std::vector<std::shared_ptr<PartitionWorker>>& workers) {
  if (workers.empty()) co_return;
  bool same = leases_.size() == workers.size();
  for (std::size_t i = 0; same && i < workers.size(); ++i) same = leases_[i] == workers[i]->lease();
  if (!same) {
    leases_.clear();
    leases_.reserve(workers.size());
    for (const auto& worker : workers) leases_.push_back(worker->lease());
  }
  // Only this loop changes leases_, and not while renew_many reads it.
  const std::vector<Lease>& leases = leases_;
  const std::uint64_t sent_ms = env_.runtime.clock().now_ms();
  const std::vector<Status> renewed =
      co_await env_.broker.renew_many(leases, env_.options.lease_ttl_ms);
  SEQBY_CHECK(renewed.size() == workers.size());
  for (std::size_t i = 0; i < workers.size(); ++i) this->renewed(workers[i], renewed[i], sent_ms);
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
