#include "seqby/core/engine_options.h"

#include <limits>

#include "seqby/core/check.h"
#include "seqby/core/keys.h"

namespace seqby {

EngineLimits::EngineLimits() {
  for (const EngineLimitField& field : kEngineLimitFields) field.set(*this, field.default_value);
}

void EngineLimitField::set(EngineLimits& limits, std::uint64_t value) const {
  SEQBY_CHECK(value <= value_max());
  if (u64 != nullptr) {
    limits.*u64 = value;
  } else {
    limits.*u32 = static_cast<std::uint32_t>(value);
  }
}

std::uint64_t EngineLimitField::value_max() const {
  SEQBY_CHECK((u64 == nullptr) != (u32 == nullptr));
  return u64 != nullptr ? std::numeric_limits<std::uint64_t>::max()
                        : std::numeric_limits<std::uint32_t>::max();
}

std::string EngineLimitField::flag_name() const {
  std::string flag = "--";
  for (char c : name) flag.push_back(c == '_' ? '-' : c);
  return flag;
}

namespace {

Status invalid(std::string message) {
  return make_error(Errc::invalid, "engine options: " + std::move(message));
}

}  // namespace

Status validate_engine_options(const EngineOptions& o) {
  if (o.owner_id.empty()) return invalid("owner_id is empty");
  if (o.owner_id.find(':') != std::string::npos) {
    return invalid("owner_id \"" + o.owner_id + "\" contains ':'");
  }
  if (o.pm_categories.empty() && o.category.empty()) return invalid("category is empty");
  if (o.pm_categories.empty()) {
    if (Status s = validate_category_name(o.category); !s.ok()) {
      return invalid("category: " + s.error().message);
    }
  }
  if (!o.pm_categories.empty()) {
    if (!o.category.empty()) {
      return invalid("category must be empty for a process manager (pm_categories name them)");
    }
    for (std::size_t i = 0; i < o.pm_categories.size(); ++i) {
      const std::string& c = o.pm_categories[i];
      if (Status s = validate_category_name(c); !s.ok()) {
        return invalid("pm_categories: " + s.error().message);
      }
      for (std::size_t j = 0; j < i; ++j) {
        if (o.pm_categories[j] == c) return invalid("pm_categories lists \"" + c + "\" twice");
      }
    }
    if (o.lease_per_group) return invalid("lease_per_group does not apply to a process manager");
    if (o.reap_idle_ms > 0) return invalid("reap_idle_ms does not apply to a process manager");
  }
  if (o.group.empty()) return invalid("group is empty");
  if (o.group.find(':') != std::string::npos) return invalid("group contains ':'");
  if (o.lease_ttl_ms == 0) return invalid("lease_ttl_ms is 0");
  if (o.heartbeat_interval_ms == 0 || o.heartbeat_interval_ms * 2 > o.lease_ttl_ms) {
    return invalid("heartbeat_interval_ms must be in 1..lease_ttl_ms/2");
  }
  if (o.discovery_interval_ms == 0) return invalid("discovery_interval_ms is 0");
  if (o.poll_interval_ms == 0) return invalid("poll_interval_ms is 0");
  if (o.wake_read_partitions_max == 0) return invalid("wake_read_partitions_max is 0");
  if (o.read_batch_max == 0) return invalid("read_batch_max is 0");
  if (o.step_batch_max == 0) return invalid("step_batch_max is 0");
  if (o.retry_backoff_ms == 0 || o.retry_backoff_max_ms < o.retry_backoff_ms) {
    return invalid("retry_backoff_ms must be in 1..retry_backoff_max_ms");
  }
  if (o.transport_retry_count_max == 0) return invalid("transport_retry_count_max is 0");
  if (o.reap_idle_ms > 0 && o.lease_per_group) {
    return invalid("reap_idle_ms needs lease_per_group off (a reap deletes the partition's lease)");
  }
  return Status::Ok();
}

std::uint64_t backoff_ms(std::uint64_t base_ms, std::uint64_t max_ms, std::uint32_t attempt) {
  std::uint64_t delay_ms = base_ms;
  for (std::uint32_t i = 1; i < attempt && delay_ms < max_ms; ++i) delay_ms *= 2;
  return delay_ms < max_ms ? delay_ms : max_ms;
}

}  // namespace seqby
