#include "seqby/core/keyspace.h"

#include "seqby/core/hash_slot.h"

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
  std::string out;
  out.reserve(a.size() + 1 + b.size() + 1 + c.size());
  out += a;
  out += ':';
  out += b;
  out += ':';
  out += c;
  return out;
}

// C:K, or C:{K} in the cluster layout, appended to `out`.
void append_partition_stream_name(std::string& out, std::string_view category, std::string_view key,
                                  KeyLayout layout) {
  out += category;
  out += ':';
  if (layout == KeyLayout::cluster) out += '{';
  out += key;
  if (layout == KeyLayout::cluster) out += '}';
}

// "{s}": a hash tag.
std::string tagged(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '{';
  out += s;
  out += '}';
  return out;
}

}  // namespace

const char* key_layout_name(KeyLayout layout) {
  switch (layout) {
    case KeyLayout::flat:
      return "flat";
    case KeyLayout::cluster:
      return "cluster";
  }
  return "flat";
}

std::optional<KeyLayout> parse_key_layout(std::string_view name) {
  if (name == "flat") return KeyLayout::flat;
  if (name == "cluster") return KeyLayout::cluster;
  return std::nullopt;
}

std::uint16_t crc16_xmodem(std::string_view data) {
  std::uint16_t crc = 0;
  for (const char c : data) {
    crc ^= static_cast<std::uint16_t>(static_cast<unsigned char>(c)) << 8;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                                : static_cast<std::uint16_t>(crc << 1);
    }
  }
  return crc;
}

std::string_view hash_tag(std::string_view key) {
  const std::size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const std::size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

std::uint16_t key_hash_slot(std::string_view key) {
  return static_cast<std::uint16_t>(crc16_xmodem(hash_tag(key)) & (kHashSlotCount - 1));
}

std::string partition_stream_name(std::string_view category, std::string_view key,
                                  KeyLayout layout) {
  std::string out;
  out.reserve(category.size() + key.size() + 3);
  append_partition_stream_name(out, category, key, layout);
  return out;
}

std::string backfill_lane_name(std::string_view category, std::string_view key,
                               std::string_view backfill_suffix, KeyLayout layout) {
  return join(partition_stream_name(category, key, layout), backfill_suffix);
}

std::string dlq_stream_name(std::string_view category, std::string_view key, KeyLayout layout) {
  return join(partition_stream_name(category, key, layout), kDlqToken);
}

std::string lease_key_name(std::string_view category, std::string_view key) {
  return join(category, key, kLeaseToken);
}

std::string lease_key_name(std::string_view category, std::string_view key, std::string_view scope,
                           KeyLayout layout) {
  // One string, built once: a lease key is made for every fenced step and every renewal.
  std::string name;
  name.reserve(category.size() + key.size() + 3 + 1 + kLeaseToken.size() + 1 + scope.size());
  append_partition_stream_name(name, category, key, layout);
  name += ':';
  name += kLeaseToken;
  if (!scope.empty()) {
    name += ':';
    name += scope;
  }
  return name;
}

std::string fence_key_name(std::string_view category, std::string_view key, KeyLayout layout) {
  return join(partition_stream_name(category, key, layout), kFenceToken);
}

std::string partition_index_name(std::string_view category) {
  return join(category, kPartitionIndexToken);
}

std::string reaping_set_name(std::string_view category) {
  return join(tagged(partition_index_name(category)), kReapingToken);
}

std::string publishing_hash_name(std::string_view category) {
  return join(tagged(partition_index_name(category)), kPublishingToken);
}

std::string subscribers_set_name(std::string_view category) {
  return join(category, kSubscribersToken);
}

std::string pm_lease_category(std::string_view process_manager) {
  return join(kProcessManagerToken, process_manager);
}

std::string members_set_name(std::string_view category, std::string_view group, KeyLayout layout) {
  if (layout == KeyLayout::cluster) return join(category, kMembersToken, tagged(group));
  return join(category, kMembersToken, group);
}

std::string member_key_name(std::string_view category, std::string_view group,
                            std::string_view owner_id, KeyLayout layout) {
  if (layout == KeyLayout::cluster) {
    return join(join(category, kMemberToken, tagged(group)), owner_id);
  }
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

std::optional<PartitionRef> split_partition_stream(std::string_view stream, KeyLayout layout) {
  const std::size_t colon = stream.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view key = stream.substr(colon + 1);
  if (layout == KeyLayout::cluster) {
    if (key.size() < 3 || key.front() != '{' || key.back() != '}') return std::nullopt;
    key = key.substr(1, key.size() - 2);
  }
  return PartitionRef{std::string(stream.substr(0, colon)), std::string(key), layout};
}

std::optional<PartitionGroup> parse_sink_key_name(std::string_view name, KeyLayout layout) {
  static const std::string token = ":" + std::string(kSinkToken) + ":";
  const std::size_t at = name.find(token);
  if (at == std::string_view::npos) return std::nullopt;
  std::optional<PartitionRef> partition = split_partition_stream(name.substr(0, at), layout);
  if (!partition.has_value()) return std::nullopt;
  return PartitionGroup{std::move(*partition), std::string(name.substr(at + token.size()))};
}

}  // namespace seqby
