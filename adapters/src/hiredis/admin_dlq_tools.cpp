// Admin's DLQ tools (seqby/hiredis/admin.h): list, show, purge and replay a partition's DLQ
// `C:K:dlq` (C:{K}:dlq in the cluster layout). List, show and purge are one command each on the
// DLQ stream (a purge is atomic, a listing one moment's view); replay is one script
// (admin_dlq_replay.lua) over the DLQ, the stream and the index, so over a cluster, where the
// index is in another slot, it is refused. None takes a lease or touches the partition's groups.
#include <charconv>

#include "seqby/broker/script_contracts.h"
#include "seqby/broker/scripts.h"
#include "seqby/core/keys.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/admin.h"

namespace seqby::redis {
namespace {

Status validate_partition(std::string_view category, std::string_view key) {
  if (Status valid = validate_category_name(category); !valid.ok()) return valid;
  return validate_partition_key(key);
}

Status validate_id(std::string_view what, std::string_view id) {
  if (is_stream_entry_id(id)) return Status::Ok();
  return make_error(Errc::invalid,
                    std::string(what) + " " + printable(id) + " is not a stream entry id (MS-SEQ)");
}

// An XRANGE entry [id, [field, value, ...]] as a DlqEntryView; nullopt for another shape.
std::optional<DlqEntryView> entry_of(const Reply& entry) {
  if (entry.kind != Reply::Kind::array || entry.elements.size() != 2) return std::nullopt;
  const Reply& id = entry.elements[0];
  const Reply& fields = entry.elements[1];
  if (id.kind != Reply::Kind::bulk || fields.kind != Reply::Kind::array) return std::nullopt;
  if (fields.elements.size() % 2 != 0) return std::nullopt;
  DlqEntryView view;
  view.id = id.str;
  for (std::size_t f = 0; f + 1 < fields.elements.size(); f += 2) {
    if (fields.elements[f].kind != Reply::Kind::bulk) return std::nullopt;
    if (fields.elements[f + 1].kind != Reply::Kind::bulk) return std::nullopt;
    view.fields.emplace_back(fields.elements[f].str, fields.elements[f + 1].str);
  }
  return view;
}

Error shape_error(const std::string& command, const Reply& reply) {
  return make_error(Errc::protocol, command + ": unexpected reply " + to_string(reply));
}

}  // namespace

Result<DlqListView> Admin::dlq_list(std::string_view category, std::string_view key,
                                    std::uint64_t count_max) {
  SEQBY_CHECK(count_max > 0);
  if (Status valid = validate_partition(category, key); !valid.ok()) return valid.error();
  DlqListView view;
  view.dlq = partition_of(category, key).dlq();
  Result<Reply> length = run({"XLEN", view.dlq});
  if (!length.ok()) return length.error();
  if (length.value().kind != Reply::Kind::integer || length.value().integer < 0) {
    return shape_error("XLEN " + view.dlq, length.value());
  }
  view.length = static_cast<std::uint64_t>(length.value().integer);
  Result<Reply> entries = run({"XRANGE", view.dlq, "-", "+", "COUNT", std::to_string(count_max)});
  if (!entries.ok()) return entries.error();
  if (entries.value().kind != Reply::Kind::array) {
    return shape_error("XRANGE " + view.dlq, entries.value());
  }
  for (const Reply& entry : entries.value().elements) {
    std::optional<DlqEntryView> read = entry_of(entry);
    if (!read) return shape_error("XRANGE " + view.dlq, entry);
    view.entries.push_back(std::move(*read));
  }
  return view;
}

Result<DlqEntryView> Admin::dlq_show(std::string_view category, std::string_view key,
                                     std::string_view id) {
  if (Status valid = validate_partition(category, key); !valid.ok()) return valid.error();
  if (Status valid = validate_id("entry id", id); !valid.ok()) return valid.error();
  const std::string dlq = partition_of(category, key).dlq();
  Result<Reply> entries = run({"XRANGE", dlq, std::string(id), std::string(id)});
  if (!entries.ok()) return entries.error();
  if (entries.value().kind != Reply::Kind::array)
    return shape_error("XRANGE " + dlq, entries.value());
  if (entries.value().elements.empty()) {
    return make_error(Errc::not_found, "no entry " + std::string(id) + " in " + dlq);
  }
  std::optional<DlqEntryView> read = entry_of(entries.value().elements[0]);
  if (!read) return shape_error("XRANGE " + dlq, entries.value());
  return std::move(*read);
}

Result<DlqPurgeOutcome> Admin::dlq_purge(std::string_view category, std::string_view key,
                                         std::optional<std::string_view> before_id) {
  if (Status valid = validate_partition(category, key); !valid.ok()) return valid.error();
  if (before_id) {
    if (Status valid = validate_id("--before", *before_id); !valid.ok()) return valid.error();
  }
  DlqPurgeOutcome outcome;
  outcome.dlq = partition_of(category, key).dlq();
  // XTRIM on a missing key answers 0 and creates nothing.
  Result<Reply> trimmed = before_id ? run({"XTRIM", outcome.dlq, "MINID", std::string(*before_id)})
                                    : run({"XTRIM", outcome.dlq, "MAXLEN", "0"});
  if (!trimmed.ok()) return trimmed.error();
  if (trimmed.value().kind != Reply::Kind::integer || trimmed.value().integer < 0) {
    return shape_error("XTRIM " + outcome.dlq, trimmed.value());
  }
  outcome.purged = static_cast<std::uint64_t>(trimmed.value().integer);
  Result<Reply> left = run({"XLEN", outcome.dlq});
  if (!left.ok()) return left.error();
  if (left.value().kind != Reply::Kind::integer || left.value().integer < 0) {
    return shape_error("XLEN " + outcome.dlq, left.value());
  }
  outcome.left = static_cast<std::uint64_t>(left.value().integer);
  return outcome;
}

}  // namespace seqby::redis

namespace seqby::redis {

Result<DlqReplayOutcome> Admin::dlq_replay(std::string_view category, std::string_view key,
                                           std::string_view id) {
  if (Status valid = validate_partition(category, key); !valid.ok()) return valid.error();
  if (Status valid = validate_id("entry id", id); !valid.ok()) return valid.error();
  const PartitionRef partition = partition_of(category, key);
  if (cluster_ != nullptr) {
    // The copy and the index entry must be one step (a reap between them would lose the copy),
    // and on a cluster C:__partitions__ is in another slot than the partition's streams.
    return make_error(Errc::unsupported,
                      "dlq-replay is not supported over a Redis Cluster: its one script writes " +
                          partition.stream() + " and " + partition.index() +
                          ", which are in different hash slots; nothing changed");
  }
  DlqReplayOutcome outcome;
  outcome.dlq_id = std::string(id);
  outcome.stream = partition.stream();
  const script::AdminDlqReplay::Args args{partition.dlq(), outcome.stream, partition.index(),
                                          std::string(id), std::string(key)};
  // An operator's one-off call: EVAL, no SCRIPT LOAD.
  const char* source = script_source(script::AdminDlqReplay::name);
  SEQBY_CHECK(source != nullptr);
  Result<std::string> appended = script::decode_reply<script::AdminDlqReplay>(
      execute(eval_command("EVAL", source, script::encode<script::AdminDlqReplay>(args))));
  if (!appended.ok()) return appended.error();
  outcome.stream_id = std::move(appended).value();
  return outcome;
}

}  // namespace seqby::redis
