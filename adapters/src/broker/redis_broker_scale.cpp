// RedisBroker: the engine's steps at scale (docs/ARCHITECTURE.md "One script per event", "Idle
// partitions are woken"): the one fenced script per event, leases renewed and acquired by the
// batch, and the blocking read that wakes idle partitions.
#include <algorithm>
#include <numeric>

#include "redis_broker_detail.h"
#include "seqby/broker/redis_broker.h"

namespace seqby::redis {

using detail::status_of;

Task<Result<NextReply>> RedisBroker::fenced_next(const Lease& lease, std::string_view group,
                                                 ReadFrom from, std::string_view ack_id,
                                                 NextAsk ask) {
  SEQBY_CHECK(ask.count >= 1);
  if (ask.commit != nullptr) {
    Result<NextReply> stepped = co_await fenced_commit_next(lease, group, from, ack_id, ask);
    co_return stepped;
  }
  using S = script::FencedNext;
  S::Args args{lease.key(),
               lease.partition.stream(),
               lease.token(),
               std::string(group),
               from,
               std::string(ack_id),
               ask.count,
               std::string(ask.held_id),
               journal_of(lease)};
  const std::string_view name = options_.unfenced ? S::unfenced_name : S::name;
  const script::StepAsked asked = S::asked(args);
  ScriptCall call = script::encode<S>(std::move(args));
  Result<Reply> reply = co_await run_script(name, std::move(call));
  if (!reply.ok()) co_return reply.error();
  co_return S::decode_reply(reply.value(), asked);
}

Task<Result<NextReply>> RedisBroker::fenced_commit_next(const Lease& lease, std::string_view group,
                                                        ReadFrom from, std::string_view ack_id,
                                                        const NextAsk& ask) {
  using S = script::FencedCommitNext;
  SEQBY_CHECK(ask.commit != nullptr && !ack_id.empty());
  S::Args args{lease.key(),
               lease.partition.stream(),
               sink_key_name(lease.partition, group),
               effects_hash_name(lease.partition, group),
               lease.token(),
               std::string(group),
               from,
               std::string(ack_id),
               ask.count,
               std::string(ask.held_id),
               ask.commit->seq,
               ask.commit->effect,
               journal_of(lease)};
  const std::string_view name = options_.unfenced ? S::unfenced_name : S::name;
  const script::StepAsked asked = S::asked(args);
  ScriptCall call = script::encode<S>(std::move(args));
  Result<Reply> reply = co_await run_script(name, std::move(call), /*durable=*/true);
  if (!reply.ok()) co_return reply.error();
  co_return S::decode_reply(reply.value(), asked);
}

std::size_t RedisBroker::steps_per_call_max() const {
  const bool one_by_one = options_.key_layout == KeyLayout::cluster || options_.unfenced;
  return one_by_one ? 1 : kStepsPerCallMax;
}

Task<std::vector<Result<NextReply>>> RedisBroker::fenced_steps(const std::vector<StepCall>& steps) {
  SEQBY_CHECK(!steps.empty() && steps.size() <= steps_per_call_max());
  if (steps.size() == 1) {
    const StepCall& step = steps.front();
    std::vector<Result<NextReply>> one;
    one.push_back(co_await fenced_next(*step.lease, step.group, step.from, step.ack_id, step.ask));
    co_return one;
  }
  using S = script::FencedSteps;
  S::Args args;
  const bool journaled = options_.journal_maxlen > 0;
  args.keys.reserve(steps.size() * S::keys_per_step(journaled));
  args.steps.reserve(steps.size() * S::args_per_step(journaled));
  std::vector<S::Asked> asked;
  asked.reserve(steps.size());
  bool durable = false;  // when a step commits, as fenced_commit_next is
  for (const StepCall& step : steps) {
    SEQBY_CHECK(step.ask.count >= 1);
    const Lease& lease = *step.lease;
    const EffectCommit* commit = step.ask.commit;
    SEQBY_CHECK(commit == nullptr || !step.ack_id.empty());
    asked.push_back(S::add(
        &args,
        script::FencedCommitNext::Args{
            lease.key(), lease.partition.stream(), sink_key_name(lease.partition, step.group),
            effects_hash_name(lease.partition, step.group), lease.token(), std::string(step.group),
            step.from, std::string(step.ack_id), step.ask.count, std::string(step.ask.held_id),
            commit != nullptr ? commit->seq : 0, commit != nullptr ? commit->effect : std::string(),
            journal_of(lease)},
        commit != nullptr));
    durable = durable || commit != nullptr;
  }
  Result<Reply> reply = co_await run_script(S::name, script::encode<S>(std::move(args)), durable);
  co_return S::decode_reply(reply, asked);
}

std::shared_ptr<RedisBroker::Scripts> RedisBroker::renewal_scripts(const std::vector<Lease>& leases,
                                                                   std::uint64_t ttl_ms) const {
  using S = script::RenewMany;
  auto out = std::make_shared<Scripts>();
  const bool journaling = options_.journal_maxlen > 0;
  std::vector<std::string> lease_keys;
  lease_keys.reserve(leases.size());
  for (const Lease& lease : leases) lease_keys.push_back(lease.key());
  std::size_t end = 0;
  for (std::size_t begin = 0; begin < leases.size(); begin = end) {
    end = batch_end(lease_keys, begin);
    S::Args args;
    args.ttl_ms = ttl_ms;
    args.journal_maxlen = options_.journal_maxlen;
    args.node = leases[begin].owner_id;
    args.group = options_.journal_group;
    args.keys.reserve((journaling ? 2 : 1) * (end - begin));
    args.leases.reserve((journaling ? 4 : 1) * (end - begin));
    for (std::size_t i = begin; i < end; ++i) {
      SEQBY_CHECK(leases[i].owner_id == args.node);
      SEQBY_CHECK(leases[i].partition.layout == options_.key_layout);
      args.keys.push_back(std::move(lease_keys[i]));
      args.leases.push_back(leases[i].token());
      if (journaling) {
        args.leases.push_back(leases[i].partition.category);
        args.leases.push_back(leases[i].partition.key);
        args.leases.push_back(std::to_string(leases[i].generation));
      }
    }
    if (journaling) {
      for (std::size_t i = begin; i < end; ++i) {
        args.keys.push_back(journal_stream_name(leases[i].unit()));
      }
    }
    out->calls.push_back(script::encode<S>(std::move(args)));
    out->leases_per_call.push_back(end - begin);
  }
  return out;
}

Task<std::vector<Status>> RedisBroker::renew_many(const std::vector<Lease>& leases,
                                                  std::uint64_t ttl_ms) {
  std::vector<Status> out = co_await renew_by(renewal_scripts(leases, ttl_ms));
  co_return out;
}

Task<std::vector<Status>> RedisBroker::renew_kept(std::shared_ptr<const std::vector<Lease>> leases,
                                                  std::uint64_t ttl_ms) {
  // The scripts of the last round, while the caller passes the same set: not made, encoded or
  // formatted again (a tenth of a round over 10,000 leases).
  if (kept_renewal_.leases != leases || kept_renewal_.ttl_ms != ttl_ms) {
    kept_renewal_ = {leases, ttl_ms, renewal_scripts(*leases, ttl_ms)};
  }
  std::vector<Status> out = co_await renew_by(kept_renewal_.scripts);
  co_return out;
}

Task<std::vector<Status>> RedisBroker::renew_by(std::shared_ptr<Scripts> scripts) {
  using S = script::RenewMany;
  // Every batch at once on the lease link (a connection of its own, when given); the replies
  // are read in order, and each batch answers for its own leases (on a cluster a master that
  // does not answer fails only the batches it serves).
  std::vector<Result<Reply>> replies = co_await run_scripts(S::name, scripts, lease_link());
  const std::vector<std::size_t>& batch_sizes = scripts->leases_per_call;
  SEQBY_CHECK(replies.size() == batch_sizes.size());
  std::vector<Status> out;
  out.reserve(std::accumulate(batch_sizes.begin(), batch_sizes.end(), std::size_t{0}));
  for (std::size_t b = 0; b < replies.size(); ++b) {
    Result<S::Out> renewed = script::decode_reply<S>(replies[b]);
    if (renewed.ok() && renewed.value().size() != batch_sizes[b]) {
      renewed = make_error(Errc::protocol, "renew_many: " + std::to_string(renewed.value().size()) +
                                               " results for " + std::to_string(batch_sizes[b]) +
                                               " leases");
    }
    for (std::size_t i = 0; i < batch_sizes[b]; ++i) {
      if (!renewed.ok()) {
        out.emplace_back(renewed.error());
      } else if (renewed.value()[i]) {
        out.push_back(Status::Ok());
      } else {
        out.emplace_back(make_error(Errc::fenced, "renew refused"));
      }
    }
  }
  co_return out;
}

Task<Result<std::vector<std::optional<Lease>>>> RedisBroker::acquire_many(
    const std::vector<PartitionRef>& given, std::string_view scope, std::string_view owner_id,
    std::uint64_t ttl_ms, std::size_t want) {
  using S = script::AcquireMany;
  SEQBY_CHECK(want >= 1);
  SEQBY_CHECK(!owner_id.empty() && owner_id.find(':') == std::string_view::npos);
  std::vector<PartitionRef> partitions;
  std::vector<std::string> lease_keys;
  partitions.reserve(given.size());
  lease_keys.reserve(given.size());
  for (const PartitionRef& partition : given) {
    partitions.push_back(laid_out(partition));
    lease_keys.push_back(lease_key_for(partitions.back(), scope));
  }
  std::vector<std::optional<Lease>> out;
  const bool journaling = options_.journal_maxlen > 0;
  std::size_t granted = 0;
  std::size_t end = 0;
  for (std::size_t begin = 0; begin < partitions.size() && granted < want; begin = end) {
    end = batch_end(lease_keys, begin);
    S::Args args;
    args.owner_id = std::string(owner_id);
    args.ttl_ms = ttl_ms;
    args.want = want - granted;
    args.journal_maxlen = options_.journal_maxlen;
    args.group = options_.journal_group;
    // One count of streams per script: a batch mixing unit categories is not looked at.
    std::size_t streams = unit_streams(partitions[begin]).size();
    for (std::size_t i = begin; i < end; ++i) {
      if (partitions[i].category != partitions[begin].category) streams = 0;
    }
    args.streams_per_unit = streams;
    args.keys.reserve((journaling ? 3 : 2) * (end - begin) + streams * (end - begin));
    for (std::size_t i = begin; i < end; ++i) args.keys.push_back(lease_keys[i]);
    for (std::size_t i = begin; i < end; ++i) args.keys.push_back(partitions[i].fence());
    if (journaling) {
      for (std::size_t i = begin; i < end; ++i) {
        args.keys.push_back(journal_stream_name(partitions[i]));
        args.units.push_back(partitions[i].category);
        args.units.push_back(partitions[i].key);
      }
    }
    for (std::size_t i = begin; i < end && streams > 0; ++i) {
      for (std::string& stream : unit_streams(partitions[i]))
        args.keys.push_back(std::move(stream));
    }
    ScriptCall call = script::encode<S>(std::move(args));
    Result<Reply> reply = co_await run_script(S::name, std::move(call), /*durable=*/true);
    Result<S::Out> generations = script::decode_reply<S>(reply);
    if (!generations.ok()) co_return generations.error();
    if (generations.value().size() > end - begin) {
      co_return make_error(Errc::protocol, "acquire_many: more results than partitions");
    }
    for (std::size_t i = 0; i < generations.value().size(); ++i) {
      const std::uint64_t generation = generations.value()[i].generation;
      if (generation == 0) {
        if (!generations.value()[i].no_partition.empty()) {
          no_partition(partitions[begin + i], generations.value()[i].no_partition);
        }
        out.emplace_back();
        continue;
      }
      ++granted;
      out.emplace_back(
          Lease{partitions[begin + i], std::string(scope), std::string(owner_id), generation, ""});
    }
    if (generations.value().size() < end - begin) break;  // it stopped at `want`
  }
  co_return out;
}

std::size_t RedisBroker::batch_end(const std::vector<std::string>& keys, std::size_t begin) const {
  SEQBY_CHECK(begin < keys.size());
  const std::size_t end = std::min(keys.size(), begin + kLeaseBatchMax);
  if (options_.key_layout == KeyLayout::flat) return end;
  const std::uint16_t slot = key_hash_slot(keys[begin]);
  std::size_t at = begin + 1;
  while (at < end && key_hash_slot(keys[at]) == slot) ++at;
  return at;
}

std::uint64_t RedisBroker::failovers_seen() const {
  return options_.failovers_seen ? options_.failovers_seen() : 0;
}

std::size_t RedisBroker::wake_channels() const { return wake_links_source_ ? kWakeChannelsMax : 1; }

// A partition's own category; a process manager's categories when they are known.
std::vector<std::string> RedisBroker::unit_categories(const PartitionRef& unit) const {
  const std::string pm_prefix = pm_lease_category("");
  if (unit.category.compare(0, pm_prefix.size(), pm_prefix) != 0) return {unit.category};
  return options_.pm_categories;
}

std::vector<std::string> RedisBroker::unit_streams(const PartitionRef& unit) const {
  std::vector<std::string> streams;
  for (const std::string& category : unit_categories(unit)) {
    streams.push_back(partition_stream_name(category, unit.key, unit.layout));
  }
  return streams;
}

void RedisBroker::no_partition(const PartitionRef& unit, const std::string& why) {
  if (no_partition_seen_.size() >= kNoPartitionUnitsMax) return;
  if (!no_partition_seen_.insert(unit.category + '\n' + unit.key).second) return;
  if (options_.on_no_partition) options_.on_no_partition(unit, why);
}

Task<Result<std::vector<std::size_t>>> RedisBroker::wait_for_entries(
    std::string_view unit_category, std::string_view owner_id, std::size_t channel,
    const std::vector<WatchedStream>& streams, std::uint64_t block_ms) {
  SEQBY_CHECK(channel < wake_channels());
  if (options_.key_layout == KeyLayout::cluster) {
    // One read over many partitions' streams spans hash slots (CROSSSLOT on a cluster).
    co_return make_error(Errc::unsupported,
                         "the cluster key layout cannot wait across slots: this broker polls");
  }
  while (wake_links_source_ && wake_links_.size() <= channel) {
    wake_links_.push_back(wake_links_source_(wake_links_.size()));
  }
  RedisLink* const wake_link = channel < wake_links_.size() ? wake_links_[channel] : nullptr;
  if (wake_link == nullptr) {
    co_return make_error(Errc::unsupported, "no wake link: this broker cannot wait");
  }
  const std::string doorbell = wake_stream_name(unit_category, owner_id, channel);
  std::string& doorbell_seen = doorbell_seen_.try_emplace(doorbell, "0-0").first->second;
  Command command;
  command.reserve(6 + 2 * (streams.size() + 1));
  command.insert(command.end(),
                 {"XREAD", "COUNT", "1", "BLOCK", std::to_string(block_ms), "STREAMS"});
  for (const WatchedStream& watched : streams) command.push_back(watched.partition.stream());
  command.push_back(doorbell);
  for (const WatchedStream& watched : streams) {
    command.push_back(watched.after_id.empty() ? "0-0" : watched.after_id);
  }
  command.push_back(doorbell_seen);
  Result<Reply> reply = co_await wake_link->execute(command);
  // A nil reply: the block ran out. Otherwise [[stream, [[id, fields]]], ...].
  using Row = std::tuple<std::string, std::vector<std::tuple<std::string, AnyReply>>>;
  Result<std::optional<std::vector<Row>>> rows =
      decode<std::optional<std::vector<Row>>>(reply, "XREAD");
  if (!rows.ok()) co_return rows.error();
  std::vector<std::size_t> woken;
  if (!rows.value().has_value()) co_return woken;
  for (const auto& [stream, entries] : *rows.value()) {
    if (stream == doorbell) {
      if (!entries.empty()) doorbell_seen = std::get<0>(entries.back());
      continue;
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      if (command[6 + i] == stream) woken.push_back(i);
    }
  }
  std::sort(woken.begin(), woken.end());
  co_return woken;
}

Task<Status> RedisBroker::ring_wake(std::string_view unit_category, std::string_view owner_id,
                                    std::size_t channel) {
  script::RingWake::Args args{wake_stream_name(unit_category, owner_id, channel), kDoorbellTtlMs};
  ScriptCall call = script::encode<script::RingWake>(std::move(args));
  Result<Reply> reply = co_await run_script(script::RingWake::name, std::move(call));
  co_return status_of(script::decode_reply<script::RingWake>(reply));
}

}  // namespace seqby::redis
