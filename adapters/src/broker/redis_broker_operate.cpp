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

Task<Result<bool>> RedisBroker::reindex(const Lease& lease) {
  const PartitionRef unit = lease.unit();
  script::Reindex::Args args;
  args.lease = lease.key();
  args.streams = unit_streams(unit);
  args.count = args.streams.size();
  args.token = lease.token();
  args.key = unit.key;
  std::vector<std::string> indexes;
  for (const std::string& category : unit_categories(unit)) {
    indexes.push_back(partition_index_name(category));
  }
  const bool one_server = options_.key_layout == KeyLayout::flat;
  if (one_server) args.indexes = indexes;
  ScriptCall call = script::encode<script::Reindex>(std::move(args));
  Result<Reply> reply = co_await run_script(script::Reindex::name, std::move(call));
  Result<std::vector<bool>> held = script::decode_reply<script::Reindex>(reply);
  if (!held.ok()) co_return held.error();
  if (held.value().size() != indexes.size()) {
    co_return make_error(Errc::protocol, "reindex: " + std::to_string(held.value().size()) +
                                             " answers for " + std::to_string(indexes.size()) +
                                             " streams");
  }
  const bool any = std::find(held.value().begin(), held.value().end(), true) != held.value().end();
  if (one_server) co_return any;
  // The cluster key layout: each index is in a slot of its own, after the check under the lease.
  for (std::size_t i = 0; i < indexes.size(); ++i) {
    if (!held.value()[i]) continue;
    Command add{"SADD", indexes[i], unit.key};
    Result<Reply> added = co_await link_.execute(std::move(add));
    Result<std::int64_t> count = decode<std::int64_t>(added, "SADD");
    if (!count.ok()) co_return count.error();
  }
  co_return any;
}

}  // namespace seqby::redis
