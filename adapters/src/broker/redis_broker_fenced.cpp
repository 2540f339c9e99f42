// RedisBroker: the fenced partition calls. Each is one Lua script that first checks
// `GET lease == O:N` and replies FENCED otherwise (adapters/lua/*.lua).
#include "redis_broker_detail.h"
#include "seqby/broker/redis_broker.h"

namespace seqby::redis {

using detail::shape_error;
using detail::status_of;

Task<Status> RedisBroker::check_lease(const Lease& lease) {
  std::vector<std::string> script_keys{lease.key()};
  std::vector<std::string> script_args{lease.token()};
  co_return status_of(
      co_await run_script("check_lease", std::move(script_keys), std::move(script_args)));
}

Task<Result<std::uint64_t>> RedisBroker::reclaim(const Lease& lease, std::string_view group) {
  std::string cursor = "0-0";
  std::uint64_t claimed = 0;
  for (std::uint32_t call = 0; call < options_.reclaim_scripts_max; ++call) {
    std::vector<std::string> script_keys{lease.key(), lease.partition.stream()};
    std::vector<std::string> script_args{lease.token(), std::string(group),
                                         std::to_string(options_.reclaim_count_per_call),
                                         std::to_string(options_.reclaim_calls_per_script), cursor};
    Result<Reply> reply =
        co_await run_script("reclaim", std::move(script_keys), std::move(script_args));
    if (!reply.ok()) co_return reply.error();
    const Reply& r = reply.value();
    if (r.is_error()) co_return error_from_reply(r);
    if (r.kind != Reply::Kind::array || r.elements.size() != 2 ||
        r.elements[0].kind != Reply::Kind::integer || r.elements[1].kind != Reply::Kind::bulk) {
      co_return shape_error("reclaim", r);
    }
    claimed += static_cast<std::uint64_t>(r.elements[0].integer);
    cursor = r.elements[1].str;
    if (cursor == "0-0") co_return claimed;
  }
  co_return make_error(Errc::protocol, "reclaim: pending list not scanned within " +
                                           std::to_string(options_.reclaim_scripts_max) +
                                           " scripts");
}

Task<Result<std::uint64_t>> RedisBroker::drop_stale_consumers(const Lease& lease,
                                                              std::string_view group) {
  std::vector<std::string> script_keys{lease.key(), lease.partition.stream()};
  std::vector<std::string> script_args{lease.token(), std::string(group),
                                       std::to_string(lease.generation)};
  Result<Reply> reply =
      co_await run_script("drop_stale_consumers", std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.kind != Reply::Kind::integer || r.integer < 0) {
    co_return shape_error("drop_stale_consumers", r);
  }
  co_return static_cast<std::uint64_t>(r.integer);
}

Task<Result<std::optional<StreamEntry>>> RedisBroker::fenced_read(const Lease& lease,
                                                                  std::string_view group,
                                                                  ReadFrom from) {
  std::vector<std::string> script_keys{lease.key(), lease.partition.stream()};
  std::vector<std::string> script_args{lease.token(), std::string(group),
                                       from == ReadFrom::pending ? "0" : ">"};
  Result<Reply> reply = co_await run_script(options_.unfenced ? "unfenced_read" : "fenced_read",
                                            std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.is_nil()) co_return std::optional<StreamEntry>();
  if (r.kind != Reply::Kind::array || r.elements.size() != 4 ||
      r.elements[0].kind != Reply::Kind::bulk || r.elements[1].kind != Reply::Kind::bulk ||
      r.elements[2].kind != Reply::Kind::bulk || r.elements[3].kind != Reply::Kind::integer) {
    co_return shape_error("fenced_read", r);
  }
  co_return std::optional<StreamEntry>(
      StreamEntry{r.elements[0].str, r.elements[1].str, r.elements[2].str,
                  static_cast<std::uint64_t>(r.elements[3].integer)});
}

Task<Status> RedisBroker::fenced_ack(const Lease& lease, std::string_view group,
                                     std::string_view id) {
  std::vector<std::string> script_keys{lease.key(), lease.partition.stream()};
  std::vector<std::string> script_args{lease.token(), std::string(group), std::string(id)};
  Result<Reply> reply = co_await run_script(options_.unfenced ? "unfenced_ack" : "fenced_ack",
                                            std::move(script_keys), std::move(script_args));
  Status status = status_of(reply);
  if (!status.ok()) co_return status;
  if (reply.value().kind != Reply::Kind::integer)
    co_return shape_error("fenced_ack", reply.value());
  co_return Status::Ok();
}

Task<Result<CommitReply>> RedisBroker::fenced_commit(const Lease& lease, std::string_view group,
                                                     std::int64_t seq, std::string_view effect) {
  std::vector<std::string> script_keys{lease.key(), sink_key_name(lease.partition, group),
                                       effects_hash_name(lease.partition, group)};
  std::vector<std::string> script_args{lease.token(), std::to_string(seq), std::string(effect)};
  Result<Reply> reply = co_await run_script(options_.unfenced ? "unfenced_commit" : "fenced_commit",
                                            std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) {
    Error error = error_from_reply(r);
    if (error.code == Errc::fenced) co_return CommitReply{CommitOutcome::fenced, 0, ""};
    co_return error;
  }
  if (r.kind != Reply::Kind::array || r.elements.size() != 3 ||
      r.elements[0].kind != Reply::Kind::bulk || r.elements[1].kind != Reply::Kind::integer ||
      r.elements[2].kind != Reply::Kind::bulk) {
    co_return shape_error("fenced_commit", r);
  }
  CommitReply out;
  const std::string& outcome = r.elements[0].str;
  if (outcome == "accepted") {
    out.outcome = CommitOutcome::accepted;
  } else if (outcome == "duplicate") {
    out.outcome = CommitOutcome::duplicate;
  } else if (outcome == "out_of_order") {
    out.outcome = CommitOutcome::out_of_order;
  } else {
    co_return shape_error("fenced_commit", r);
  }
  out.last_seq = r.elements[1].integer;
  out.committed_by = r.elements[2].str;
  co_return out;
}

}  // namespace seqby::redis
