#include "seqby/core/keyspace.h"

namespace seqby {
namespace {

std::string join(std::string_view a, std::string_view b) {
  std::string out;
  out.reserve(a.size() + 1 + b.size());
  out += a;
  out += ':';
  out += b;
  return out;
}

std::string join(std::string_view a, std::string_view b, std::string_view c) {
  return join(join(a, b), c);
}

}  // namespace

std::string partition_stream_name(std::string_view category, std::string_view key) {
  return join(category, key);
}

std::string backfill_lane_name(std::string_view category, std::string_view key,
                               std::string_view backfill_suffix) {
  return join(category, key, backfill_suffix);
}

std::string dlq_stream_name(std::string_view category, std::string_view key) {
  return join(category, key, kDlqToken);
}

std::string lease_key_name(std::string_view category, std::string_view key) {
  return join(category, key, kLeaseToken);
}

std::string lease_key_name(std::string_view category, std::string_view key,
                           std::string_view scope) {
  std::string name = lease_key_name(category, key);
  if (!scope.empty()) {
    name += ':';
    name += scope;
  }
  return name;
}

std::string fence_key_name(std::string_view category, std::string_view key) {
  return join(category, key, kFenceToken);
}

std::string partition_index_name(std::string_view category) {
  return join(category, kPartitionIndexToken);
}

std::string subscribers_set_name(std::string_view category) {
  return join(category, kSubscribersToken);
}

std::string pm_lease_category(std::string_view process_manager) {
  return join(kProcessManagerToken, process_manager);
}

std::string members_set_name(std::string_view category, std::string_view group) {
  return join(category, kMembersToken, group);
}

std::string member_key_name(std::string_view category, std::string_view group,
                            std::string_view owner_id) {
  return join(join(category, kMemberToken, group), owner_id);
}

std::string history_stream_name(std::string_view category) {
  return join(kHistoryStreamName, category);
}

std::string sink_key_name(const PartitionRef& partition, std::string_view group) {
  return join(partition.stream(), kSinkToken, group);
}

std::string effects_hash_name(const PartitionRef& partition, std::string_view group) {
  return join(partition.stream(), kEffectsToken, group);
}

std::string halt_key_name(const PartitionRef& partition, std::string_view group) {
  return join(partition.stream(), kHaltToken, group);
}

std::string inprogress_key_name(const PartitionRef& unit, std::string_view group) {
  return join(unit.stream(), kInprogressToken, group);
}

std::string journal_stream_name(const PartitionRef& unit) {
  return join(unit.stream(), kJournalToken);
}

std::string category_journal_name(std::string_view category) {
  return join(category, kJournalToken);
}

std::string wake_stream_name(std::string_view unit_category, std::string_view owner_id,
                             std::size_t channel) {
  std::string name = join(join(unit_category, "__wake__"), owner_id);
  if (channel > 0) name += "#" + std::to_string(channel);
  return name;
}

std::optional<PartitionRef> split_partition_stream(std::string_view stream) {
  const std::size_t colon = stream.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return PartitionRef{std::string(stream.substr(0, colon)), std::string(stream.substr(colon + 1))};
}

std::optional<PartitionGroup> parse_sink_key_name(std::string_view name) {
  static const std::string token = ":" + std::string(kSinkToken) + ":";
  const std::size_t at = name.find(token);
  if (at == std::string_view::npos) return std::nullopt;
  std::optional<PartitionRef> partition = split_partition_stream(name.substr(0, at));
  if (!partition.has_value()) return std::nullopt;
  return PartitionGroup{std::move(*partition), std::string(name.substr(at + token.size()))};
}

}  // namespace seqby
