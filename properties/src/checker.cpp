// check_history: one HistoryIndex per history, each record added to it and then handed to the
// checkers of the properties its op bears on (checker_<property>.cpp), the end-of-history
// judgements, and the CheckReport assembled in one place. Rendering is in checker_report.cpp.
#include "seqby/properties/checker.h"

#include <algorithm>
#include <optional>

#include "checker_internal.h"
#include "seqby/core/check.h"
#include "seqby/properties/markers.h"

namespace seqby::properties {
namespace {

constexpr std::array<const char*, kPropertyCount> kPropertyNames{
    "order", "fence", "exclusion", "no_loss", "poison_halt", "parallel", "pm_exclusion"};
constexpr std::size_t kNotesMax = 50;
static_assert(HistoryIndex::kNotesKept > kNotesMax);

void add_note(std::vector<std::string>& notes, std::string text) {
  if (notes.size() < kNotesMax) {
    notes.push_back(std::move(text));
  } else if (notes.size() == kNotesMax) {
    notes.push_back("(further notes left out)");
  }
}

// What the options and the run headers ask for: which properties are judged, whether halts must
// be recorded; and the notes about the headers and the order of indices, in history order.
struct Plan {
  std::array<bool, kPropertyCount> enabled{};
  bool require_halt_record = false;
};

Plan plan(const HistoryIndex& index, const CheckOptions& options, std::vector<std::string>& notes) {
  Plan p;
  p.enabled.fill(true);
  for (Property property : options.skip) p.enabled[static_cast<std::size_t>(property)] = false;
  p.require_halt_record = options.require_halt_record || index.requires_halt();
  const auto& breaks = index.order_breaks();
  const auto& headers = index.headers();
  std::size_t b = 0;
  for (std::size_t h = 0; b < breaks.size() || h < headers.size();) {
    if (b < breaks.size() && (h == headers.size() || breaks[b] <= headers[h].first)) {
      const std::size_t position = breaks[b++];
      add_note(notes, "record indices do not strictly increase at position " +
                          std::to_string(position) + " (index " +
                          std::to_string(index.record(position).index) +
                          "); witnesses name indices");
      continue;
    }
    const auto& [position, header] = headers[h++];
    const std::uint64_t at = index.record(position).index;
    for (const std::string& demand : header.require) {
      if (demand != "halt") {
        add_note(notes, "run header #" + std::to_string(at) + " requires unknown '" + demand + "'");
      }
    }
    if (!options.honor_header_skip) continue;
    for (const std::string& name : header.skip) {
      Property property;
      if (parse_property(name, &property)) {
        p.enabled[static_cast<std::size_t>(property)] = false;
      } else {
        add_note(notes,
                 "run header #" + std::to_string(at) + " skips unknown property '" + name + "'");
      }
    }
  }
  if (index.process_managers().empty()) {
    p.enabled[static_cast<std::size_t>(Property::pm_exclusion)] = false;
  }
  return p;
}

void count(CheckCounters& c, const HistoryRecord& r) {
  ++c.records;
  switch (r.op) {
    case HistoryOp::acquire:
      ++c.acquires;
      break;
    case HistoryOp::enter:
      ++c.executions;
      break;
    case HistoryOp::commit:
      ++c.events_committed;
      break;
    case HistoryOp::commit_fenced:
      ++c.commits_fenced;
      break;
    case HistoryOp::commit_rejected:
      ++c.commits_rejected;
      break;
    case HistoryOp::halt:
      ++c.halts;
      break;
    case HistoryOp::dlq:
      ++c.dlqs;
      break;
    case HistoryOp::skip:
      ++c.skips;
      break;
    case HistoryOp::fault:
      if (!is_run_header(r) && !is_liveness_marker(r)) ++c.faults;
      break;
    default:
      break;
  }
}

}  // namespace

const char* property_name(Property property) {
  return kPropertyNames[static_cast<std::size_t>(property)];
}

bool parse_property(std::string_view name, Property* out) {
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    if (name == kPropertyNames[i]) {
      *out = static_cast<Property>(i);
      return true;
    }
  }
  return false;
}

bool CheckReport::ok() const {
  for (const PropertyStatus& status : properties) {
    if (status.violated()) return false;
  }
  return true;
}

