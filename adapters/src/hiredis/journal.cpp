// The decision journal: reading and merging it, and the notes beside the scripts' decisions.
#include "seqby/hiredis/journal.h"

#include <algorithm>
#include <charconv>
#include <tuple>

#include "seqby/core/check.h"
#include "seqby/core/keyspace.h"
#include "seqby/hiredis/redis_history.h"

namespace seqby::redis {
namespace {

// Entries per XRANGE and keys per SCAN step.
constexpr std::size_t kRangeCount = 10000;
constexpr std::size_t kScanCount = 1000;

// A stream id "MS-SEQ" as numbers; false for anything else.
bool parse_stream_id(std::string_view id, std::uint64_t* ms, std::uint64_t* seq) {
  const std::size_t dash = id.find('-');
  if (dash == std::string_view::npos) return false;
  auto [end_ms, ec_ms] = std::from_chars(id.data(), id.data() + dash, *ms);
  auto [end_seq, ec_seq] = std::from_chars(id.data() + dash + 1, id.data() + id.size(), *seq);
  return ec_ms == std::errc{} && end_ms == id.data() + dash && ec_seq == std::errc{} &&
         end_seq == id.data() + id.size();
}

// "HEAD" of a journal name "HEAD:__journal__" (the unit's stream, or the category); "" for
// another name.
std::string_view journal_head(std::string_view stream) {
  const std::string suffix = ":" + std::string(kJournalToken);
  if (!stream.ends_with(suffix) || stream.size() == suffix.size()) return {};
  return stream.substr(0, stream.size() - suffix.size());
}

// Whether `head` is "PREFIX:K", one key (no colon) under `prefix`.
bool is_key_under(std::string_view head, std::string_view prefix) {
  return head.size() > prefix.size() + 1 && head.starts_with(prefix) &&
         head[prefix.size()] == ':' &&
         head.substr(prefix.size() + 1).find(':') == std::string_view::npos;
}

// Which journals come first at an equal millisecond: a category's notes, then partitions, then
// process managers (see journal.h). A category's notes are C:__journal__ for one of
// `categories` (a category may hold colons itself), or without them a name with one colon.
int journal_class(std::string_view stream, const std::vector<std::string>& categories) {
  if (stream.starts_with(kProcessManagerToken)) return 2;
  const std::string_view head = journal_head(stream);
  if (!categories.empty()) {
    return std::find(categories.begin(), categories.end(), head) != categories.end() ? 0 : 1;
  }
  return head.find(':') == std::string_view::npos ? 0 : 1;
}

// Whether `stream` is a journal of the scope: C:__journal__, C:K:__journal__ (K without a colon)
// for a category of the scope, __pm__:P:X:__journal__ for a process manager of it.
bool in_scope(std::string_view stream, const JournalScope& scope) {
  const std::string_view head = journal_head(stream);
  if (head.empty()) return false;
  for (const std::string& category : scope.categories) {
    if (head == category || is_key_under(head, category)) return true;
  }
  for (const std::string& pm : scope.process_managers) {
    if (is_key_under(head, pm_lease_category(pm))) return true;
  }
  return false;
}

Result<std::vector<JournalEntry>> read_stream(BlockingRedis& redis, const std::string& stream) {
  std::vector<JournalEntry> entries;
  std::string start = "-";
  for (;;) {
    Command range{"XRANGE", stream, start, "+", "COUNT", std::to_string(kRangeCount)};
    Result<Reply> reply = redis.execute(range);
    if (!reply.ok()) return reply.error();
    Result<std::vector<JournalEntry>> rows = journal_entries_from_xrange(reply.value(), stream);
    if (!rows.ok()) return rows.error();
    const std::size_t row_count = rows.value().size();
    for (JournalEntry& entry : rows.value()) entries.push_back(std::move(entry));
    if (row_count < kRangeCount) return entries;
    start = "(" + entries.back().id;
  }
}

}  // namespace

Result<std::vector<JournalEntry>> journal_entries_from_xrange(const Reply& reply,
                                                              const std::string& stream) {
  Result<std::vector<std::tuple<std::string, FieldMap>>> rows =
      decode<std::vector<std::tuple<std::string, FieldMap>>>(reply, "XRANGE " + stream);
  if (!rows.ok()) return rows.error();
  std::vector<JournalEntry> entries;
  entries.reserve(rows.value().size());
  for (auto& [id, map] : rows.value()) {
    std::vector<std::pair<std::string, std::string>> fields;
    fields.reserve(map.fields.size());
    for (auto& [name, value] : map.fields) fields.emplace_back(std::move(name), value.str);
    Result<HistoryRecord> record = history_from_fields(fields);
    if (!record.ok()) {
      return make_error(Errc::invalid,
                        "journal " + stream + " entry " + id + ": " + record.error().message);
    }
    std::uint64_t ms = 0;
    std::uint64_t seq = 0;
    if (!parse_stream_id(id, &ms, &seq)) {
      return make_error(Errc::protocol, "journal " + stream + ": bad entry id '" + id + "'");
    }
    record.value().time_ms = ms;
    entries.push_back(JournalEntry{stream, id, std::move(record.value())});
  }
  return entries;
}

bool journaled_by_scripts(HistoryOp op) {
  switch (op) {
    case HistoryOp::publish:
    case HistoryOp::acquire:
    case HistoryOp::renew:
    case HistoryOp::lose:
    case HistoryOp::release:
    case HistoryOp::read:
    case HistoryOp::read_fenced:
    case HistoryOp::enter:
    case HistoryOp::exit:
    case HistoryOp::ack:
    case HistoryOp::ack_fenced:
    case HistoryOp::commit:
    case HistoryOp::commit_fenced:
    case HistoryOp::commit_rejected:
    case HistoryOp::reclaim:
    case HistoryOp::halt:
    case HistoryOp::skip:
    case HistoryOp::reap:
    case HistoryOp::drop:
      return true;
    case HistoryOp::dlq:  // an operator's is journaled by admin_dlq; a variant's is the engine's
    case HistoryOp::fault:
    case HistoryOp::warn:
    case HistoryOp::resume:
      return false;
  }
  return false;
}

std::vector<HistoryRecord> merge_journals(std::vector<std::vector<JournalEntry>> streams,
                                          const std::vector<std::string>& categories) {
  struct At {
    std::uint64_t ms;
    int klass;
    std::size_t stream;
    std::size_t position;
  };
  std::vector<At> order;
  for (std::size_t s = 0; s < streams.size(); ++s) {
    if (streams[s].empty()) continue;
    const int klass = journal_class(streams[s].front().stream, categories);
    std::uint64_t previous_ms = 0;
    for (std::size_t i = 0; i < streams[s].size(); ++i) {
      // Within a stream ids only grow; a stream's own order is kept even if its clock stepped.
      const std::uint64_t ms = std::max(previous_ms, streams[s][i].record.time_ms);
      previous_ms = ms;
      order.push_back(At{ms, klass, s, i});
    }
  }
  std::sort(order.begin(), order.end(), [&](const At& a, const At& b) {
    return std::tie(a.ms, a.klass, streams[a.stream].front().stream, a.position) <
           std::tie(b.ms, b.klass, streams[b.stream].front().stream, b.position);
  });
  std::vector<HistoryRecord> history;
  history.reserve(order.size());
  for (const At& at : order) {
    HistoryRecord record = std::move(streams[at.stream][at.position].record);
    record.index = history.size();
    history.push_back(std::move(record));
  }
  return history;
}

Result<std::vector<std::string>> journal_streams(BlockingRedis& redis, const JournalScope& scope) {
  std::vector<std::string> patterns;
  for (const std::string& category : scope.categories) {
    patterns.push_back(category + ":*" + std::string(kJournalToken));
  }
  for (const std::string& pm : scope.process_managers) {
    patterns.push_back(pm_lease_category(pm) + ":*" + std::string(kJournalToken));
  }
  std::vector<std::string> streams;
  for (const std::string& pattern : patterns) {
    std::string cursor = "0";
    do {
      Command scan{"SCAN", cursor, "MATCH", pattern, "COUNT", std::to_string(kScanCount)};
      Result<Reply> reply = redis.execute(scan);
      if (!reply.ok()) return reply.error();
      Result<std::tuple<std::string, std::vector<std::string>>> step =
          decode<std::tuple<std::string, std::vector<std::string>>>(reply.value(), "SCAN");
      if (!step.ok()) return step.error();
      cursor = std::get<0>(step.value());
      for (std::string& name : std::get<1>(step.value())) {
        if (in_scope(name, scope)) streams.push_back(std::move(name));
      }
    } while (cursor != "0");
  }
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  return streams;
}

namespace {

// Appends the journals of `scope` that the server of `redis` holds to `entries`, each in stream
// order (records naming another group left out).
Status read_node_journals(BlockingRedis& redis, const JournalScope& scope,
                          std::vector<std::vector<JournalEntry>>* entries) {
  Result<std::vector<std::string>> streams = journal_streams(redis, scope);
  if (!streams.ok()) return streams.error();
  for (const std::string& stream : streams.value()) {
    Result<std::vector<JournalEntry>> read = read_stream(redis, stream);
    if (!read.ok()) return read.error();
    if (!scope.group.empty()) {
      std::erase_if(read.value(), [&](const JournalEntry& e) {
        return !e.record.group.empty() && e.record.group != scope.group;
      });
    }
    if (!read.value().empty()) entries->push_back(std::move(read.value()));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<HistoryRecord>> read_journal(BlockingRedis& redis, const JournalScope& scope) {
  std::vector<std::vector<JournalEntry>> entries;
  if (Status read = read_node_journals(redis, scope, &entries); !read.ok()) return read.error();
  return merge_journals(std::move(entries), scope.categories);
}

Result<std::vector<RedisConfig>> cluster_masters(BlockingRedis& seed) {
  Result<Reply> slots = seed.execute({"CLUSTER", "SLOTS"});
  if (!slots.ok()) return slots.error();
  const Reply& map = slots.value();
  if (map.kind == Reply::Kind::error) {
    return make_error(Errc::protocol, "CLUSTER SLOTS: " + map.str);
  }
  if (map.kind != Reply::Kind::array) {
    return make_error(Errc::protocol, "CLUSTER SLOTS: not an array");
  }
  std::vector<RedisConfig> masters;
  for (const Reply& range : map.elements) {
    // {start, end, {host, port, id, ...}, replicas...}; an empty host is the node asked.
    if (range.kind != Reply::Kind::array || range.elements.size() < 3 ||
        range.elements[2].kind != Reply::Kind::array || range.elements[2].elements.size() < 2 ||
        range.elements[2].elements[1].kind != Reply::Kind::integer) {
      return make_error(Errc::protocol, "CLUSTER SLOTS: a slot range of another shape");
    }
    RedisConfig master = seed.config();
    const std::string& host = range.elements[2].elements[0].str;
    if (!host.empty() && host != "?") master.host = host;
    master.port = static_cast<std::uint16_t>(range.elements[2].elements[1].integer);
    const bool known = std::any_of(masters.begin(), masters.end(), [&](const RedisConfig& m) {
      return m.host == master.host && m.port == master.port;
    });
    if (!known) masters.push_back(std::move(master));
  }
  if (masters.empty()) return make_error(Errc::protocol, "CLUSTER SLOTS: no slot is served");
  return masters;
}

Result<std::vector<HistoryRecord>> read_cluster_journal(BlockingRedis& seed,
                                                        const JournalScope& scope) {
  Result<std::vector<RedisConfig>> masters = cluster_masters(seed);
  if (!masters.ok()) return masters.error();
  std::vector<std::vector<JournalEntry>> entries;
  for (const RedisConfig& master : masters.value()) {
    BlockingRedis node(master);
    if (Status read = read_node_journals(node, scope, &entries); !read.ok()) {
      return make_error(read.error().code,
                        "master " + redacted_url(master) + ": " + read.error().message);
    }
  }
  return merge_journals(std::move(entries), scope.categories);
}

Command journal_note_command(std::string stream, std::uint64_t maxlen,
                             const HistoryRecord& record) {
  Command command{"XADD", std::move(stream), "MAXLEN", "~", std::to_string(maxlen), "*"};
  for (auto& [name, value] : history_fields(record)) {
    if (name == "time") continue;  // the entry id is the time
    command.push_back(std::move(name));
    command.push_back(std::move(value));
  }
  return command;
}

Status append_journal_note(BlockingRedis& redis, std::string stream, std::uint64_t maxlen,
                           const HistoryRecord& record) {
  Result<Reply> reply = redis.execute(journal_note_command(std::move(stream), maxlen, record));
  Result<std::string> id = decode<std::string>(reply, "journal note");
  if (!id.ok()) return id.error();
  return Status::Ok();
}

Task<Result<std::string>> publish_journaled(RedisBroker& broker, const PartitionRef& partition,
                                            std::string_view type, std::string_view data_json,
                                            std::uint64_t maxlen, std::string_view node,
                                            std::int64_t seq, std::string_view detail) {
  SEQBY_CHECK(maxlen >= 1);
  script::JournalTail journal;
  journal.maxlen = maxlen;
  journal.node = std::string(node);
  journal.seq = seq;
  journal.detail = std::string(detail);
  Result<std::string> published =
      co_await broker.publish_with_journal(partition, type, data_json, std::move(journal));
  co_return published;
}

std::string note_stream_for(const HistoryRecord& record, std::string_view process_manager,
                            KeyLayout layout) {
  if (record.key.empty()) return category_journal_name(record.category);
  if (!process_manager.empty()) {
    return journal_stream_name(
        PartitionRef{pm_lease_category(process_manager), record.key, layout});
  }
  return journal_stream_name(PartitionRef{record.category, record.key, layout});
}

JournalNoteSink::JournalNoteSink(Runtime& runtime, RedisLink& link, std::uint64_t maxlen,
                                 std::string process_manager, KeyLayout layout,
                                 std::size_t queue_max)
    : maxlen_(maxlen),
      process_manager_(std::move(process_manager)),
      layout_(layout),
      appends_(runtime, link, queue_max) {
  SEQBY_CHECK(maxlen_ >= 1);
}

void JournalNoteSink::record(HistoryRecord record) {
  if (journaled_by_scripts(record.op)) return;
  if (record.category.empty()) return;  // nowhere to put it (no engine record lacks one)
  appends_.append(
      journal_note_command(note_stream_for(record, process_manager_, layout_), maxlen_, record));
}

}  // namespace seqby::redis
