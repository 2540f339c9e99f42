#include "seqby/core/broker.h"

#include <charconv>
#include <optional>
#include <system_error>

#include "seqby/core/check.h"
#include "seqby/core/lease.h"

namespace seqby {

std::string lease_key_for(const PartitionRef& partition, std::string_view scope) {
  return lease_key_name(partition.category, partition.key, scope, partition.layout);
}

std::string Lease::token() const {
  // Built in one string: the heartbeat makes ten thousand of these a round, every fenced step one.
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, generation);
  SEQBY_CHECK(ec == std::errc());
  std::string out;
  out.reserve(owner_id.size() + 1 + static_cast<std::size_t>(end - digits));
  out += owner_id;
  out += ':';
  out.append(digits, end);
  return out;
}

PartitionRef Lease::unit() const {
  if (process_manager.empty()) return partition;
  return PartitionRef{pm_lease_category(process_manager), partition.key, partition.layout};
}

std::string Lease::key() const {
  // A partition lease is of its own partition: no copy of it through unit().
  if (process_manager.empty()) return lease_key_for(partition, scope);
  return lease_key_for(unit(), scope);
}

Lease Lease::on(std::string_view category) const {
  SEQBY_CHECK(!process_manager.empty());
  Lease out = *this;
  out.partition.category = std::string(category);
  return out;
}

Task<Result<std::uint64_t>> Broker::partition_count(std::string_view) {
  co_return make_error(Errc::unsupported, "this broker cannot count a partition index");
}

Task<std::vector<Result<NextReply>>> Broker::fenced_steps(const std::vector<StepCall>& steps) {
  std::vector<Result<NextReply>> out;
  out.reserve(steps.size());
  for (const StepCall& step : steps) {
    Result<NextReply> stepped =
        co_await fenced_next(*step.lease, step.group, step.from, step.ack_id, step.ask);
    out.push_back(std::move(stepped));
  }
  co_return out;
}

std::size_t Broker::steps_per_call_max() const { return 1; }

Task<Result<NextReply>> Broker::fenced_next(const Lease& lease, std::string_view group,
                                            ReadFrom from, std::string_view ack_id, NextAsk ask) {
  NextReply out;
  if (ask.commit != nullptr) {
    Result<CommitReply> committed =
        co_await fenced_commit(lease, group, ask.commit->seq, ask.commit->effect);
    if (!committed.ok()) co_return committed.error();
    if (committed.value().outcome == CommitOutcome::fenced) {
      co_return Error{Errc::fenced, "FENCED lease not held by " + lease.token()};
    }
    out.commit = std::move(committed).value();
    if (out.commit->outcome == CommitOutcome::out_of_order) co_return out;
  }
  // Once a commit stood, a failure of the rest is the step's, told beside it.
  auto failed = [&out](Error error) -> Result<NextReply> {
    if (!out.commit.has_value()) return error;
    out.ack_asked = false;
    out.step_failed = std::move(error);
    return std::move(out);
  };
  if (!ack_id.empty()) {
    out.ack_asked = true;
    const Status acked = co_await fenced_ack(lease, group, ack_id);
    if (!acked.ok()) co_return failed(acked.error());
  }
  if (!ask.held_id.empty()) {
    const Status held = co_await check_lease(lease);
    if (!held.ok()) co_return failed(held.error());
    out.held_checked = true;
    co_return out;
  }
  Result<std::optional<StreamEntry>> read = co_await fenced_read(lease, group, from);
  if (!read.ok()) co_return failed(read.error());
  out.entry = std::move(read.value());
  co_return out;
}

Task<std::vector<Status>> Broker::renew_many(const std::vector<Lease>& leases,
                                             std::uint64_t ttl_ms) {
  std::vector<Status> out;
  out.reserve(leases.size());
  std::optional<Error> unanswered;
  for (const Lease& lease : leases) {
    if (unanswered) {
      out.emplace_back(*unanswered);
      continue;
    }
    Status renewed = co_await renew(lease, ttl_ms);
    if (!renewed.ok() && renewed.code() != Errc::fenced) unanswered = renewed.error();
    out.push_back(std::move(renewed));
  }
  co_return out;
}

Task<std::vector<Status>> Broker::renew_kept(std::shared_ptr<const std::vector<Lease>> leases,
                                             std::uint64_t ttl_ms) {
  std::vector<Status> out = co_await renew_many(*leases, ttl_ms);
  co_return out;
}

Task<Result<std::vector<std::optional<Lease>>>> Broker::acquire_many(
    const std::vector<PartitionRef>& partitions, std::string_view scope, std::string_view owner_id,
    std::uint64_t ttl_ms, std::size_t want) {
  SEQBY_CHECK(want >= 1);
  std::vector<std::optional<Lease>> out;
  std::size_t granted = 0;
  for (const PartitionRef& partition : partitions) {
    if (granted >= want) break;
    Result<std::optional<Lease>> got = co_await acquire(partition, scope, owner_id, ttl_ms);
    if (!got.ok()) co_return got.error();
    if (got.value().has_value()) ++granted;
    out.push_back(std::move(got.value()));
  }
  co_return out;
}

std::uint64_t Broker::failovers_seen() const { return 0; }

PartitionRef Broker::laid_out(const PartitionRef& partition) const { return partition; }

std::size_t Broker::wake_channels() const { return 1; }

Task<Result<std::vector<std::size_t>>> Broker::wait_for_entries(std::string_view, std::string_view,
                                                                std::size_t,
                                                                const std::vector<WatchedStream>&,
                                                                std::uint64_t) {
  co_return make_error(Errc::unsupported, "this broker cannot wait for new entries");
}

Task<Status> Broker::ring_wake(std::string_view, std::string_view, std::size_t) {
  co_return make_error(Errc::unsupported, "this broker cannot wait for new entries");
}

const char* commit_outcome_name(CommitOutcome outcome) {
  switch (outcome) {
    case CommitOutcome::accepted:
      return "accepted";
    case CommitOutcome::duplicate:
      return "duplicate";
    case CommitOutcome::out_of_order:
      return "out_of_order";
    case CommitOutcome::fenced:
      return "fenced";
  }
  return "unknown";
}

}  // namespace seqby
