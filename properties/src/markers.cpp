#include "seqby/properties/markers.h"

#include <algorithm>
#include <charconv>

#include "seqby/core/check.h"

namespace seqby::properties {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(separator, start), text.size());
    if (end > start) parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// A decimal count, all digits, that fits.
bool parse_count(std::string_view text, std::uint64_t* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    SEQBY_CHECK(item.find_first_of(" ,") == std::string::npos && !item.empty());
    if (!out.empty()) out.push_back(',');
    out += item;
  }
  return out;
}

}  // namespace

HistoryRecord run_header_record(const RunHeader& header) {
  HistoryRecord record;
  record.op = HistoryOp::fault;
  record.detail = std::string(kRunMarker);
  if (!header.process_managers.empty()) {
    std::vector<std::string> items;
    for (const std::string& group : header.process_managers) {
      SEQBY_CHECK(group.find(':') == std::string::npos);
      items.push_back(group);
      auto categories = header.pm_categories.find(group);
      if (categories == header.pm_categories.end() || categories->second.empty()) continue;
      std::string joined;
      for (const std::string& category : categories->second) {
        SEQBY_CHECK(category.find('+') == std::string::npos && !category.empty());
        joined += (joined.empty() ? "" : "+") + category;
      }
      items.back() += ":" + joined;
    }
    record.detail += " pm=" + join(items);
  }
  if (!header.skip.empty()) record.detail += " skip=" + join(header.skip);
  if (!header.require.empty()) record.detail += " require=" + join(header.require);
  for (const auto& [name, value] : header.extra) {
    SEQBY_CHECK(name.find_first_of(" =") == std::string::npos && !name.empty());
    SEQBY_CHECK(value.find(' ') == std::string::npos);
    record.detail += " " + name + "=" + value;
  }
  return record;
}

HistoryRecord liveness_marker_record(std::uint64_t time_ms) {
  HistoryRecord record;
  record.op = HistoryOp::fault;
  record.time_ms = time_ms;
  record.detail = std::string(kLivenessMarker);
  return record;
}

bool detail_starts_with_word(std::string_view detail, std::string_view word) {
  const std::vector<std::string_view> tokens = split(detail, ' ');
  return !tokens.empty() && tokens.front() == word;
}

bool detail_has_token(std::string_view detail, std::string_view token) {
  for (std::string_view part : split(detail, ' ')) {
    if (part == token) return true;
  }
  return false;
}

bool is_run_header(const HistoryRecord& record) {
  return record.op == HistoryOp::fault && record.node.empty() &&
         detail_starts_with_word(record.detail, kRunMarker);
}

bool is_liveness_marker(const HistoryRecord& record) {
  return record.op == HistoryOp::fault && record.node.empty() &&
         detail_starts_with_word(record.detail, kLivenessMarker);
}

bool is_crash(const HistoryRecord& record) {
  return record.op == HistoryOp::fault && !record.node.empty() &&
         detail_starts_with_word(record.detail, kCrashFault);
}

bool is_crash_of(const HistoryRecord& record, std::string_view node) {
  return is_crash(record) && record.node == node;
}

HistoryRecord replica_lag_record(std::uint64_t shard, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& indexes) {
  HistoryRecord record;
  record.op = HistoryOp::fault;
  record.detail = std::string(kReplicaLag) + " shard=" + std::to_string(shard) +
                  " keys=" + join(keys) + (indexes.empty() ? "" : " indexes=" + join(indexes)) +
                  " begin";
  return record;
}

HistoryRecord lossy_failover_record(std::uint64_t shard, std::string_view master) {
  SEQBY_CHECK(master.find(' ') == std::string_view::npos);
  HistoryRecord record;
  record.op = HistoryOp::fault;
  record.detail = std::string(kLossyFailover) + " shard=" + std::to_string(shard) +
                  " master=" + std::string(master);
  return record;
}

std::optional<FailoverMarker> parse_failover_marker(const HistoryRecord& record) {
  if (record.op != HistoryOp::fault || !record.node.empty()) return std::nullopt;
  const std::vector<std::string_view> tokens = split(record.detail, ' ');
  if (tokens.size() < 2 || (tokens[0] != kReplicaLag && tokens[0] != kLossyFailover) ||
      !tokens[1].starts_with("shard=")) {
    return std::nullopt;
  }
  FailoverMarker marker;
  marker.lossy_failover = tokens[0] == kLossyFailover;
  if (!parse_count(tokens[1].substr(6), &marker.shard)) return std::nullopt;
  if (marker.lossy_failover) return marker;
  if (tokens.size() < 3 || !tokens[2].starts_with("keys=")) return std::nullopt;
  for (std::string_view key : split(tokens[2].substr(5), ',')) marker.keys.emplace_back(key);
  if (tokens.size() > 3 && tokens[3].starts_with("indexes=")) {
    for (std::string_view category : split(tokens[3].substr(8), ',')) {
      marker.indexes.emplace_back(category);
    }
  }
  return marker;
}

std::optional<PartitionCountWarning> parse_partition_count_warning(const HistoryRecord& record) {
  if (record.op != HistoryOp::warn) return std::nullopt;
  // "live" "partitions" N "over" "threshold" T
  const std::vector<std::string_view> tokens = split(record.detail, ' ');
  const std::vector<std::string_view> words = split(kPartitionCountWarning, ' ');
  if (tokens.size() != words.size() + 4 ||
      !std::equal(words.begin(), words.end(), tokens.begin()) ||
      tokens[words.size() + 1] != "over" || tokens[words.size() + 2] != "threshold") {
    return std::nullopt;
  }
  PartitionCountWarning warning;
  if (!parse_count(tokens[words.size()], &warning.partitions) ||
      !parse_count(tokens[words.size() + 3], &warning.threshold)) {
    return std::nullopt;
  }
  return warning;
}

RunHeader parse_run_header(const HistoryRecord& record) {
  SEQBY_CHECK(is_run_header(record));
  RunHeader header;
  const std::vector<std::string_view> tokens = split(record.detail, ' ');
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::size_t equals = tokens[i].find('=');
    const std::string_view name = tokens[i].substr(0, equals);
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : tokens[i].substr(equals + 1);
    if (name == "pm") {
      for (std::string_view item : split(value, ',')) {
        const std::size_t colon = item.find(':');
        const std::string group(item.substr(0, colon));
        header.process_managers.push_back(group);
        if (colon == std::string_view::npos) continue;
        const std::vector<std::string_view> categories = split(item.substr(colon + 1), '+');
        if (categories.empty()) continue;
        header.pm_categories[group].assign(categories.begin(), categories.end());
      }
    } else if (name == "skip") {
      for (std::string_view item : split(value, ',')) header.skip.emplace_back(item);
    } else if (name == "require") {
      for (std::string_view item : split(value, ',')) header.require.emplace_back(item);
    } else {
      header.extra.emplace_back(std::string(name), std::string(value));
    }
  }
  return header;
}

}  // namespace seqby::properties
