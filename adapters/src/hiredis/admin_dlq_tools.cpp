// Admin's DLQ tools (seqby/hiredis/admin.h): list, show, purge and replay a partition's DLQ
// `C:K:dlq` (C:{K}:dlq in the cluster layout). List, show and purge are one command each on the
// DLQ stream (a purge is atomic, a listing one moment's view); replay is one script
// (admin_dlq_replay.lua) over the DLQ, the stream and the index, or under the cluster layout,
// where the index is in another slot, that script without the index between a publish's intent
// steps. None takes a lease or touches the partition's groups.
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
  DlqReplayOutcome outcome;
  outcome.dlq_id = std::string(id);
  outcome.stream = partition.stream();
  script::AdminDlqReplay::Args args{
      partition.dlq(), outcome.stream, {}, std::string(id), std::string(key)};
  // An operator's one-off call: EVAL, no SCRIPT LOAD.
  auto run = [this]<typename S>(S, const typename S::Args& script_args) {
    const char* source = script_source(S::name);
    SEQBY_CHECK(source != nullptr);
    return script::decode_reply<S>(
        execute(eval_command("EVAL", source, script::encode<S>(script_args))));
  };
  if (layout_ != KeyLayout::cluster) {
    args.index = {partition.index()};
    Result<std::string> appended = run(script::AdminDlqReplay{}, args);
    if (!appended.ok()) return appended.error();
    outcome.stream_id = std::move(appended).value();
    return outcome;
  }
  // The cluster layout: the index is in another slot, so the copy goes as a publish goes
  // (redis_broker_cluster.cpp): the key indexed and an intent open first (no reaper takes it out
  // of the index meanwhile), the copy in the unit's slot, then the intent closed, once. A step
  // without an answer ends here and leaves the intent open: the key stays discoverable.
  const std::string publishing = publishing_hash_name(category);
  Result<std::int64_t> open =
      run(script::PublishIntent{}, {partition.index(), publishing, std::string(key)});
  if (!open.ok()) return open.error();
  Result<std::string> appended = run(script::AdminDlqReplay{}, args);
  const bool unanswered = !appended.ok() && (appended.error().code == Errc::timeout ||
                                             appended.error().code == Errc::closed);
  if (!unanswered) {
    // Copied, or refused (NOENTRY) and never will be: close this intent.
    Result<std::int64_t> closed = run(script::PublishDone{}, {publishing, std::string(key)});
    (void)closed;  // a lost answer leaves the count one too high: safe, never sent again
  }
  if (!appended.ok()) return appended.error();
  outcome.stream_id = std::move(appended).value();
  return outcome;
}

}  // namespace seqby::redis
