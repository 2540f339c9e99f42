#include "seqby/hiredis/admin.h"

#include <algorithm>
#include <charconv>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/broker/script_contracts.h"
#include "seqby/broker/scripts.h"
#include "seqby/core/keys.h"
#include "seqby/core/keyspace.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

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

// The EVAL of operator script S with `args` (an operator's one-off call: no SCRIPT LOAD).
template <typename S>
Command script_command(const typename S::Args& args) {
  const char* source = script_source(S::name);
  SEQBY_CHECK(source != nullptr);
  return eval_command("EVAL", source, script::encode<S>(args));
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

}  // namespace

bool is_stream_entry_id(std::string_view id) {
  const std::size_t dash = id.find('-');
  if (dash == std::string_view::npos) return false;
  std::uint64_t part = 0;
  return parse_uint(id.substr(0, dash), &part) && parse_uint(id.substr(dash + 1), &part);
}

Result<Reply> Admin::execute(const Command& command) {
  if (cluster_ != nullptr) {
    SEQBY_CHECK(runtime_ != nullptr);
    return runtime_->block_on(cluster_->execute(command));
  }
  SEQBY_CHECK(redis_ != nullptr);
  return redis_->execute(command);
}

Result<Reply> Admin::run(const Command& command) {
  Result<Reply> reply = execute(command);
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

template <typename T>
Result<T> Admin::read(const Command& command) {
  Result<Reply> reply = run(command);
  if (!reply.ok()) return reply.error();
  return decode<T>(reply.value(),
                   command.front() + (command.size() > 1 ? " " + command[1] : std::string()));
}

Result<std::int64_t> Admin::server_time_ms() {
  Result<std::tuple<std::string, std::string>> time =
      read<std::tuple<std::string, std::string>>({"TIME"});
  if (!time.ok()) return time.error();
  std::int64_t seconds = 0;
  std::int64_t micros = 0;
  const auto& [seconds_text, micros_text] = time.value();
  if (!parse_int(seconds_text, &seconds) || !parse_int(micros_text, &micros)) {
    return make_error(Errc::protocol,
                      "TIME: not seconds and microseconds: " + seconds_text + " " + micros_text);
  }
  return seconds * 1000 + micros / 1000;
}

Result<Admin::StreamCounts> Admin::stream_counts(const std::string& stream) {
  Result<std::uint64_t> length = read<std::uint64_t>({"XLEN", stream});
  if (!length.ok()) return length.error();
  StreamCounts counts;
  counts.length = length.value();
  counts.entries_added = counts.length;
  Result<FieldMap> info = read<FieldMap>({"XINFO", "STREAM", stream});
  if (!info.ok()) return info.error();
  if (std::optional<std::uint64_t> added = info.value().get<std::uint64_t>("entries-added")) {
    counts.entries_added = *added;
  }
  return counts;
}

Result<std::optional<LeaseView>> Admin::lease_at(const std::string& lease_key) {
  Result<std::optional<std::string>> value = read<std::optional<std::string>>({"GET", lease_key});
  if (!value.ok()) return value.error();
  if (!value.value().has_value()) return std::optional<LeaseView>();
  const std::string& token = *value.value();
  LeaseView lease;
  const std::size_t colon = token.rfind(':');
  lease.owner = colon == std::string::npos ? token : token.substr(0, colon);
  if (colon == std::string::npos ||
      !parse_uint(std::string_view(token).substr(colon + 1), &lease.generation)) {
    return make_error(Errc::protocol, lease_key + " holds '" + token + "', not O:N");
  }
  Result<std::int64_t> ttl = read<std::int64_t>({"PTTL", lease_key});
  if (!ttl.ok()) return ttl.error();
  if (ttl.value() == -2) return std::optional<LeaseView>();  // expired in between
  lease.ttl_ms = ttl.value();
  return std::optional<LeaseView>(std::move(lease));
}

Result<std::optional<HeadView>> Admin::head_of(const std::string& stream,
                                               const std::string& group) {
  // XPENDING's extended form: {{id, consumer, idle_ms, delivery_count}} or an empty array.
  using Row = std::tuple<std::string, std::string, std::int64_t, std::uint64_t>;
  Result<std::vector<Row>> pending =
      read<std::vector<Row>>({"XPENDING", stream, group, "-", "+", "1"});
  if (!pending.ok()) return pending.error();
  if (pending.value().empty()) return std::optional<HeadView>();
  auto& [id, consumer, idle_ms, delivery_count] = pending.value().front();
  return std::optional<HeadView>(
      HeadView{std::move(id), std::move(consumer), idle_ms, delivery_count});
}

Result<std::optional<HaltView>> Admin::halt_of(const std::string& halt_key) {
  Result<FieldMap> all = read<FieldMap>({"HGETALL", halt_key});
  if (!all.ok()) return all.error();
  const FieldMap& fields = all.value();
  if (fields.fields.empty()) return std::optional<HaltView>();
  auto text = [&fields](std::string_view name) {
    return fields.get<std::string>(name).value_or(std::string());
  };
  HaltView halt;
  halt.id = text("id");
  halt.reason = text("reason");
  halt.owner = text("owner");
  (void)parse_int(text("since_ms"), &halt.since_ms);
  (void)parse_uint(text("delivery_count"), &halt.delivery_count);
  return std::optional<HaltView>(std::move(halt));
}

Result<std::vector<GroupView>> Admin::groups_of(std::string_view category, std::string_view key,
                                                std::uint64_t entries_added) {
  const PartitionRef partition = partition_of(category, key);
  const std::string stream = partition.stream();
  const Command command{"XINFO", "GROUPS", stream};
  Result<std::vector<FieldMap>> info = read<std::vector<FieldMap>>(command);
  if (!info.ok()) return info.error();
  std::vector<GroupView> groups;
  for (const FieldMap& fields : info.value()) {
    std::optional<std::string> name = fields.get<std::string>("name");
    std::optional<std::uint64_t> pending = fields.get<std::uint64_t>("pending");
    if (!name.has_value() || !pending.has_value()) {
      return make_error(Errc::protocol,
                        "XINFO GROUPS " + stream + ": a group without name or pending");
    }
    GroupView group;
    group.name = std::move(*name);
    group.pending = *pending;
    if (std::optional<std::int64_t> lag = fields.get<std::int64_t>("lag")) {
      group.lag = *lag;
    } else if (std::optional<std::int64_t> read = fields.get<std::int64_t>("entries-read")) {
      // Redis withholds lag when entries were deleted; the counters still give an estimate.
      group.lag = static_cast<std::int64_t>(entries_added) - *read;
    }
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(),
            [](const GroupView& a, const GroupView& b) { return a.name < b.name; });
  for (GroupView& group : groups) {
    Result<std::optional<LeaseView>> lease =
        lease_at(lease_key_name(category, key, group.name, layout_));
    if (!lease.ok()) return lease.error();
    if (!lease.value().has_value()) {
      // A process manager G holds its group on C:K through its lease for correlation value K.
      lease = lease_at(partition_of(pm_lease_category(group.name), key).lease());
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
  // With the cluster layout the keys a reaper is taking out of the index count too (its reaping
  // set, in the index's slot), as RedisBroker::partitions reads them: one SUNION.
  const Command listing = layout_ == KeyLayout::cluster
                              ? Command{"SUNION", index, reaping_set_name(category)}
                              : Command{"SMEMBERS", index};
  Result<std::vector<std::string>> members = read<std::vector<std::string>>(listing);
  if (!members.ok()) return members.error();
  std::vector<std::string> keys = std::move(members).value();
  if (keys.empty()) {
    // A category whose partitions were all reaped keeps its subscribers set (never removed by
    // itself): it is known, with 0 partitions. One EXISTS per key: on a cluster the two are in
    // different slots.
    std::int64_t found = 0;
    for (const std::string& name : {std::string(category), subscribers_set_name(category)}) {
      Result<std::int64_t> exists = read<std::int64_t>({"EXISTS", name});
      if (!exists.ok()) return exists.error();
      found += exists.value();
    }
    if (found == 0) {
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
    const PartitionRef unit = partition_of(category, key);
    Result<std::optional<LeaseView>> lease = lease_at(unit.lease());
    if (!lease.ok()) return lease.error();
    partition.lease = std::move(lease).value();
    const std::string stream = unit.stream();
    Result<std::string> type = read<std::string>({"TYPE", stream});
    if (!type.ok()) return type.error();
    partition.stream_exists = type.value() == "stream";
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
  const std::string stream = partition_of(category, key).stream();
  Result<std::string> type = read<std::string>({"TYPE", stream});
  if (!type.ok()) return type.error();
  if (type.value() == "stream") return Status::Ok();
  if (type.value() != "none") {
    return make_error(Errc::invalid, stream + " is a " + type.value() + ", not a stream");
  }
  const std::string index = partition_index_name(category);
  Result<bool> member = read<bool>({"SISMEMBER", index, std::string(key)});
  if (!member.ok()) return member.error();
  if (member.value()) {
    return make_error(Errc::not_found, "partition " + printable(key) + " is in " + index +
                                           " but its stream " + stream + " does not exist");
  }
  return make_error(Errc::not_found, "unknown partition: no stream " + stream + " and " +
                                         printable(key) + " is not in " + index);
}

Result<std::string> Admin::choose_group(std::string_view category, std::string_view key,
                                        std::string_view group) {
  const std::string stream = partition_of(category, key).stream();
  if (!group.empty()) {
    if (Status valid = validate_group_name(group); !valid.ok()) return valid.error();
  }
  Result<std::vector<FieldMap>> info = read<std::vector<FieldMap>>({"XINFO", "GROUPS", stream});
  if (!info.ok()) return info.error();
  std::vector<std::string> names;
  for (const FieldMap& fields : info.value()) {
    std::optional<std::string> name = fields.get<std::string>("name");
    if (!name.has_value()) {
      return make_error(Errc::protocol, "XINFO GROUPS " + stream + ": a group without a name");
    }
    names.push_back(std::move(*name));
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
  const PartitionRef partition = partition_of(category, key);
  const std::string stream = partition.stream();
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
    Result<std::optional<LeaseView>> lease = lease_at(partition.lease());
    if (!lease.ok()) return lease.error();
    view.lease = std::move(lease).value();
  }
  if (view.status.head.has_value()) {
    // XRANGE ID ID: {{id, {field, value, ...}}} or, for a deleted entry, an empty array.
    using Entry = std::tuple<std::string, std::vector<std::string>>;
    const std::string& id = view.status.head->id;
    Result<std::vector<Entry>> entry = read<std::vector<Entry>>({"XRANGE", stream, id, id});
    if (!entry.ok()) return entry.error();
    if (entry.value().empty()) {
      view.head_deleted = true;
    } else {
      const std::vector<std::string>& flat = std::get<1>(entry.value().front());
      for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
        view.fields.emplace_back(flat[i], flat[i + 1]);
      }
    }
  }
  return view;
}

// The journal tail of an operator's `action` on `partition` (docs/ARCHITECTURE.md "The decision
// journal"): journaled when the partition keeps a journal (its engines run with one), so that the
// checker sees the resolution; empty otherwise.
script::JournalTail Admin::operator_journal(const PartitionRef& partition, const std::string& group,
                                            std::string_view action) {
  script::JournalTail tail;
  const std::string stream = journal_stream_name(partition);
  Result<Reply> exists = execute({"EXISTS", stream});
  if (!exists.ok() || exists.value().kind != Reply::Kind::integer || exists.value().integer != 1) {
    return tail;
  }
  tail.stream = stream;
  tail.maxlen = kOperatorJournalMaxlen;
  tail.node = "operator";
  tail.category = partition.category;
  tail.key = partition.key;
  tail.group = group;
  tail.detail = "operator seqby admin " + std::string(action);
  return tail;
}

Result<SkipOutcome> Admin::skip(std::string_view category, std::string_view key,
                                std::string_view group, std::string_view id) {
  if (Status valid = validate_action(category, key, group, id); !valid.ok()) return valid.error();
  if (Status exists = check_partition(category, key); !exists.ok()) return exists.error();
  Result<std::string> chosen = choose_group(category, key, group);
  if (!chosen.ok()) return chosen.error();
  const PartitionRef partition = partition_of(category, key);
  const script::AdminSkip::Args args{partition.stream(), halt_key_name(partition, chosen.value()),
                                     chosen.value(), std::string(id),
                                     operator_journal(partition, chosen.value(), "skip")};
  Result<bool> halted =
      script::decode_reply<script::AdminSkip>(execute(script_command<script::AdminSkip>(args)));
  if (!halted.ok()) return halted.error();
  return SkipOutcome{chosen.value(), std::string(id), halted.value()};
}

Result<DlqOutcome> Admin::dlq(std::string_view category, std::string_view key,
                              std::string_view group, std::string_view id) {
  if (Status valid = validate_action(category, key, group, id); !valid.ok()) return valid.error();
  if (Status exists = check_partition(category, key); !exists.ok()) return exists.error();
  Result<std::string> chosen = choose_group(category, key, group);
  if (!chosen.ok()) return chosen.error();
  const PartitionRef partition = partition_of(category, key);
  const script::AdminDlq::Args args{
      partition.stream(), halt_key_name(partition, chosen.value()),
      partition.dlq(),    chosen.value(),
      std::string(id),    operator_journal(partition, chosen.value(), "dlq")};
  Result<script::AdminDlq::Out> moved =
      script::decode_reply<script::AdminDlq>(execute(script_command<script::AdminDlq>(args)));
  if (!moved.ok()) return moved.error();
  return DlqOutcome{chosen.value(), std::string(id), args.dlq, moved.value().dlq_id,
                    moved.value().halted};
}

}  // namespace seqby::redis
