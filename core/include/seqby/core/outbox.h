// Outbox record creation and the publish backstop (ADR decision 3). A UnitOfWork collects the
// records of one caller operation; raise() extracts the partition key from the payload and
// validates it right there, so an unsafe key fails the caller's operation and never becomes a
// record. Outbox::commit() moves a unit's records in, all or none. OutboxPublisher walks pending
// records in order; a record whose key is invalid by then is ABANDONED with its reason and never
// blocks the records behind it. Single-threaded; nothing here talks to a broker by itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/json_flat.h"
#include "seqby/core/keys.h"
#include "seqby/core/registry.h"
#include "seqby/core/result.h"

namespace seqby {

enum class OutboxStatus : std::uint8_t { pending, published, abandoned };

const char* outbox_status_name(OutboxStatus status);

struct OutboxRecord {
  std::uint64_t id = 0;  // assigned by Outbox, from 1 in commit order
  std::string category;
  std::optional<std::string> key;  // nullopt: the category is not partitioned
  std::string stream;              // C:K, or C when not partitioned
  std::string type;                // the event type name (the entry's `type` field)
  std::string data;                // the payload's JSON text (the entry's `data` field)
  OutboxStatus status = OutboxStatus::pending;
  std::string abandon_reason;  // set when abandoned: "invalid partition key ..."
};

// The key value of `payload[field]` as text: a string as is, an integer in decimal; nullopt
// when the field is absent or null. A boolean, an object, an array or a non-integer number is not
// a key: Errc::invalid naming what it is (rule not_null).
Result<std::optional<std::string>> extract_key_value(const JsonObject& payload,
                                                     std::string_view field);

// The records one caller operation would write. Discarding the unit (or abort()) writes nothing.
class UnitOfWork {
 public:
  // REQUIRES: validate_key_rules(rules).ok(). `registry` must outlive the unit.
  UnitOfWork(const Registry& registry, KeyRules rules);

  // Adds a record for an event or command of registered type `type_name`. When its category
  // is partitioned, the key is taken from the payload's partition field and validated; on any
  // error the unit's records are unchanged and the error says why, e.g.
  //   raise 'OrderPlaced': field 'client_id' of category 'order': invalid partition key "dlq":
  //   rule not_reserved: equals the reserved DLQ token "dlq"
  Status raise(std::string_view type_name, const JsonObject& payload);

  const std::vector<OutboxRecord>& records() const { return records_; }
  void abort() { records_.clear(); }

 private:
  friend class Outbox;
  const Registry& registry_;
  KeyRules rules_;
  std::vector<OutboxRecord> records_;
};

// Records in commit order with their status.
class Outbox {
 public:
  explicit Outbox(std::size_t record_count_max = 1u << 20);
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Moves every record of `uow` in (ids assigned), leaving `uow` empty; Errc::refused and no
  // change when that would pass record_count_max.
  Status commit(UnitOfWork& uow);

  // Appends a record as it is, skipping record creation's checks (tests of the backstop, and
  // records written by other code). Returns its id; Errc::refused when full.
  Result<std::uint64_t> insert_unchecked(OutboxRecord record);

  const std::vector<OutboxRecord>& records() const { return records_; }
  std::size_t pending_count() const;

  // REQUIRES: `id` names a pending record.
  void mark_published(std::uint64_t id);
  void mark_abandoned(std::uint64_t id, std::string reason);

 private:
  OutboxRecord& at(std::uint64_t id);

  std::size_t record_count_max_;
  std::vector<OutboxRecord> records_;
};

using PublishFn = std::function<Status(const OutboxRecord&)>;

struct PublishSummary {
  std::size_t published = 0;
  std::size_t abandoned = 0;
  std::optional<Error> stopped_on;  // the publish error that ended the pass early, if any
};

// The outbox processor's publish path: the one place a record meets the broker (ADR Context
// fact 6), where the key is checked once more.
class OutboxPublisher {
 public:
  // REQUIRES: validate_key_rules(rules).ok(). Both references must outlive the publisher.
  OutboxPublisher(Outbox& outbox, const Registry& registry, KeyRules rules);

  // Goes through pending records in id order, at most `record_count_max` of them. A record of
  // a partitioned category whose key fails the key rules (or whose stream is not C:K) is marked
  // ABANDONED with reason "invalid partition key ..." and `publish` is not called for it; the
  // pass continues. A record `publish` accepts is marked published. When `publish` fails, the
  // record stays pending and the pass stops there, so records behind it keep their order.
  PublishSummary publish_pending(const PublishFn& publish, std::size_t record_count_max = 1u << 20);

 private:
  // Empty when `record` may be published; else the abandon reason.
  std::string check_record(const OutboxRecord& record) const;

  Outbox& outbox_;
  const Registry& registry_;
  KeyRules rules_;
};

}  // namespace seqby
