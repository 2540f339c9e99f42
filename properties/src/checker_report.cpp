// Rendering a CheckReport as human text and as one JSON object.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"

namespace seqby::properties {
namespace {

std::string partition(const Finding& f) {
  if (f.category.empty() && f.key.empty()) return "(whole run)";
  if (f.category.empty()) return "correlation " + f.key + " of process manager " + f.group;
  std::string text = f.category + ":" + f.key;
  if (!f.group.empty()) text += " (group " + f.group + ")";
  return text;
}

const HistoryRecord* find_record(const std::vector<HistoryRecord>& history, std::uint64_t index) {
  auto it = std::lower_bound(history.begin(), history.end(), index,
                             [](const HistoryRecord& r, std::uint64_t i) { return r.index < i; });
  if (it != history.end() && it->index == index) return &*it;
  for (const HistoryRecord& r : history) {  // indices not sorted: fall back to a scan
    if (r.index == index) return &r;
  }
  return nullptr;
}

void render_finding(std::string& out, const Finding& f, const std::vector<HistoryRecord>* history) {
  out += "  [" + std::string(property_name(f.property)) + "] " + partition(f) + ": " +
         f.explanation + "\n    witnesses:";
  for (std::uint64_t index : f.witnesses) out += " #" + std::to_string(index);
  out += "\n";
  if (history == nullptr) return;
  for (std::uint64_t index : f.witnesses) {
    const HistoryRecord* record = find_record(*history, index);
    if (record != nullptr) out += "      " + record_to_jsonl(*record) + "\n";
  }
}

nlohmann::ordered_json finding_json(const Finding& f) {
  nlohmann::ordered_json j;
  j["property"] = property_name(f.property);
  j["category"] = f.category;
  j["key"] = f.key;
  j["group"] = f.group;
  j["witnesses"] = f.witnesses;
  j["explanation"] = f.explanation;
  return j;
}

}  // namespace

std::string render_report_text(const CheckReport& report,
                               const std::vector<HistoryRecord>* history) {
  const CheckCounters& c = report.counters;
  std::uint64_t violation_total = 0;
  std::string by_property;
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    const PropertyStatus& status = report.properties[i];
    violation_total += status.violation_count;
    if (status.violated()) {
      by_property += std::string(by_property.empty() ? "" : ", ") +
                     property_name(static_cast<Property>(i)) + " " +
                     std::to_string(status.violation_count);
    }
  }
  std::string out;
  if (report.ok()) {
    out += "seqby check: OK: every checked property holds";
  } else {
    out += "seqby check: FAILED: " + std::to_string(violation_total) + " violation(s) (" +
           by_property + ")";
  }
  out += "; " + std::to_string(c.stale_overlaps + c.pm_stale_overlaps) + " stale overlap(s); " +
         std::to_string(c.records) + " records\n";
  out += "properties:\n";
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    const PropertyStatus& status = report.properties[i];
    std::string name = property_name(static_cast<Property>(i));
    name.resize(14, ' ');
    out += "  " + name;
    if (!status.checked) {
      out += "not checked: " + status.note;
    } else if (status.violated()) {
      out += "VIOLATED (" + std::to_string(status.violation_count) + ")";
    } else {
      out += "holds";
    }
    out += "\n";
  }
  out += "counters: published " + std::to_string(c.events_published) + " (poison " +
         std::to_string(c.events_poison) + "), committed " + std::to_string(c.events_committed) +
         ", commits fenced " + std::to_string(c.commits_fenced) + ", commits rejected " +
         std::to_string(c.commits_rejected) + ", executions " + std::to_string(c.executions) +
         ", acquires " + std::to_string(c.acquires) + " by " + std::to_string(c.nodes_with_lease) +
         " node(s), stale overlaps " + std::to_string(c.stale_overlaps) + " (pm " +
         std::to_string(c.pm_stale_overlaps) + "), halts " + std::to_string(c.halts) + ", dlqs " +
         std::to_string(c.dlqs) + ", skips " + std::to_string(c.skips) + ", faults " +
         std::to_string(c.faults);
  if (c.liveness_marker) out += ", liveness phase from #" + std::to_string(c.liveness_marker_index);
  if (c.lossy_failovers > 0) {
    out += ", lossy failovers " + std::to_string(c.lossy_failovers) + " (records undone " +
           std::to_string(c.records_undone) + ", publishes lost " +
           std::to_string(c.publishes_lost) + ", commits lost " + std::to_string(c.commits_lost) +
           ", keys unindexed " + std::to_string(c.keys_unindexed) + ", keys put back " +
           std::to_string(c.keys_put_back) + ")";
  }
  out += "\n";
  if (!report.violations.empty()) {
    out += "violations:\n";
    for (const Finding& f : report.violations) render_finding(out, f, history);
    if (report.violations.size() < violation_total) {
      out += "  (" + std::to_string(violation_total - report.violations.size()) +
             " more not listed)\n";
    }
  }
  if (!report.stale_overlaps.empty()) {
    out += "stale overlaps (admitted residue, not violations):\n";
    for (const Finding& f : report.stale_overlaps) render_finding(out, f, history);
  }
  if (!report.notes.empty()) {
    out += "notes:\n";
    for (const std::string& note : report.notes) out += "  " + note + "\n";
  }
  return out;
}

std::string render_report_json(const CheckReport& report) {
  nlohmann::ordered_json j;
  j["ok"] = report.ok();
  nlohmann::ordered_json properties = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    const PropertyStatus& status = report.properties[i];
    nlohmann::ordered_json p;
    p["checked"] = status.checked;
    p["violated"] = status.violated();
    p["violations"] = status.violation_count;
    p["note"] = status.note;
    properties[property_name(static_cast<Property>(i))] = std::move(p);
  }
  j["properties"] = std::move(properties);
  j["violations"] = nlohmann::ordered_json::array();
  for (const Finding& f : report.violations) j["violations"].push_back(finding_json(f));
  j["stale_overlaps"] = nlohmann::ordered_json::array();
  for (const Finding& f : report.stale_overlaps) j["stale_overlaps"].push_back(finding_json(f));
  const CheckCounters& c = report.counters;
  nlohmann::ordered_json counters;
  counters["records"] = c.records;
  counters["events_published"] = c.events_published;
  counters["events_poison"] = c.events_poison;
  counters["events_committed"] = c.events_committed;
  counters["commits_fenced"] = c.commits_fenced;
  counters["commits_rejected"] = c.commits_rejected;
  counters["executions"] = c.executions;
  counters["acquires"] = c.acquires;
  counters["nodes_with_lease"] = c.nodes_with_lease;
  counters["stale_overlaps"] = c.stale_overlaps;
  counters["pm_stale_overlaps"] = c.pm_stale_overlaps;
  counters["halts"] = c.halts;
  counters["dlqs"] = c.dlqs;
  counters["skips"] = c.skips;
  counters["faults"] = c.faults;
  if (c.liveness_marker) counters["liveness_marker_index"] = c.liveness_marker_index;
  if (c.lossy_failovers > 0) {
    counters["lossy_failovers"] = c.lossy_failovers;
    counters["records_undone"] = c.records_undone;
    counters["publishes_lost"] = c.publishes_lost;
    counters["commits_lost"] = c.commits_lost;
    counters["keys_unindexed"] = c.keys_unindexed;
    counters["keys_put_back"] = c.keys_put_back;
  }
  j["counters"] = std::move(counters);
  j["notes"] = report.notes;
  return j.dump();
}

}  // namespace seqby::properties
