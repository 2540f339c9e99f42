#include "seqby/hiredis/admin.h"

#include <algorithm>
#include <charconv>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/scripts.h"
#include "seqby/core/keys.h"
#include "seqby/core/naming.h"

namespace seqby::redis {
namespace {

std::string lease_of_group(std::string_view category, std::string_view key,
                           std::string_view group) {
  return lease_key_name(category, key) + ":" + std::string(group);
}

bool parse_int(std::string_view text, std::int64_t* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_uint(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

Error unexpected(const std::string& what, const Reply& reply) {
  return make_error(Errc::protocol, what + ": unexpected reply " + to_string(reply));
}

// The value of `name` in a flat [name, value, name, value...] array reply, or nullptr.
const Reply* field_of(const Reply& flat, std::string_view name) {
  if (flat.kind != Reply::Kind::array) return nullptr;
  for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
    const Reply& n = flat.elements[i];
    if ((n.kind == Reply::Kind::bulk || n.kind == Reply::Kind::status) && n.str == name) {
      return &flat.elements[i + 1];
    }
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// The checks of an action's arguments that need no server.
Status validate_action(std::string_view category, std::string_view key, std::string_view group,
                       std::string_view id) {
  if (Status valid = validate_category_name(category); !valid.ok()) return valid;
  if (Status valid = validate_partition_key(key); !valid.ok()) return valid;
  if (!group.empty()) {
    if (Status valid = validate_group_name(group); !valid.ok()) return valid;
  }
  if (!is_stream_entry_id(id)) {
    return make_error(Errc::invalid, printable(id) + " is not a stream entry id (MS-SEQ)");
  }
  return Status::Ok();
}

// Maps a refusal of admin_skip.lua / admin_dlq.lua to its Errc: NOENTRY is an unknown id (bad
// input), NOTHEAD a refused action. The message drops the reply's code word.
Error script_refusal(const Reply& reply) {
  const std::size_t space = reply.str.find(' ');
  const std::string text = space == std::string::npos ? reply.str : reply.str.substr(space + 1);
  if (reply.is_error_with("NOENTRY")) return make_error(Errc::not_found, text);
  if (reply.is_error_with("NOTHEAD")) return make_error(Errc::refused, text);
  if (reply.is_error_with("NOGROUP")) return make_error(Errc::no_group, reply.str);
  return make_error(Errc::protocol, reply.str);
}

}  // namespace

bool is_stream_entry_id(std::string_view id) {
  const std::size_t dash = id.find('-');
  if (dash == std::string_view::npos) return false;
  std::uint64_t part = 0;
  return parse_uint(id.substr(0, dash), &part) && parse_uint(id.substr(dash + 1), &part);
}

Result<Reply> Admin::run(const Command& command) {
  Result<Reply> reply = redis_.execute(command);
  if (!reply.ok()) return reply.error();
  if (reply.value().is_error()) {
    if (reply.value().is_error_with("WRONGTYPE") && command.size() > 1) {
      return make_error(Errc::invalid, command[1] + " is not of the type seqby expects (" +
                                           reply.value().str + ")");
    }
    return make_error(
        Errc::protocol,
        command.front() + " " + (command.size() > 1 ? command[1] : "") + ": " + reply.value().str);
  }
  return reply;
}

Result<std::int64_t> Admin::server_time_ms() {
  Result<Reply> time = run({"TIME"});
  if (!time.ok()) return time.error();
  const Reply& t = time.value();
  std::int64_t seconds = 0;
  std::int64_t micros = 0;
  if (t.kind != Reply::Kind::array || t.elements.size() != 2 ||
      !parse_int(t.elements[0].str, &seconds) || !parse_int(t.elements[1].str, &micros)) {
    return unexpected("TIME", t);
  }
  return seconds * 1000 + micros / 1000;
}

Result<Admin::StreamCounts> Admin::stream_counts(const std::string& stream) {
  Result<Reply> length = run({"XLEN", stream});
  if (!length.ok()) return length.error();
  if (length.value().kind != Reply::Kind::integer)
    return unexpected("XLEN " + stream, length.value());
  StreamCounts counts;
  counts.length = static_cast<std::uint64_t>(length.value().integer);
  counts.entries_added = counts.length;
  Result<Reply> info = run({"XINFO", "STREAM", stream});
  if (!info.ok()) return info.error();
  const Reply* added = field_of(info.value(), "entries-added");
  if (added != nullptr && added->kind == Reply::Kind::integer) {
    counts.entries_added = static_cast<std::uint64_t>(added->integer);
  }
  return counts;
}

Result<std::optional<LeaseView>> Admin::lease_at(const std::string& lease_key) {
  Result<Reply> value = run({"GET", lease_key});
  if (!value.ok()) return value.error();
  if (value.value().is_nil()) return std::optional<LeaseView>();
  if (value.value().kind != Reply::Kind::bulk) return unexpected("GET " + lease_key, value.value());
  const std::string& token = value.value().str;
  LeaseView lease;
  const std::size_t colon = token.rfind(':');
  lease.owner = colon == std::string::npos ? token : token.substr(0, colon);
  if (colon == std::string::npos ||
      !parse_uint(std::string_view(token).substr(colon + 1), &lease.generation)) {
    return make_error(Errc::protocol, lease_key + " holds '" + token + "', not O:N");
  }
  Result<Reply> ttl = run({"PTTL", lease_key});
  if (!ttl.ok()) return ttl.error();
  if (ttl.value().kind != Reply::Kind::integer) return unexpected("PTTL " + lease_key, ttl.value());
  if (ttl.value().integer == -2) return std::optional<LeaseView>();  // expired in between
  lease.ttl_ms = ttl.value().integer;
  return std::optional<LeaseView>(std::move(lease));
}

Result<std::optional<HeadView>> Admin::head_of(const std::string& stream,
                                               const std::string& group) {
  Result<Reply> pending = run({"XPENDING", stream, group, "-", "+", "1"});
  if (!pending.ok()) return pending.error();
  const Reply& list = pending.value();
  if (list.kind != Reply::Kind::array) return unexpected("XPENDING " + stream, list);
  if (list.elements.empty()) return std::optional<HeadView>();
  const Reply& row = list.elements.front();
  if (row.kind != Reply::Kind::array || row.elements.size() != 4 ||
      row.elements[0].kind != Reply::Kind::bulk || row.elements[1].kind != Reply::Kind::bulk ||
      row.elements[2].kind != Reply::Kind::integer ||
      row.elements[3].kind != Reply::Kind::integer) {
    return unexpected("XPENDING " + stream, list);
  }
  HeadView head;
  head.id = row.elements[0].str;
  head.consumer = row.elements[1].str;
  head.idle_ms = row.elements[2].integer;
  head.delivery_count = static_cast<std::uint64_t>(row.elements[3].integer);
  return std::optional<HeadView>(std::move(head));
}

Result<std::optional<HaltView>> Admin::halt_of(const std::string& halt_key) {
  Result<Reply> all = run({"HGETALL", halt_key});
  if (!all.ok()) return all.error();
  const Reply& flat = all.value();
  if (flat.kind != Reply::Kind::array) return unexpected("HGETALL " + halt_key, flat);
  if (flat.elements.empty()) return std::optional<HaltView>();
  HaltView halt;
  auto text = [&flat](std::string_view name) {
    const Reply* value = field_of(flat, name);
    return value != nullptr && value->kind == Reply::Kind::bulk ? value->str : std::string();
  };
  halt.id = text("id");
  halt.reason = text("reason");
  halt.owner = text("owner");
  (void)parse_int(text("since_ms"), &halt.since_ms);
  (void)parse_uint(text("delivery_count"), &halt.delivery_count);
  return std::optional<HaltView>(std::move(halt));
}

Result<std::vector<GroupView>> Admin::groups_of(std::string_view category, std::string_view key,
                                                std::uint64_t entries_added) {
  const std::string stream = partition_stream_name(category, key);
  Result<Reply> info = run({"XINFO", "GROUPS", stream});
  if (!info.ok()) return info.error();
  if (info.value().kind != Reply::Kind::array)
    return unexpected("XINFO GROUPS " + stream, info.value());
  std::vector<GroupView> groups;
  for (const Reply& flat : info.value().elements) {
    const Reply* name = field_of(flat, "name");
    const Reply* pending = field_of(flat, "pending");
    if (name == nullptr || name->kind != Reply::Kind::bulk || pending == nullptr ||
        pending->kind != Reply::Kind::integer) {
      return unexpected("XINFO GROUPS " + stream, info.value());
    }
    GroupView group;
    group.name = name->str;
    group.pending = static_cast<std::uint64_t>(pending->integer);
    const Reply* lag = field_of(flat, "lag");
    const Reply* entries_read = field_of(flat, "entries-read");
    if (lag != nullptr && lag->kind == Reply::Kind::integer) {
      group.lag = lag->integer;
    } else if (entries_read != nullptr && entries_read->kind == Reply::Kind::integer) {
      // Redis withholds lag when entries were deleted; the counters still give an estimate.
      group.lag = static_cast<std::int64_t>(entries_added) - entries_read->integer;
    }
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(),
            [](const GroupView& a, const GroupView& b) { return a.name < b.name; });
  const PartitionRef partition{std::string(category), std::string(key)};
  for (GroupView& group : groups) {
    Result<std::optional<LeaseView>> lease = lease_at(lease_of_group(category, key, group.name));
    if (!lease.ok()) return lease.error();
    if (!lease.value().has_value()) {
      // A process manager G holds its group on C:K through its lease for correlation value K.
      lease = lease_at(lease_key_name(pm_lease_category(group.name), key));
      if (!lease.ok()) return lease.error();
    }
    group.lease = std::move(lease).value();
    Result<std::optional<HeadView>> head = head_of(stream, group.name);
    if (!head.ok()) return head.error();
    group.head = std::move(head).value();
    Result<std::optional<HaltView>> halt = halt_of(halt_key_name(partition, group.name));
    if (!halt.ok()) return halt.error();
    group.halt = std::move(halt).value();
  }
  return groups;
}

Result<CategoryView> Admin::partitions(std::string_view category) {
  if (Status valid = validate_category_name(category); !valid.ok()) return valid.error();
  CategoryView view;
  view.category = std::string(category);
  Result<std::int64_t> now_ms = server_time_ms();
  if (!now_ms.ok()) return now_ms.error();
  view.server_time_ms = now_ms.value();

  const std::string index = partition_index_name(category);
  Result<Reply> members = run({"SMEMBERS", index});
  if (!members.ok()) return members.error();
  if (members.value().kind != Reply::Kind::array)
    return unexpected("SMEMBERS " + index, members.value());
  std::vector<std::string> keys;
  for (const Reply& member : members.value().elements) {
    if (member.kind != Reply::Kind::bulk) return unexpected("SMEMBERS " + index, members.value());
    keys.push_back(member.str);
  }
  if (keys.empty()) {
    Result<Reply> exists = run({"EXISTS", std::string(category)});
    if (!exists.ok()) return exists.error();
    if (exists.value().kind != Reply::Kind::integer || exists.value().integer == 0) {
      return make_error(Errc::not_found, "unknown category " + printable(category) + ": " + index +
                                             " is empty and there is no stream " +
                                             std::string(category));
    }
    return view;
  }
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) {
    PartitionView partition;
    partition.key = key;
    Result<std::optional<LeaseView>> lease = lease_at(lease_key_name(category, key));
    if (!lease.ok()) return lease.error();
    partition.lease = std::move(lease).value();
    const std::string stream = partition_stream_name(category, key);
    Result<Reply> type = run({"TYPE", stream});
    if (!type.ok()) return type.error();
    partition.stream_exists = type.value().str == "stream";
    if (partition.stream_exists) {
      Result<StreamCounts> counts = stream_counts(stream);
      if (!counts.ok()) return counts.error();
      partition.length = counts.value().length;
      Result<std::vector<GroupView>> groups =
          groups_of(category, key, counts.value().entries_added);
      if (!groups.ok()) return groups.error();
      partition.groups = std::move(groups).value();
    }
    view.partitions.push_back(std::move(partition));
  }
  return view;
}

Status Admin::check_partition(std::string_view category, std::string_view key) {
  const std::string stream = partition_stream_name(category, key);
  Result<Reply> type = run({"TYPE", stream});
  if (!type.ok()) return type.error();
  if (type.value().str == "stream") return Status::Ok();
  if (type.value().str != "none") {
    return make_error(Errc::invalid, stream + " is a " + type.value().str + ", not a stream");
  }
  const std::string index = partition_index_name(category);
  Result<Reply> member = run({"SISMEMBER", index, std::string(key)});
  if (!member.ok()) return member.error();
  if (member.value().kind == Reply::Kind::integer && member.value().integer == 1) {
    return make_error(Errc::not_found, "partition " + printable(key) + " is in " + index +
                                           " but its stream " + stream + " does not exist");
  }
  return make_error(Errc::not_found, "unknown partition: no stream " + stream + " and " +
                                         printable(key) + " is not in " + index);
}

Result<std::string> Admin::choose_group(std::string_view category, std::string_view key,
                                        std::string_view group) {
  const std::string stream = partition_stream_name(category, key);
  if (!group.empty()) {
    if (Status valid = validate_group_name(group); !valid.ok()) return valid.error();
  }
  Result<Reply> info = run({"XINFO", "GROUPS", stream});
  if (!info.ok()) return info.error();
  std::vector<std::string> names;
  for (const Reply& flat : info.value().elements) {
    const Reply* name = field_of(flat, "name");
    if (name == nullptr || name->kind != Reply::Kind::bulk) {
      return unexpected("XINFO GROUPS " + stream, info.value());
    }
    names.push_back(name->str);
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) {
    return make_error(Errc::invalid, stream + " has no consumer group: nothing was ever delivered");
  }
  if (group.empty()) {
    if (names.size() == 1) return names.front();
    return make_error(Errc::invalid, stream + " has " + std::to_string(names.size()) +
                                         " groups; choose one with --group: " + join(names));
  }
  if (std::find(names.begin(), names.end(), group) == names.end()) {
    return make_error(Errc::invalid, "no group " + printable(group) + " on " + stream +
                                         "; its groups: " + join(names));
  }
  return std::string(group);
}

Result<InspectView> Admin::inspect(std::string_view category, std::string_view key,
                                   std::string_view group) {
  if (Status valid = validate_action(category, key, group, "0-0"); !valid.ok()) {
    return valid.error();
  }
  if (Status exists = check_partition(category, key); !exists.ok()) return exists.error();
  Result<std::string> chosen = choose_group(category, key, group);
  if (!chosen.ok()) return chosen.error();
  InspectView view;
  view.category = std::string(category);
  view.key = std::string(key);
  view.group = chosen.value();
  const std::string stream = partition_stream_name(category, key);
  Result<std::int64_t> now_ms = server_time_ms();
  if (!now_ms.ok()) return now_ms.error();
  view.server_time_ms = now_ms.value();
  Result<StreamCounts> counts = stream_counts(stream);
  if (!counts.ok()) return counts.error();
  view.length = counts.value().length;
  Result<std::vector<GroupView>> groups = groups_of(category, key, counts.value().entries_added);
  if (!groups.ok()) return groups.error();
  for (GroupView& g : groups.value()) {
    if (g.name == view.group) view.status = std::move(g);
  }
  if (view.status.lease.has_value()) {
    view.lease = view.status.lease;
  } else {
    Result<std::optional<LeaseView>> lease = lease_at(lease_key_name(category, key));
    if (!lease.ok()) return lease.error();
    view.lease = std::move(lease).value();
  }
  if (view.status.head.has_value()) {
    const std::string& id = view.status.head->id;
    Result<Reply> entry = run({"XRANGE", stream, id, id});
    if (!entry.ok()) return entry.error();
    const Reply& list = entry.value();
    if (list.kind != Reply::Kind::array) return unexpected("XRANGE " + stream, list);
    if (list.elements.empty()) {
      view.head_deleted = true;
    } else {
      const Reply& row = list.elements.front();
      if (row.kind != Reply::Kind::array || row.elements.size() != 2 ||
          row.elements[1].kind != Reply::Kind::array) {
        return unexpected("XRANGE " + stream, list);
      }
      const std::vector<Reply>& flat = row.elements[1].elements;
      for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
        view.fields.emplace_back(flat[i].str, flat[i + 1].str);
      }
    }
  }
  return view;
}

Result<SkipOutcome> Admin::skip(std::string_view category, std::string_view key,
                                std::string_view group, std::string_view id) {
  if (Status valid = validate_action(category, key, group, id); !valid.ok()) return valid.error();
  if (Status exists = check_partition(category, key); !exists.ok()) return exists.error();
  Result<std::string> chosen = choose_group(category, key, group);
  if (!chosen.ok()) return chosen.error();
  const char* source = script_source("admin_skip");
  SEQBY_CHECK(source != nullptr);
  const PartitionRef partition{std::string(category), std::string(key)};
  Result<Reply> reply =
      redis_.execute({"EVAL", source, "2", partition.stream(),
                      halt_key_name(partition, chosen.value()), chosen.value(), std::string(id)});
  if (!reply.ok()) return reply.error();
  if (reply.value().is_error()) return script_refusal(reply.value());
  if (reply.value().kind != Reply::Kind::integer) return unexpected("admin_skip", reply.value());
  return SkipOutcome{chosen.value(), std::string(id), reply.value().integer == 1};
}

Result<DlqOutcome> Admin::dlq(std::string_view category, std::string_view key,
                              std::string_view group, std::string_view id) {
  if (Status valid = validate_action(category, key, group, id); !valid.ok()) return valid.error();
  if (Status exists = check_partition(category, key); !exists.ok()) return exists.error();
  Result<std::string> chosen = choose_group(category, key, group);
  if (!chosen.ok()) return chosen.error();
  const char* source = script_source("admin_dlq");
  SEQBY_CHECK(source != nullptr);
  const PartitionRef partition{std::string(category), std::string(key)};
  const std::string dlq = partition.dlq();
  Result<Reply> reply = redis_.execute({"EVAL", source, "3", partition.stream(),
                                        halt_key_name(partition, chosen.value()), dlq,
                                        chosen.value(), std::string(id)});
  if (!reply.ok()) return reply.error();
  const Reply& r = reply.value();
  if (r.is_error()) return script_refusal(r);
  if (r.kind != Reply::Kind::array || r.elements.size() != 2 ||
      r.elements[0].kind != Reply::Kind::bulk || r.elements[1].kind != Reply::Kind::integer) {
    return unexpected("admin_dlq", r);
  }
  return DlqOutcome{chosen.value(), std::string(id), dlq, r.elements[0].str,
                    r.elements[1].integer == 1};
}

}  // namespace seqby::redis
