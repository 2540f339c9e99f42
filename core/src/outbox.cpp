#include "seqby/core/outbox.h"

#include "seqby/core/naming.h"

namespace seqby {
namespace {

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

}  // namespace

const char* outbox_status_name(OutboxStatus status) {
  switch (status) {
    case OutboxStatus::pending:
      return "pending";
    case OutboxStatus::published:
      return "published";
    case OutboxStatus::abandoned:
      return "abandoned";
  }
  return "unknown";
}

Result<std::optional<std::string>> extract_key_value(const JsonObject& payload,
                                                     std::string_view field) {
  auto it = payload.find(field);
  if (it == payload.end()) return std::optional<std::string>();
  const JsonValue& value = it->second;
  if (const std::string* s = std::get_if<std::string>(&value)) return std::optional(*s);
  if (const std::int64_t* n = std::get_if<std::int64_t>(&value)) {
    return std::optional(std::to_string(*n));
  }
  if (std::holds_alternative<bool>(value)) {
    return make_error(Errc::invalid,
                      "invalid partition key (a boolean): rule not_null: a key is a string or an "
                      "integer");
  }
  if (const JsonRaw* raw = std::get_if<JsonRaw>(&value)) {
    // An object, an array or a float is carried verbatim but is never a key (ADR decision 2:
    // the key is a direct top-level attribute): refused as an absent one is.
    return make_error(Errc::invalid, std::string("invalid partition key (") + json_raw_kind(*raw) +
                                         "): rule not_null: a key is a string or an integer");
  }
  return std::optional<std::string>();  // null
}

// --- UnitOfWork ---------------------------------------------------------------------------

UnitOfWork::UnitOfWork(const Registry& registry, KeyRules rules)
    : registry_(registry), rules_(std::move(rules)) {
  SEQBY_CHECK(validate_key_rules(rules_).ok());
}

Status UnitOfWork::raise(std::string_view type_name, const JsonObject& payload) {
  const std::string me = "raise " + quoted(type_name);
  const RegisteredType* type = registry_.find_type(type_name);
  if (!type) return make_error(Errc::invalid, me + ": unknown type");

  OutboxRecord record;
  record.category = type->category;
  record.type = type->name;
  record.stream = type->category;
  if (std::optional<std::string> field = registry_.partition_field(type->category)) {
    const std::string where =
        me + ": field " + quoted(*field) + " of category " + quoted(type->category) + ": ";
    Result<std::optional<std::string>> key = extract_key_value(payload, *field);
    if (!key.ok()) return make_error(Errc::invalid, where + key.error().message);
    const std::optional<std::string>& value = key.value();
    Status valid = validate_partition_key(
        value ? std::optional<std::string_view>(*value) : std::nullopt, rules_);
    if (!valid.ok()) return make_error(Errc::invalid, where + valid.error().message);
    record.key = *value;
    record.stream = partition_stream_name(type->category, *value);
  }
  record.data = encode_json_object(payload);
  records_.push_back(std::move(record));
  return Status::Ok();
}

// --- Outbox -------------------------------------------------------------------------------

Outbox::Outbox(std::size_t record_count_max) : record_count_max_(record_count_max) {
  SEQBY_CHECK(record_count_max_ > 0);
}

Status Outbox::commit(UnitOfWork& uow) {
  if (records_.size() + uow.records_.size() > record_count_max_) {
    return make_error(Errc::refused,
                      "outbox full: record_count_max=" + std::to_string(record_count_max_));
  }
  for (OutboxRecord& record : uow.records_) {
    record.id = records_.size() + 1;
    record.status = OutboxStatus::pending;
    records_.push_back(std::move(record));
  }
  uow.records_.clear();
  return Status::Ok();
}

Result<std::uint64_t> Outbox::insert_unchecked(OutboxRecord record) {
  if (records_.size() + 1 > record_count_max_) {
    return make_error(Errc::refused,
                      "outbox full: record_count_max=" + std::to_string(record_count_max_));
  }
  record.id = records_.size() + 1;
  records_.push_back(std::move(record));
  return records_.back().id;
}

std::size_t Outbox::pending_count() const {
  std::size_t count = 0;
  for (const OutboxRecord& r : records_) count += r.status == OutboxStatus::pending ? 1 : 0;
  return count;
}

OutboxRecord& Outbox::at(std::uint64_t id) {
  SEQBY_CHECK(id >= 1 && id <= records_.size());
  OutboxRecord& record = records_[id - 1];
  SEQBY_CHECK(record.id == id);
  return record;
}

void Outbox::mark_published(std::uint64_t id) {
  OutboxRecord& record = at(id);
  SEQBY_CHECK(record.status == OutboxStatus::pending);
  record.status = OutboxStatus::published;
}

void Outbox::mark_abandoned(std::uint64_t id, std::string reason) {
  OutboxRecord& record = at(id);
  SEQBY_CHECK(record.status == OutboxStatus::pending);
  record.status = OutboxStatus::abandoned;
  record.abandon_reason = std::move(reason);
}

// --- OutboxPublisher ----------------------------------------------------------------------

OutboxPublisher::OutboxPublisher(Outbox& outbox, const Registry& registry, KeyRules rules)
    : outbox_(outbox), registry_(registry), rules_(std::move(rules)) {
  SEQBY_CHECK(validate_key_rules(rules_).ok());
}

std::string OutboxPublisher::check_record(const OutboxRecord& record) const {
  if (!registry_.partition_field(record.category)) return {};
  const std::optional<std::string_view> key =
      record.key ? std::optional<std::string_view>(*record.key) : std::nullopt;
  if (Status valid = validate_partition_key(key, rules_); !valid.ok()) {
    return valid.error().message;  // starts "invalid partition key ..."
  }
  if (record.stream != partition_stream_name(record.category, *record.key)) {
    return "invalid partition key " + printable(*record.key) + ": the record's stream " +
           printable(record.stream) + " is not " +
           printable(partition_stream_name(record.category, *record.key));
  }
  return {};
}

PublishSummary OutboxPublisher::publish_pending(const PublishFn& publish,
                                                std::size_t record_count_max) {
  PublishSummary summary;
  std::size_t visited = 0;
  const std::size_t size = outbox_.records().size();  // records added meanwhile wait a pass
  for (std::size_t i = 0; i < size && visited < record_count_max; ++i) {
    // A copy: `publish` may commit to the outbox, which moves its records.
    const OutboxRecord record = outbox_.records()[i];
    if (record.status != OutboxStatus::pending) continue;
    ++visited;
    if (std::string reason = check_record(record); !reason.empty()) {
      outbox_.mark_abandoned(record.id, std::move(reason));
      ++summary.abandoned;
      continue;
    }
    Status published = publish(record);
    if (!published.ok()) {
      summary.stopped_on = published.error();
      break;
    }
    outbox_.mark_published(record.id);
    ++summary.published;
  }
  return summary;
}

}  // namespace seqby
