// RedisBroker: script execution, error mapping, and the calls that are not fenced (publish,
// discovery, membership, lease acquire/renew/release, group creation). Fenced partition calls
// are in redis_broker_fenced.cpp.
#include "seqby/broker/redis_broker.h"

#include <algorithm>

#include "redis_broker_detail.h"
#include "seqby/broker/scripts.h"

namespace seqby::redis {

std::string members_set_name(std::string_view category, std::string_view group) {
  return std::string(category) + ":__members__:" + std::string(group);
}

std::string member_key_name(std::string_view category, std::string_view group,
                            std::string_view owner_id) {
  return std::string(category) + ":__member__:" + std::string(group) + ":" + std::string(owner_id);
}

std::string sink_key_name(const PartitionRef& partition, std::string_view group) {
  return partition.stream() + ":__sink__:" + std::string(group);
}

std::string effects_hash_name(const PartitionRef& partition, std::string_view group) {
  return partition.stream() + ":__effects__:" + std::string(group);
}

std::string halt_key_name(const PartitionRef& partition, std::string_view group) {
  return partition.stream() + ":__halt__:" + std::string(group);
}

Error error_from_reply(const Reply& reply) {
  SEQBY_CHECK(reply.is_error());
  if (reply.is_error_with("FENCED")) return make_error(Errc::fenced, reply.str);
  if (reply.is_error_with("NOGROUP")) return make_error(Errc::no_group, reply.str);
  return make_error(Errc::protocol, reply.str);
}

namespace detail {

Error shape_error(std::string_view call, const Reply& reply) {
  return make_error(Errc::protocol,
                    "unexpected reply to " + std::string(call) + ": " + to_string(reply));
}

Status status_of(const Result<Reply>& reply) {
  if (!reply.ok()) return reply.error();
  if (reply.value().is_error()) return error_from_reply(reply.value());
  return Status::Ok();
}

Result<std::vector<std::string>> strings_of(std::string_view call, const Result<Reply>& reply) {
  if (!reply.ok()) return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) return error_from_reply(r);
  if (r.kind != Reply::Kind::array) return shape_error(call, r);
  std::vector<std::string> out;
  out.reserve(r.elements.size());
  for (const Reply& e : r.elements) {
    if (e.kind != Reply::Kind::bulk) return shape_error(call, r);
    out.push_back(e.str);
  }
  return out;
}

}  // namespace detail

using detail::shape_error;
using detail::status_of;
using detail::strings_of;

RedisBrokerOptions redis_broker_options_for(Variant variant) {
  RedisBrokerOptions options;
  // KNOWN-BROKEN variants (seqby/core/variant.h): without a lease (shared_group), or with only
  // a per-message lock (message_lock), nothing is fenced; group_at_dollar skips the backlog.
  options.unfenced = variant == Variant::no_fence || variant == Variant::shared_group ||
                     variant == Variant::message_lock;
  if (variant == Variant::group_at_dollar) options.group_start_id = "$";
  return options;
}

RedisBroker::RedisBroker(RedisLink& link, RedisBrokerOptions options)
    : link_(link), options_(options) {
  SEQBY_CHECK(options_.reclaim_count_per_call > 0);
  SEQBY_CHECK(options_.reclaim_calls_per_script > 0);
  SEQBY_CHECK(options_.reclaim_scripts_max > 0);
}

CapabilitySet RedisBroker::capabilities() const {
  return CapabilitySet{Capability::stream_partitioning, Capability::consumer_groups,
                       Capability::reclaim_pending};
}

Task<Result<Reply>> RedisBroker::eval(const char* source, const std::vector<std::string>& keys,
                                      const std::vector<std::string>& args, std::string_view sha) {
  Command command;
  command.reserve(3 + keys.size() + args.size());
  if (sha.empty()) {
    command.push_back("EVAL");
    command.push_back(source);
  } else {
    command.push_back("EVALSHA");
    command.push_back(std::string(sha));
  }
  command.push_back(std::to_string(keys.size()));
  command.insert(command.end(), keys.begin(), keys.end());
  command.insert(command.end(), args.begin(), args.end());
  co_return co_await link_.execute(std::move(command));
}

std::size_t RedisBroker::script_index(std::string_view name) {
  for (std::size_t i = 0; i < scripts_.size(); ++i) {
    if (scripts_[i].name == name) return i;
  }
  for (const EmbeddedScript& embedded : embedded_scripts()) {
    if (name == embedded.name) {
      scripts_.push_back(LoadedScript{embedded.name, embedded.source, ""});
      return scripts_.size() - 1;
    }
  }
  SEQBY_CHECK(false && "no embedded script of that name");
  return 0;
}

Task<Result<Reply>> RedisBroker::run_script(std::string_view name, std::vector<std::string> keys,
                                            std::vector<std::string> args) {
  // By index, never by reference: scripts_ may grow while this call waits for a reply.
  const std::size_t index = script_index(name);
  const char* source = scripts_[index].source;
  if (!script_load_refused_) {
    std::string sha = scripts_[index].sha;
    if (sha.empty()) {
      Command command{"SCRIPT", "LOAD", source};
      Result<Reply> loaded = co_await link_.execute(std::move(command));
      if (!loaded.ok()) co_return loaded.error();
      if (loaded.value().kind == Reply::Kind::bulk) {
        sha = loaded.value().str;
        scripts_[index].sha = sha;
      } else {
        script_load_refused_ = true;
      }
    }
    if (!sha.empty()) {
      Result<Reply> reply = co_await eval(source, keys, args, sha);
      if (!reply.ok() || !reply.value().is_error_with("NOSCRIPT")) co_return reply;
      // The server lost its script cache: EVAL now, load again next time.
      scripts_[index].sha.clear();
    }
  }
  co_return co_await eval(source, keys, args, {});
}

