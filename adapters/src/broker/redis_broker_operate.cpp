// RedisBroker: operating partitions (ADR decisions 6 and 7): the halt record operators read,
// the pending head the halted owner watches, and the fenced reaper of cold partitions.
#include "redis_broker_detail.h"
#include "seqby/broker/redis_broker.h"

namespace seqby::redis {

using detail::status_of;

Task<Status> RedisBroker::record_halt(const Lease& lease, std::string_view group,
                                      std::string_view id, std::string_view reason,
                                      std::uint64_t delivery_count) {
  script::RecordHalt::Args args{lease.key(),         halt_key_name(lease.partition, group),
                                lease.token(),       std::string(id),
                                std::string(reason), delivery_count,
                                journal_of(lease)};
  ScriptCall call = script::encode<script::RecordHalt>(std::move(args));
  Result<Reply> reply = co_await run_script(script::RecordHalt::name, std::move(call));
  co_return status_of(script::decode_reply<script::RecordHalt>(reply));
}

// XPENDING C:K G - + 1: {{id, consumer, idle_ms, delivery_count}} or an empty array.
Task<Result<std::optional<std::string>>> RedisBroker::pending_head(const PartitionRef& given,
                                                                   std::string_view group) {
  const PartitionRef partition = laid_out(given);
  using Row = std::tuple<std::string, std::string, std::int64_t, std::int64_t>;
  Command command{"XPENDING", partition.stream(), std::string(group), "-", "+", "1"};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  Result<std::vector<Row>> rows = decode<std::vector<Row>>(reply, "pending_head");
  if (!rows.ok()) co_return rows.error();
  if (rows.value().empty()) co_return std::optional<std::string>();
  co_return std::optional<std::string>(std::move(std::get<0>(rows.value().front())));
}

Task<Result<bool>> RedisBroker::reap(const Lease& lease, std::uint64_t idle_ms) {
  if (options_.key_layout == KeyLayout::cluster) {
    Result<bool> reaped = co_await reap_across_slots(lease, idle_ms);
    co_return reaped;
  }
  script::Reap::Args args{lease.key(),
                          lease.partition.stream(),
                          lease.partition.index(),
                          lease.partition.subscribers(),
                          lease.token(),
                          lease.partition.key,
                          idle_ms,
                          journal_of(lease)};
  ScriptCall call = script::encode<script::Reap>(std::move(args));
  Result<Reply> reply = co_await run_script(script::Reap::name, std::move(call));
  co_return script::decode_reply<script::Reap>(reply);
}

}  // namespace seqby::redis
