// RedisBroker: operating partitions (ADR decisions 6 and 7): the halt record operators read,
// the pending head the halted owner watches, and the fenced reaper of cold partitions.
#include "redis_broker_detail.h"
#include "seqby/broker/redis_broker.h"

namespace seqby::redis {

using detail::shape_error;
using detail::status_of;

Task<Status> RedisBroker::record_halt(const Lease& lease, std::string_view group,
                                      std::string_view id, std::string_view reason,
                                      std::uint64_t delivery_count) {
  std::vector<std::string> script_keys{lease.key(), halt_key_name(lease.partition, group)};
  std::vector<std::string> script_args{lease.token(), std::string(id), std::string(reason),
                                       std::to_string(delivery_count)};
  Result<Reply> reply =
      co_await run_script("record_halt", std::move(script_keys), std::move(script_args));
  Status status = status_of(reply);
  if (!status.ok()) co_return status;
  if (reply.value().kind != Reply::Kind::integer)
    co_return shape_error("record_halt", reply.value());
  co_return Status::Ok();
}

// XPENDING C:K G - + 1: {{id, consumer, idle_ms, delivery_count}} or an empty array.
Task<Result<std::optional<std::string>>> RedisBroker::pending_head(const PartitionRef& partition,
                                                                   std::string_view group) {
  Command command{"XPENDING", partition.stream(), std::string(group), "-", "+", "1"};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.kind != Reply::Kind::array) co_return shape_error("pending_head", r);
  if (r.elements.empty()) co_return std::optional<std::string>();
  const Reply& first = r.elements[0];
  if (first.kind != Reply::Kind::array || first.elements.empty() ||
      first.elements[0].kind != Reply::Kind::bulk) {
    co_return shape_error("pending_head", r);
  }
  co_return std::optional<std::string>(first.elements[0].str);
}

Task<Result<bool>> RedisBroker::reap(const Lease& lease, std::uint64_t idle_ms) {
  std::vector<std::string> script_keys{lease.key(), lease.partition.stream(),
                                       lease.partition.index(), lease.partition.subscribers()};
  std::vector<std::string> script_args{lease.token(), lease.partition.key, std::to_string(idle_ms)};
  Result<Reply> reply = co_await run_script("reap", std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.kind != Reply::Kind::integer) co_return shape_error("reap", r);
  co_return r.integer == 1;
}

}  // namespace seqby::redis