CheckReport check_history(const std::vector<HistoryRecord>& history, const CheckOptions& options) {
  using namespace detail;
  HistoryIndex index(history);
  CheckReport report;
  std::vector<std::string> notes;
  const Plan p = plan(index, options, notes);
  Findings findings(report, p.enabled, options.findings_per_property_max);

  OrderChecker order(index, findings);
  FenceChecker fence(index, findings);
  ExclusionChecker exclusion(index, findings, /*process_managers=*/false);
  ExclusionChecker pm_exclusion(index, findings, /*process_managers=*/true);
  NoLossChecker no_loss(index, findings);
  PoisonHaltChecker poison_halt(index, findings);
  ParallelChecker parallel(index, findings);
  auto exclusion_of = [&](const IndexedStep& step) -> ExclusionChecker& {
    return index.units()[step.unit].pm ? pm_exclusion : exclusion;
  };
  std::optional<ReachedCounter> reached;
  if (options.reached != nullptr) reached.emplace(index);

  for (const HistoryRecord& r : history) {
    count(report.counters, r);
    const IndexedStep& step = index.add();
    if (reached) reached->on_step(step);
    switch (r.op) {
      case HistoryOp::acquire:
        fence.on_acquire(r, step);
        break;
      case HistoryOp::renew:
        fence.on_step(r, step);
        break;
      case HistoryOp::read:
        fence.on_step(r, step);
        if (step.unit >= 0) exclusion_of(step).on_read(r, step);
        break;
      case HistoryOp::enter:
        if (step.execution >= 0) exclusion_of(step).on_enter(r, step);
        parallel.on_enter(step);
        break;
      case HistoryOp::exit:
        parallel.on_ended(index.ended());
        break;
      case HistoryOp::ack:
        fence.on_step(r, step);
        if (step.unit >= 0) exclusion_of(step).on_ack(r, step);
        order.on_ack(r, step);
        break;
      case HistoryOp::commit:
        fence.on_step(r, step);
        if (step.unit >= 0) exclusion_of(step).on_commit(r, step);
        poison_halt.on_commit(r, step);
        order.on_commit(r, step);
        break;
      case HistoryOp::dlq:
        poison_halt.on_dlq(r);
        break;
      case HistoryOp::fault:
        parallel.on_ended(index.ended());
        order.on_undo(index.undone_lanes());
        break;
      default:
        break;
    }
  }
  SEQBY_CHECK(index.complete());
  if (reached) *options.reached = reached->finish(history);

  parallel.finish(report.properties[static_cast<std::size_t>(Property::parallel)]);
  no_loss.finish();
  poison_halt.finish(p.require_halt_record);
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    PropertyStatus& status = report.properties[i];
    if (static_cast<Property>(i) == Property::parallel) continue;  // parallel.finish decided
    status.checked = p.enabled[i];
    if (!p.enabled[i]) {
      status.note =
          static_cast<Property>(i) == Property::pm_exclusion && index.process_managers().empty()
              ? "no process manager declared in a run header"
              : "skipped";
    }
  }

  CheckCounters& c = report.counters;
  for (const IndexedStream& stream : index.streams()) {
    c.events_published += stream.events.size();
    c.events_poison += stream.poison_seqs.size();
  }
  c.nodes_with_lease = index.lease_nodes().size();
  c.lossy_failovers = index.lossy_failovers();
  c.records_undone = index.records_undone();
  c.keys_put_back = index.keys_put_back();
  for (const IndexedStream& stream : index.streams()) {
    for (const IndexedEvent& event : stream.events) c.publishes_lost += event.lost ? 1 : 0;
    c.keys_unindexed += stream.unindexed_at != 0 ? 1 : 0;
  }
  for (const IndexedLane& lane : index.lanes()) {
    for (const std::int64_t seq : lane.acked_uncommitted)
      c.commits_lost += has_commit(lane, seq) ? 0 : 1;
  }
  if (index.liveness_marker()) {
    c.liveness_marker = true;
    c.liveness_marker_index = index.record(*index.liveness_marker()).index;
  }
  for (const std::string& note : index.notes()) add_note(notes, note);
  report.notes = std::move(notes);

  auto by_property_then_witness = [](const Finding& a, const Finding& b) {
    if (a.property != b.property) return a.property < b.property;
    return a.witnesses < b.witnesses;
  };
  std::stable_sort(report.violations.begin(), report.violations.end(), by_property_then_witness);
  std::stable_sort(report.stale_overlaps.begin(), report.stale_overlaps.end(),
                   by_property_then_witness);
  return report;
}

namespace detail {

void Findings::violation(Property property, const std::string& category, const std::string& key,
                         const std::string& group, std::vector<std::uint64_t> witnesses,
                         std::string explanation) {
  const auto p = static_cast<std::size_t>(property);
  if (!enabled_[p]) return;
  ++report_.properties[p].violation_count;
  if (listed_[p] >= per_property_max_) return;
  ++listed_[p];
  std::sort(witnesses.begin(), witnesses.end());
  witnesses.erase(std::unique(witnesses.begin(), witnesses.end()), witnesses.end());
  report_.violations.push_back(
      Finding{property, category, key, group, std::move(witnesses), std::move(explanation)});
}

void Findings::stale_overlap(Property property, const IndexedUnit& unit,
                             std::vector<std::uint64_t> witnesses, std::string explanation) {
  if (!enabled(property)) return;
  ++(property == Property::pm_exclusion ? report_.counters.pm_stale_overlaps
                                        : report_.counters.stale_overlaps);
  if (report_.stale_overlaps.size() >= 2 * per_property_max_) return;
  std::sort(witnesses.begin(), witnesses.end());
  witnesses.erase(std::unique(witnesses.begin(), witnesses.end()), witnesses.end());
  report_.stale_overlaps.push_back(Finding{property, unit.category, unit.key, unit.group,
                                           std::move(witnesses), std::move(explanation)});
}

}  // namespace detail
}  // namespace seqby::properties
