// RedisBroker: script execution and the calls that are not fenced (publish, discovery,
// membership, lease acquire/renew/release, group creation). Fenced partition calls are in
// redis_broker_fenced.cpp; replies are decoded by script_contracts.h and reply.h.
#include "seqby/broker/redis_broker.h"

#include <algorithm>
#include <coroutine>
#include <list>
#include <memory>
#include <optional>

#include "redis_broker_detail.h"
#include "seqby/broker/scripts.h"

namespace seqby::redis {

using detail::status_of;

RedisBroker::RedisBroker(RedisLink& link, RedisBrokerOptions options, RedisLink* wake_link)
    : link_(link), options_(options), wake_links_{wake_link} {
  SEQBY_CHECK(options_.reclaim_count_per_call > 0);
  SEQBY_CHECK(options_.reclaim_calls_per_script > 0);
  SEQBY_CHECK(options_.reclaim_scripts_max > 0);
}

RedisBroker::RedisBroker(RedisLink& link, RedisBrokerOptions options, WakeLinks wake_links,
                         RedisLink* lease_link)
    : RedisBroker(link, options, nullptr) {
  lease_link_ = lease_link;
  wake_links_.clear();
  wake_links_source_ = std::move(wake_links);
}

CapabilitySet RedisBroker::capabilities() const {
  return CapabilitySet{Capability::stream_partitioning, Capability::consumer_groups,
                       Capability::reclaim_pending};
}

Task<Result<Reply>> RedisBroker::eval(const char* source, const ScriptCall& call,
                                      std::string_view sha, std::string_view name, bool durable,
                                      RedisLink& via) {
  Command command =
      sha.empty() ? eval_command("EVAL", source, call) : eval_command("EVALSHA", sha, call);
  if (!durable || options_.wait_replicas == 0) co_return co_await via.execute(std::move(command));
  SEQBY_CHECK(&via == &link_);
  const std::uint32_t wanted = options_.wait_replicas;
  Result<ReplicatedReply> waited =
      co_await link_.execute_replicated(std::move(command), wanted, options_.wait_timeout_ms);
  if (!waited.ok()) co_return waited.error();
  ReplicatedReply& out = waited.value();
  // An error reply decided nothing worth keeping (NOSCRIPT is run again by run_script).
  if (out.reply.is_error() || out.replicas >= static_cast<std::int64_t>(wanted)) {
    co_return std::move(out.reply);
  }
  const std::string acknowledged = out.replicas < 0
                                       ? "no WAIT reply (" + out.wait_error + ")"
                                       : std::to_string(out.replicas) + " of the " +
                                             std::to_string(wanted) + " replicas asked within " +
                                             std::to_string(options_.wait_timeout_ms) + " ms";
  co_return make_error(Errc::timeout, std::string(name) +
                                          " ran on the master but its writes have " + acknowledged +
                                          " (the durability option): a failover may lose them");
}

std::size_t RedisBroker::script_index(std::string_view name) {
  for (std::size_t i = 0; i < scripts_.size(); ++i) {
    if (scripts_[i].name == name) return i;
  }
  for (const EmbeddedScript& embedded : embedded_scripts()) {
    if (name == embedded.name) {
      scripts_.push_back(LoadedScript{embedded.name, embedded.source, "", nullptr});
      return scripts_.size() - 1;
    }
  }
  SEQBY_CHECK(false && "no embedded script of that name");
  return 0;
}

Task<Result<Reply>> RedisBroker::run_script(std::string_view name, ScriptCall call) {
  Result<Reply> reply = co_await run_script(name, std::move(call), /*durable=*/false);
  co_return reply;
}

// A SCRIPT LOAD in flight: its answer once it came, and the calls waiting for it, in the order
// they came (each waiter's own awaiter, which leaves the list if its frame is destroyed first).
struct RedisBroker::ScriptLoad {
  class Wait;
  bool answered = false;
  bool abandoned = false;
  Result<std::string> sha = std::string();
  std::list<Wait*> waiting;