Task<Result<std::string>> RedisBroker::publish(const PartitionRef& partition, std::string_view type,
                                               std::string_view data_json) {
  std::vector<std::string> script_keys{partition.stream(), partition.index()};
  std::vector<std::string> script_args{partition.key, std::string(type), std::string(data_json)};
  Result<Reply> reply =
      co_await run_script("publish", std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.kind != Reply::Kind::bulk) co_return shape_error("publish", r);
  co_return r.str;
}

Task<Result<std::vector<std::string>>> RedisBroker::partitions(std::string_view category) {
  Command command{"SMEMBERS", partition_index_name(category)};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  Result<std::vector<std::string>> keys = strings_of("SMEMBERS", reply);
  if (keys.ok()) std::sort(keys.value().begin(), keys.value().end());
  co_return keys;
}

// SADD C:__subscribers__ G: the reap script refuses a partition G has not joined yet.
Task<Status> RedisBroker::subscribe(std::string_view category, std::string_view group) {
  Command command{"SADD", subscribers_set_name(category), std::string(group)};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.kind != Reply::Kind::integer) co_return detail::shape_error("subscribe", r);
  co_return Status::Ok();
}

Task<Status> RedisBroker::announce_member(std::string_view category, std::string_view group,
                                          std::string_view owner_id, std::uint64_t ttl_ms) {
  std::vector<std::string> script_keys{member_key_name(category, group, owner_id),
                                       members_set_name(category, group)};
  std::vector<std::string> script_args{std::string(owner_id), std::to_string(ttl_ms)};
  Result<Reply> reply =
      co_await run_script("announce_member", std::move(script_keys), std::move(script_args));
  co_return status_of(reply);
}

// A member whose key expired is dropped from the set by the script; if it is in fact alive, its
// next heartbeat adds it back.
Task<Result<std::vector<std::string>>> RedisBroker::live_members(std::string_view category,
                                                                 std::string_view group) {
  const std::string set = members_set_name(category, group);
  Command command{"SMEMBERS", set};
  Result<std::vector<std::string>> listed =
      strings_of("SMEMBERS", co_await link_.execute(std::move(command)));
  if (!listed.ok() || listed.value().empty()) co_return listed;
  std::vector<std::string> owners = std::move(listed).value();
  std::sort(owners.begin(), owners.end());
  std::vector<std::string> script_keys{set};
  for (const auto& owner : owners) script_keys.push_back(member_key_name(category, group, owner));
  Result<Reply> reply =
      co_await run_script("live_members", std::move(script_keys), std::move(owners));
  co_return strings_of("live_members", reply);
}

Task<Status> RedisBroker::leave_members(std::string_view category, std::string_view group,
                                        std::string_view owner_id) {
  Command del{"DEL", member_key_name(category, group, owner_id)};
  Status deleted = status_of(co_await link_.execute(std::move(del)));
  if (!deleted.ok()) co_return deleted;
  Command srem{"SREM", members_set_name(category, group), std::string(owner_id)};
  co_return status_of(co_await link_.execute(std::move(srem)));
}

Task<Result<std::optional<Lease>>> RedisBroker::acquire(const PartitionRef& partition,
                                                        std::string_view scope,
                                                        std::string_view owner_id,
                                                        std::uint64_t ttl_ms) {
  SEQBY_CHECK(!owner_id.empty() && owner_id.find(':') == std::string_view::npos);
  std::vector<std::string> script_keys{lease_key_for(partition, scope), partition.fence()};
  std::vector<std::string> script_args{std::string(owner_id), std::to_string(ttl_ms)};
  Result<Reply> reply =
      co_await run_script("acquire", std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.is_nil()) co_return std::optional<Lease>();
  if (r.kind != Reply::Kind::integer || r.integer < 1) co_return shape_error("acquire", r);
  co_return std::optional<Lease>(Lease{partition, std::string(scope), std::string(owner_id),
                                       static_cast<std::uint64_t>(r.integer), ""});
}

Task<Status> RedisBroker::renew(const Lease& lease, std::uint64_t ttl_ms) {
  std::vector<std::string> script_keys{lease.key()};
  std::vector<std::string> script_args{lease.token(), std::to_string(ttl_ms)};
  co_return status_of(co_await run_script("renew", std::move(script_keys), std::move(script_args)));
}

Task<Result<bool>> RedisBroker::release(const Lease& lease) {
  std::vector<std::string> script_keys{lease.key()};
  std::vector<std::string> script_args{lease.token()};
  Result<Reply> reply =
      co_await run_script("release", std::move(script_keys), std::move(script_args));
  if (!reply.ok()) co_return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) co_return error_from_reply(r);
  if (r.kind != Reply::Kind::integer) co_return shape_error("release", r);
  co_return r.integer == 1;
}

Task<Status> RedisBroker::ensure_group(const PartitionRef& partition, std::string_view group) {
  Command command{
      "XGROUP",  "CREATE", partition.stream(), std::string(group), options_.group_start_id,
      "MKSTREAM"};
  Result<Reply> reply = co_await link_.execute(std::move(command));
  if (reply.ok() && reply.value().is_error_with("BUSYGROUP")) co_return Status::Ok();
  co_return status_of(reply);
}

}  // namespace seqby::redis
