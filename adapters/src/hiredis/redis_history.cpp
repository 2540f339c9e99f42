// RedisHistorySink and the history stream's field codec.
#include "seqby/hiredis/redis_history.h"

#include <algorithm>
#include <array>
#include <charconv>

namespace seqby::redis {
namespace {

bool parse_u64(std::string_view text, std::uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc{} && end == text.data() + text.size();
}

bool parse_i64(std::string_view text, std::int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc{} && end == text.data() + text.size();
}

Error bad_field(std::string_view name, std::string_view value) {
  return Error{Errc::invalid, "history entry: field '" + std::string(name) + "': bad value '" +
                                  std::string(value) + "'"};
}

// KEYS[1] stream, KEYS[2] index, KEYS[3] history; ARGV[1] key, [2] type, [3] data, then the
// history fields as name/value pairs. The event id goes into the record's `event` field.
constexpr const char* kPublishRecordedScript = R"lua(
local id = redis.call('XADD', KEYS[1], '*', 'type', ARGV[2], 'data', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
local fields = {}
for i = 4, #ARGV do fields[#fields + 1] = ARGV[i] end
fields[#fields + 1] = 'event'
fields[#fields + 1] = id
redis.call('XADD', KEYS[3], '*', unpack(fields))
return id
)lua";

}  // namespace

std::vector<std::pair<std::string, std::string>> history_fields(const HistoryRecord& r) {
  std::vector<std::pair<std::string, std::string>> f;
  for (const HistoryField& field : kHistoryFields) {
    if (!field.written(field.in_stream, r)) continue;
    std::string value = field.text_of(r);
    f.emplace_back(std::string(field.name), std::move(value));
  }
  return f;
}

Result<HistoryRecord> history_from_fields(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  HistoryRecord r;
  std::array<bool, kHistoryFields.size()> seen{};
  for (const auto& [name, value] : fields) {
    const HistoryField* field = find_history_field(name);
    if (field == nullptr || field->in_stream == HistoryFieldPresence::never) {
      return Error{Errc::invalid, "history entry: unknown field '" + name + "'"};
    }
    seen[static_cast<std::size_t>(field - kHistoryFields.data())] = true;
    switch (field->type) {
      case HistoryFieldType::unsigned_number:
        if (!parse_u64(value, &(r.*field->unsigned_member))) return bad_field(name, value);
        break;
      case HistoryFieldType::signed_number: {
        std::int64_t& number = r.*field->signed_member;
        if (!parse_i64(value, &number) || number < kHistorySeqUnknown) {
          return bad_field(name, value);
        }
        break;
      }
      case HistoryFieldType::text:
        r.*field->text_member = value;
        break;
      case HistoryFieldType::op:
        if (!parse_history_op(value, &r.op)) return bad_field(name, value);
        break;
    }
  }
  for (std::size_t i = 0; i < kHistoryFields.size(); ++i) {
    const HistoryField& field = kHistoryFields[i];
    if (field.required && field.in_stream != HistoryFieldPresence::never && !seen[i]) {
      return Error{Errc::invalid, "history entry: field '" + std::string(field.name) + "' missing"};
    }
  }
  return r;
}

Result<std::vector<HistoryRecord>> history_from_xrange(const Reply& reply) {
  if (reply.kind != Reply::Kind::array) {
    return Error{Errc::protocol, "history: XRANGE reply is not an array: " + to_string(reply)};
  }
  std::vector<HistoryRecord> records;
  for (const Reply& entry : reply.elements) {
    if (entry.kind != Reply::Kind::array || entry.elements.size() != 2 ||
        entry.elements[1].kind != Reply::Kind::array ||
        entry.elements[1].elements.size() % 2 != 0) {
      return Error{Errc::protocol, "history: bad XRANGE entry: " + to_string(entry)};
    }
    std::vector<std::pair<std::string, std::string>> fields;
    const auto& flat = entry.elements[1].elements;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
      fields.emplace_back(flat[i].str, flat[i + 1].str);
    }
    Result<HistoryRecord> record = history_from_fields(fields);
    if (!record.ok()) {
      return Error{record.error().code,
                   record.error().message + " (entry " + entry.elements[0].str + ")"};
    }
    record.value().index = records.size();
    records.push_back(std::move(record.value()));
  }
  return records;
}

AppendQueue::AppendQueue(Runtime& runtime, RedisLink& link, std::size_t queue_max)
    : runtime_(runtime), link_(link), queue_max_(queue_max) {}

void AppendQueue::append(Command command) {
  if (queue_.size() >= queue_max_) {
    ++dropped_;
    return;
  }
  queue_.push_back(std::move(command));
  if (!draining_) {
    draining_ = true;
    runtime_.spawn("history", drain());
  }
}

namespace {

constexpr int kNotRunRetriesMax = 40;  // 20 ms doubling to 500 ms: about 18 s in all
constexpr std::uint64_t kNotRunBackoffMinMs = 20;
constexpr std::uint64_t kNotRunBackoffMaxMs = 500;

}  // namespace

Task<void> AppendQueue::drain() {
  while (!queue_.empty()) {
    Command command = std::move(queue_.front());
    queue_.pop_front();
    in_flight_ = true;
    Result<Reply> reply = co_await link_.execute(command);
    // A record refused for now is sent again (it did not run, so it is never written twice):
    // without it a failover would leave holes in the history the checker reads.
    std::uint64_t backoff_ms = kNotRunBackoffMinMs;
    for (int retry = 0; retry < kNotRunRetriesMax && reply.ok() && reply.value().is_error() &&
                        not_run_yet(reply.value().str);
         ++retry) {
      co_await runtime_.sleep_ms(backoff_ms);
      backoff_ms = std::min(backoff_ms * 2, kNotRunBackoffMaxMs);
      Result<Reply> again = co_await link_.execute(command);
      reply = std::move(again);
    }
    in_flight_ = false;
    if (!reply.ok() || reply.value().is_error()) {
      ++failed_;
    } else {
      ++written_;
    }
  }
  draining_ = false;
}

Task<void> AppendQueue::flush(std::uint64_t wait_max_ms) {
  const std::uint64_t deadline_ms = runtime_.clock().now_ms() + wait_max_ms;
  while (draining_ && runtime_.clock().now_ms() < deadline_ms) co_await runtime_.sleep_ms(10);
}

RedisHistorySink::RedisHistorySink(Runtime& runtime, RedisLink& link, std::string stream,
                                   std::size_t queue_max)
    : stream_(std::move(stream)), appends_(runtime, link, queue_max) {}

void RedisHistorySink::record(HistoryRecord record) {
  Command command{"XADD", stream_, "*"};
  for (auto& [name, value] : history_fields(record)) {
    command.push_back(std::move(name));
    command.push_back(std::move(value));
  }
  appends_.append(std::move(command));
}

Task<Result<std::string>> publish_recorded(RedisLink& link, const PartitionRef& partition,
                                           std::string_view type, std::string_view data_json,
                                           std::string_view history_stream, std::string_view node,
                                           std::int64_t seq, std::string_view detail) {
  HistoryRecord record;
  record.node = std::string(node);
  record.op = HistoryOp::publish;
  record.category = partition.category;
  record.key = partition.key;
  record.seq = seq;
  record.detail = std::string(detail);
  Command command{"EVAL",
                  kPublishRecordedScript,
                  "3",
                  partition.stream(),
                  partition.index(),
                  std::string(history_stream),
                  partition.key,
                  std::string(type),
                  std::string(data_json)};
  for (auto& [name, value] : history_fields(record)) {
    command.push_back(std::move(name));
    command.push_back(std::move(value));
  }
  Result<Reply> reply = co_await link.execute(std::move(command));
  if (!reply.ok()) co_return reply.error();
  if (reply.value().kind != Reply::Kind::bulk) {
    co_return Error{Errc::protocol,
                    "publish_recorded: unexpected reply " + to_string(reply.value())};
  }
  co_return reply.value().str;
}

}  // namespace seqby::redis
