// RedisBroker: the fenced partition calls. Each is one Lua script that first checks
// `GET lease == O:N` and replies FENCED otherwise (adapters/lua/*.lua).
#include "redis_broker_detail.h"
#include "seqby/broker/redis_broker.h"

namespace seqby::redis {

using detail::status_of;

Task<Status> RedisBroker::check_lease(const Lease& lease) {
  script::CheckLease::Args args{lease.key(), lease.token()};
  ScriptCall call = script::encode<script::CheckLease>(std::move(args));
  Result<Reply> reply = co_await run_script(script::CheckLease::name, std::move(call));
  co_return status_of(script::decode_reply<script::CheckLease>(reply));
}

Task<Result<std::uint64_t>> RedisBroker::reclaim(const Lease& lease, std::string_view group) {
  script::Reclaim::Args args{lease.key(),
                             lease.partition.stream(),
                             lease.token(),
                             std::string(group),
                             options_.reclaim_count_per_call,
                             options_.reclaim_calls_per_script,
                             "0-0",
                             journal_of(lease)};
  std::uint64_t claimed = 0;
  for (std::uint32_t calls = 0; calls < options_.reclaim_scripts_max; ++calls) {
    ScriptCall call = script::encode<script::Reclaim>(args);  // args are used again
    Result<Reply> reply = co_await run_script(script::Reclaim::name, std::move(call));
    Result<script::Reclaim::Out> step = script::decode_reply<script::Reclaim>(reply);
    if (!step.ok()) co_return step.error();
    claimed += step.value().claimed;
    args.cursor = std::move(step.value().cursor);
    if (args.cursor == "0-0") co_return claimed;
  }
  co_return make_error(Errc::protocol, "reclaim: pending list not scanned within " +
                                           std::to_string(options_.reclaim_scripts_max) +
                                           " scripts");
}

Task<Result<std::uint64_t>> RedisBroker::drop_stale_consumers(const Lease& lease,
                                                              std::string_view group) {
  script::DropStaleConsumers::Args args{lease.key(),      lease.partition.stream(),
                                        lease.token(),    std::string(group),
                                        lease.generation, journal_of(lease)};
  ScriptCall call = script::encode<script::DropStaleConsumers>(std::move(args));
  Result<Reply> reply = co_await run_script(script::DropStaleConsumers::name, std::move(call));
  co_return script::decode_reply<script::DropStaleConsumers>(reply);
}

Task<Result<std::optional<StreamEntry>>> RedisBroker::fenced_read(const Lease& lease,
                                                                  std::string_view group,
                                                                  ReadFrom from) {
  using S = script::FencedRead;
  S::Args args{lease.key(), lease.partition.stream(), lease.token(), std::string(group),
               from,        journal_of(lease)};
  const std::string_view name = options_.unfenced ? S::unfenced_name : S::name;
  ScriptCall call = script::encode<S>(std::move(args));
  Result<Reply> reply = co_await run_script(name, std::move(call));
  co_return script::decode_reply<S>(reply);
}

Task<Status> RedisBroker::fenced_ack(const Lease& lease, std::string_view group,
                                     std::string_view id) {
  using S = script::FencedAck;
  S::Args args{lease.key(),        lease.partition.stream(), lease.token(),
               std::string(group), std::string(id),          journal_of(lease)};
  const std::string_view name = options_.unfenced ? S::unfenced_name : S::name;
  ScriptCall call = script::encode<S>(std::move(args));
  Result<Reply> reply = co_await run_script(name, std::move(call));
  co_return status_of(script::decode_reply<S>(reply));
}

Task<Result<CommitReply>> RedisBroker::fenced_commit(const Lease& lease, std::string_view group,
                                                     std::int64_t seq, std::string_view effect) {
  using S = script::FencedCommit;
  S::Args args{lease.key(),
               sink_key_name(lease.partition, group),
               effects_hash_name(lease.partition, group),
               lease.token(),
               seq,
               std::string(effect),
               journal_of(lease)};
  const std::string_view name = options_.unfenced ? S::unfenced_name : S::name;
  ScriptCall call = script::encode<S>(std::move(args));
  Result<Reply> reply = co_await run_script(name, std::move(call), /*durable=*/true);
  co_return script::decode_reply<S>(reply);
}

}  // namespace seqby::redis
