// RedisBroker under the cluster key layout (docs/ARCHITECTURE.md "The cluster key layout"): a
// publish and a reap touch the category's index (one hash slot) and the partition's stream
// (another), so each is three scripts, one slot each, in an order that never leaves an event in
// a stream discovery cannot find:
//   publish  P0 publish_intent (index slot)  P1 publish_append (stream slot)  P2 publish_done
//   reap     R1 reap_begin (index slot)      R2 reap_stream (stream slot)     R3 reap_end
// Nothing that may have run is sent again: a step without an answer ends the call, and whatever
// it leaves (an open intent, a key in the reaping set) keeps the key discoverable.
#include <algorithm>

#include "redis_broker_detail.h"
#include "seqby/broker/redis_broker.h"

namespace seqby::redis {

Task<Result<std::string>> RedisBroker::publish_across_slots(const PartitionRef& partition,
                                                            std::string_view type,
                                                            std::string_view data_json,
                                                            script::JournalTail journal) {
  SEQBY_CHECK(partition.layout == KeyLayout::cluster);
  const std::string publishing = publishing_hash_name(partition.category);
  // P0: the key is indexed and its intent open before the entry exists.
  script::PublishIntent::Args intent{partition.index(), publishing, partition.key};
  ScriptCall intent_call = script::encode<script::PublishIntent>(std::move(intent));
  Result<Reply> intent_reply =
      co_await run_script(script::PublishIntent::name, std::move(intent_call), true);
  Result<std::int64_t> open = script::decode_reply<script::PublishIntent>(intent_reply);
  if (!open.ok()) co_return open.error();
  SEQBY_CHECK(open.value() >= 1);

  // P1: the entry.
  script::PublishAppend::Args append{partition.stream(), std::string(type), std::string(data_json)};
  append.journal = std::move(journal);
  ScriptCall append_call = script::encode<script::PublishAppend>(std::move(append));
  Result<Reply> append_reply =
      co_await run_script(script::PublishAppend::name, std::move(append_call), true);
  // No answer: the entry may still arrive, on another node's connection, after anything sent
  // now; the intent stays open (the key is never reaped until an operator closes it).
  if (!append_reply.ok()) co_return append_reply.error();
  Result<std::string> id = script::decode_reply<script::PublishAppend>(append_reply);

  // P2: the entry exists (or the append was refused and never will): close this intent, once.
  script::PublishDone::Args done{publishing, partition.key};
  ScriptCall done_call = script::encode<script::PublishDone>(std::move(done));
  Result<Reply> done_reply =
      co_await run_script(script::PublishDone::name, std::move(done_call), true);
  // A lost answer leaves the count one too high: safe (the key stays unreapable), never re-sent.
  (void)done_reply;
  co_return id;
}

Task<Result<bool>> RedisBroker::reap_across_slots(const Lease& lease, std::uint64_t idle_ms) {
  SEQBY_CHECK(lease.partition.layout == KeyLayout::cluster);
  SEQBY_CHECK(lease.process_manager.empty());
  const PartitionRef& partition = lease.partition;
  const std::string reaping = reaping_set_name(partition.category);

  // R1: out of the index into the reaping set, only with no publish open.
  script::ReapBegin::Args begin{partition.index(), reaping,
                                publishing_hash_name(partition.category), partition.key};
  ScriptCall begin_call = script::encode<script::ReapBegin>(std::move(begin));
  Result<Reply> begin_reply = co_await run_script(script::ReapBegin::name, std::move(begin_call));
  Result<bool> begun = script::decode_reply<script::ReapBegin>(begin_reply);
  if (!begun.ok()) co_return begun.error();  // the key may be in the reaping set: discoverable
  if (!begun.value()) co_return false;

  // The subscribed groups, read after R1: a group that subscribes later subscribed after this
  // reap began, and if it has joined the stream by R2, R2 waits for it as for any group.
  Command members{"SMEMBERS", partition.subscribers()};
  Result<Reply> members_reply = co_await link_.execute(std::move(members));
  Result<std::vector<std::string>> subscribers =
      decode<std::vector<std::string>>(members_reply, "SMEMBERS");
  Result<bool> reaped = false;
  if (!subscribers.ok()) {
    reaped = subscribers.error();
  } else {
    std::sort(subscribers.value().begin(), subscribers.value().end());
    std::string listed;
    for (const std::string& group : subscribers.value()) listed += group + '\n';
    // R2: the existing fenced check and delete, in the stream's slot. Durable: with the
    // option, R3 takes the key out of the index only once a replica has the delete, so a
    // failover cannot bring the stream back unindexed (a delete WAIT did not confirm is
    // Errc::timeout, and R3 puts the key back: discoverable, as after any unconfirmed R2).
    script::ReapStream::Args stream{lease.key(), partition.stream(), lease.token(),
                                    idle_ms,     std::move(listed),  journal_of(lease)};
    ScriptCall stream_call = script::encode<script::ReapStream>(std::move(stream));
    Result<Reply> stream_reply =
        co_await run_script(script::ReapStream::name, std::move(stream_call), /*durable=*/true);
    reaped = script::decode_reply<script::ReapStream>(stream_reply);
  }

  // R3: settled only on a reap R2 confirmed; on anything else the key goes back to the index.
  const bool confirmed = reaped.ok() && reaped.value();
  script::ReapEnd::Args end{partition.index(), reaping, partition.key, confirmed ? 1u : 0u};
  ScriptCall end_call = script::encode<script::ReapEnd>(std::move(end));
  Result<Reply> end_reply = co_await run_script(script::ReapEnd::name, std::move(end_call));
  // No answer to R3 leaves the key in the reaping set, which discovery reads: safe.
  (void)end_reply;
  co_return reaped;
}

}  // namespace seqby::redis