  // Records the answer and resumes the waiters one by one, in order (each runs to its next
  // suspension: its EVALSHA sent).
  void answer(Result<std::string> answer);
};

class RedisBroker::ScriptLoad::Wait {
 public:
  explicit Wait(std::shared_ptr<ScriptLoad> load) : load_(std::move(load)) {}
  Wait(const Wait&) = delete;
  Wait& operator=(const Wait&) = delete;
  ~Wait() {
    if (queued_) load_->waiting.erase(at_);
  }
  bool await_ready() const { return load_->answered; }
  void await_suspend(std::coroutine_handle<> waiter) {
    waiter_ = waiter;
    at_ = load_->waiting.insert(load_->waiting.end(), this);
    queued_ = true;
  }
  Result<std::string> await_resume() const { return load_->sha; }
  void resume() {
    queued_ = false;
    waiter_.resume();
  }

 private:
  std::shared_ptr<ScriptLoad> load_;
  std::coroutine_handle<> waiter_;
  std::list<Wait*>::iterator at_;
  bool queued_ = false;
};

void RedisBroker::ScriptLoad::answer(Result<std::string> answer) {
  sha = std::move(answer);
  answered = true;
  while (!waiting.empty()) {
    Wait* next = waiting.front();
    waiting.pop_front();
    next->resume();
  }
}

Task<Result<std::string>> RedisBroker::load_script(std::size_t index, RedisLink& via) {
  const std::shared_ptr<ScriptLoad> in_flight = scripts_[index].loading;
  if (in_flight != nullptr && !in_flight->abandoned) {
    Result<std::string> shared = co_await ScriptLoad::Wait(in_flight);
    co_return shared;
  }
  auto load = std::make_shared<ScriptLoad>();
  scripts_[index].loading = load;
  // A load whose frame is destroyed before the answer (the instance torn down mid-load) is
  // abandoned: the next call loads anew rather than wait on it. Only the load is touched here:
  // the broker may be gone already.
  struct Abandon {
    ScriptLoad& load;
    ~Abandon() {
      if (!load.answered) load.abandoned = true;
    }
  };
  const Abandon abandon{*load};
  Command command{"SCRIPT", "LOAD", scripts_[index].source};
  Result<Reply> reply = co_await via.execute(std::move(command));
  Result<std::string> sha = std::string();
  if (!reply.ok()) {
    sha = reply.error();
  } else if (Result<std::string> decoded = decode<std::string>(reply.value(), "SCRIPT LOAD");
             decoded.ok()) {
    scripts_[index].sha = decoded.value();
    sha = std::move(decoded);
  } else {
    script_load_refused_ = true;
  }
  scripts_[index].loading.reset();
  load->answer(sha);
  co_return sha;
}

Task<Result<Reply>> RedisBroker::run_script(std::string_view name, ScriptCall call, bool durable) {
  Result<Reply> reply = co_await run_script(name, std::move(call), durable, link_);
  co_return reply;
}

Task<Result<Reply>> RedisBroker::run_script(std::string_view name, ScriptCall call, bool durable,
                                            RedisLink& via) {
  // By index, never by reference: scripts_ may grow while this call waits for a reply.
  const std::size_t index = script_index(name);
  const char* source = scripts_[index].source;
  if (!script_load_refused_) {
    std::string sha = scripts_[index].sha;
    if (sha.empty()) {
      Result<std::string> loaded = co_await load_script(index, via);
      if (!loaded.ok()) co_return loaded.error();
      sha = std::move(loaded).value();
    }
    if (!sha.empty()) {
      Result<Reply> reply = co_await eval(source, call, sha, name, durable, via);
      if (!reply.ok() || !reply.value().is_error_with("NOSCRIPT")) co_return reply;
      // The server lost its script cache: EVAL now, load again next time.
      scripts_[index].sha.clear();
    }
  }
  Result<Reply> reply = co_await eval(source, call, {}, name, durable, via);
  co_return reply;
}

Task<std::vector<Result<Reply>>> RedisBroker::run_scripts(std::string_view name,
                                                          std::shared_ptr<Scripts> scripts,
                                                          RedisLink& via) {
  const std::vector<ScriptCall>& calls = scripts->calls;
  std::vector<Result<Reply>> out;
  out.reserve(calls.size());
  const std::size_t index = script_index(name);
  if (calls.size() > 1 && !script_load_refused_ && scripts_[index].sha.empty()) {
    // Loaded once before the pipeline, so that every call of it can be an EVALSHA.
    Result<std::string> loaded = co_await load_script(index, via);
    if (!loaded.ok()) {
      out.assign(calls.size(), loaded.error());
      co_return out;
    }
  }
  if (calls.size() <= 1 || scripts_[index].sha.empty()) {
    // One call, or no script cache to pipeline EVALSHAs into: one after another, by
    // execute_many's rule after a transport failure.
    const auto send = [this, name, &via](ScriptCall call) {
      return run_script(name, std::move(call), /*durable=*/false, via);
    };
    std::vector<Result<Reply>> replies = co_await one_after_another(calls, send);
    co_return replies;
  }
  if (!scripts->commands || scripts->sha != scripts_[index].sha) {
    std::vector<Command> commands;
    commands.reserve(calls.size());
    for (const ScriptCall& call : calls) {
      commands.push_back(eval_command("EVALSHA", scripts_[index].sha, call));
    }
    scripts->commands = std::make_shared<const PreparedCommands>(std::move(commands));
    scripts->sha = scripts_[index].sha;
  }
  std::vector<Result<Reply>> replies = co_await via.execute_prepared(scripts->commands);
  out = std::move(replies);
  SEQBY_CHECK(out.size() == calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    // The server lost its script cache: that call did not run; run_script loads it again.
    if (out[i].ok() && out[i].value().is_error_with("NOSCRIPT")) {
      scripts_[index].sha.clear();
      Result<Reply> again = co_await run_script(name, calls[i], /*durable=*/false, via);
      out[i] = std::move(again);
    }
  }
  co_return out;
}

PartitionRef RedisBroker::laid_out(const PartitionRef& partition) const {
  PartitionRef out = partition;
  out.layout = options_.key_layout;
  return out;
}

script::JournalTail RedisBroker::journal_of(const Lease& lease) const {
  // Every fenced call builds its journal tail here: the lease is spelled in the broker's layout
  // (it came from acquire or acquire_many, which lay it out).
  SEQBY_CHECK(lease.partition.layout == options_.key_layout);
  script::JournalTail tail;
  if (options_.journal_maxlen == 0) return tail;
  tail.stream = journal_stream_name(lease.unit());
  tail.maxlen = options_.journal_maxlen;
  tail.node = lease.owner_id;
  tail.category = lease.partition.category;
  tail.key = lease.partition.key;
  tail.group = options_.journal_group;
  tail.generation = lease.generation;
  return tail;
}

Task<Result<std::string>> RedisBroker::publish(const PartitionRef& given, std::string_view type,
                                               std::string_view data_json) {
  script::JournalTail journal;
  journal.maxlen = options_.journal_maxlen;
  Result<std::string> published =
      co_await publish_with_journal(given, type, data_json, std::move(journal));
  co_return published;
}

Task<Result<std::string>> RedisBroker::publish_with_journal(const PartitionRef& given,
                                                            std::string_view type,
                                                            std::string_view data_json,
                                                            script::JournalTail journal) {
  const PartitionRef partition = laid_out(given);
  if (journal.maxlen > 0) {
    journal.stream = journal_stream_name(partition);
    journal.category = partition.category;
    journal.key = partition.key;
  } else {
    journal = script::JournalTail{};
  }
  if (options_.key_layout == KeyLayout::cluster) {
    Result<std::string> published =
        co_await publish_across_slots(partition, type, data_json, std::move(journal));
    co_return published;
  }
  script::Publish::Args args{partition.stream(), partition.index(), partition.key,
                             std::string(type), std::string(data_json)};
  args.journal = std::move(journal);
  ScriptCall call = script::encode<script::Publish>(std::move(args));
  Result<Reply> reply = co_await run_script(script::Publish::name, std::move(call), true);
  co_return script::decode_reply<script::Publish>(reply);
}

// With the cluster layout the keys a reaper is taking out of the index count too (its reaping
// set, in the index's slot): SUNION reads both at one point in time.
Task<Result<std::vector<std::string>>> RedisBroker::partitions(std::string_view category) {
  const bool cluster = options_.key_layout == KeyLayout::cluster;
  Command command{"SMEMBERS", partition_index_name(category)};
  if (cluster) command = Command{"SUNION", command[1], reaping_set_name(category)};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  Result<std::vector<std::string>> keys =
      decode<std::vector<std::string>>(reply, cluster ? "SUNION" : "SMEMBERS");
  if (keys.ok()) std::sort(keys.value().begin(), keys.value().end());
  co_return keys;
}

// SCARD of the index; with the cluster layout, plus its reaping set's (a key moving from one to
// the other is counted in either). Only compared with the count of an earlier cycle: a change
// of either set changes the sum, but for a key added as another is taken out. Refused by the
// server's ACL once (NOPERM: no +scard), it is not sent again, so the server's ACL LOG and the
// worker's log get one refusal, not one each discovery cycle.
Task<Result<std::uint64_t>> RedisBroker::partition_count(std::string_view category) {
  static constexpr const char* kRefused = "SCARD was refused by the server's ACL";
  if (partition_count_refused_) co_return make_error(Errc::unsupported, kRefused);
  std::uint64_t count = 0;
  std::vector<Command> counts{Command{"SCARD", partition_index_name(category)}};
  if (options_.key_layout == KeyLayout::cluster) {
    counts.push_back(Command{"SCARD", reaping_set_name(category)});
  }
  for (Command& command : counts) {
    Result<Reply> reply = co_await link_.execute(std::move(command));
    if (reply.ok() && reply.value().is_error_with("NOPERM")) {
      partition_count_refused_ = true;
      co_return make_error(Errc::unsupported, kRefused);
    }
    Result<std::int64_t> members = decode<std::int64_t>(reply, "SCARD");
    if (!members.ok()) co_return members.error();
    count += static_cast<std::uint64_t>(members.value());
  }
  co_return count;
}

// SADD C:__subscribers__ G: the reap script refuses a partition G has not joined yet.
Task<Status> RedisBroker::subscribe(std::string_view category, std::string_view group) {
  Command command{"SADD", subscribers_set_name(category), std::string(group)};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  co_return status_of(decode<std::int64_t>(reply, "subscribe"));
}

Task<Status> RedisBroker::announce_member(std::string_view category, std::string_view group,
                                          std::string_view owner_id, std::uint64_t ttl_ms) {
  const KeyLayout layout = options_.key_layout;
  script::AnnounceMember::Args args{member_key_name(category, group, owner_id, layout),
                                    members_set_name(category, group, layout),
                                    std::string(owner_id), ttl_ms};
  ScriptCall call = script::encode<script::AnnounceMember>(std::move(args));
  Result<Reply> reply = co_await run_script(script::AnnounceMember::name, std::move(call));
  co_return status_of(script::decode_reply<script::AnnounceMember>(reply));
}

// A member whose key expired is dropped from the set by the script; if it is in fact alive, its
// next heartbeat adds it back.
Task<Result<std::vector<std::string>>> RedisBroker::live_members(std::string_view category,
                                                                 std::string_view group) {
  script::LiveMembers::Args args;
  args.members = members_set_name(category, group, options_.key_layout);
  Command command{"SMEMBERS", args.members};
  Result<Reply> members = co_await link_.execute(std::move(command));
  Result<std::vector<std::string>> listed = decode<std::vector<std::string>>(members, "SMEMBERS");
  if (!listed.ok() || listed.value().empty()) co_return listed;
  args.owners = std::move(listed).value();
  std::sort(args.owners.begin(), args.owners.end());
  for (const auto& owner : args.owners) {
    args.member_keys.push_back(member_key_name(category, group, owner, options_.key_layout));
  }
  ScriptCall call = script::encode<script::LiveMembers>(std::move(args));
  Result<Reply> reply = co_await run_script(script::LiveMembers::name, std::move(call));
  co_return script::decode_reply<script::LiveMembers>(reply);
}

Task<Status> RedisBroker::leave_members(std::string_view category, std::string_view group,
                                        std::string_view owner_id) {
  Command del{"DEL", member_key_name(category, group, owner_id, options_.key_layout)};
  Result<Reply> deleted = co_await link_.execute(std::move(del));
  Status status = status_of(decode<std::int64_t>(deleted, "DEL"));
  if (!status.ok()) co_return status;
  Command srem{"SREM", members_set_name(category, group, options_.key_layout),
               std::string(owner_id)};
  Result<Reply> removed = co_await link_.execute(std::move(srem));
  co_return status_of(decode<std::int64_t>(removed, "SREM"));
}

Task<Result<std::optional<Lease>>> RedisBroker::acquire(const PartitionRef& given,
                                                        std::string_view scope,
                                                        std::string_view owner_id,
                                                        std::uint64_t ttl_ms) {
  const PartitionRef partition = laid_out(given);
  SEQBY_CHECK(!owner_id.empty() && owner_id.find(':') == std::string_view::npos);
  script::Acquire::Args args{lease_key_for(partition, scope), partition.fence(),
                             std::string(owner_id), ttl_ms};
  args.journal = journal_of(Lease{partition, std::string(scope), std::string(owner_id), 0, ""});
  ScriptCall call = script::encode<script::Acquire>(std::move(args));
  Result<Reply> reply = co_await run_script(script::Acquire::name, std::move(call), true);
  Result<std::optional<std::uint64_t>> generation = script::decode_reply<script::Acquire>(reply);
  if (!generation.ok()) co_return generation.error();
  if (!generation.value().has_value()) co_return std::optional<Lease>();
  SEQBY_CHECK(*generation.value() >= 1);
  co_return std::optional<Lease>(
      Lease{partition, std::string(scope), std::string(owner_id), *generation.value(), ""});
}

Task<Status> RedisBroker::renew(const Lease& lease, std::uint64_t ttl_ms) {
  script::Renew::Args args{lease.key(), lease.token(), ttl_ms, journal_of(lease)};
  ScriptCall call = script::encode<script::Renew>(std::move(args));
  Result<Reply> reply = co_await run_script(script::Renew::name, std::move(call));
  co_return status_of(script::decode_reply<script::Renew>(reply));
}

Task<Result<bool>> RedisBroker::release(const Lease& lease) {
  script::Release::Args args{lease.key(), lease.token(), journal_of(lease)};
  ScriptCall call = script::encode<script::Release>(std::move(args));
  Result<Reply> reply = co_await run_script(script::Release::name, std::move(call));
  co_return script::decode_reply<script::Release>(reply);
}

Task<Status> RedisBroker::ensure_group(const PartitionRef& given, std::string_view group) {
  const PartitionRef partition = laid_out(given);
  Command command{
      "XGROUP",  "CREATE", partition.stream(), std::string(group), options_.group_start_id,
      "MKSTREAM"};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  if (reply.ok() && reply.value().is_error_with("BUSYGROUP")) co_return Status::Ok();
  co_return status_of(decode<std::string>(reply, "XGROUP CREATE"));
}

}  // namespace seqby::redis
