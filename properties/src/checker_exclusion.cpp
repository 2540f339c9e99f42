// Handler executions: exclusion and pm_exclusion (overlaps of different events of one lease unit,
// stale overlaps and what a stale execution may still do) and parallel (overlaps across keys).
#include <algorithm>

#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {
namespace {

bool same_event(const Execution& e, const std::string& category, const std::string& event_id) {
  return e.category == category && e.event_id == event_id;
}

std::string describe(const Execution& e) {
  return "event " + e.event_id + (e.seq >= 1 ? " (seq " + std::to_string(e.seq) + ")" : "") +
         " by " + e.node + " under generation " + std::to_string(e.generation);
}

}  // namespace

void Checker::on_enter(const HistoryRecord& r) {
  ++report_.counters.executions;
  const int unit_id = unit_of(r);
  if (unit_id < 0 || r.category.empty()) return;
  Unit& unit = units_[unit_id];
  const Property property = unit.pm ? Property::pm_exclusion : Property::exclusion;
  const std::string scope = unit.pm ? "one correlation value" : "one key";

  if (unit.pm) note_group(r.category, r.group);

  Execution e;
  e.node = r.node;
  e.category = r.category;
  e.event_id = r.event_id;
  e.generation = r.generation;
  e.enter_index = r.index;
  e.stream = stream_of(r.category, r.key);
  e.spot = spot_of(r, unit, e.stream);
  e.seq = seq_of(r);

  // A node under a stale generation may enter one event only: the later of the event it had in
  // flight and the event it last read while the generation was current (a process manager whose
  // event failed on one stream reads the next one on another before it goes stale), else, with
  // neither recorded, the first it enters.
  std::optional<std::uint64_t> stale;
  if (r.generation > 0) {
    stale = stale_point(unit, r.generation);
    NodeGeneration& ng = unit.node_generations[{r.node, r.generation}];
    if (stale) {
      if (!ng.stale_decided) {
        ng.stale_decided = true;
        if (ng.read_before_stale && (!ng.in_flight || ng.last_read_index > ng.in_flight_index)) {
          ng.allowed_category = ng.last_read_category;
          ng.allowed_event = ng.last_read_event;
          ng.allowed_index = ng.last_read_index;
        } else {
          ng.allowed_category = ng.in_flight ? ng.in_flight_category : r.category;
          ng.allowed_event = ng.in_flight ? ng.in_flight_event : r.event_id;
          ng.allowed_index = ng.in_flight ? ng.in_flight_index : r.index;
        }
      }
      if (ng.allowed_category != r.category || ng.allowed_event != r.event_id) {
        violation(property, unit.category, unit.key, unit.group,
                  {ng.allowed_index, *stale, r.index},
                  r.node + " entered " + describe(e) + " on " + where(unit) +
                      ", a generation that record #" + std::to_string(*stale) +
                      " had ended: a stale owner may finish only the event it had in flight or "
                      "had read under its lease (" +
                      ng.allowed_event + ") and must never enter a next one.");
      }
    }
    ng.in_flight = true;
    ng.in_flight_category = r.category;
    ng.in_flight_event = r.event_id;
    ng.in_flight_index = r.index;
  }

  // Overlaps with the unit's open executions of other events.
  for (const Execution& other : unit.open) {
    if (same_event(other, e.category, e.event_id)) continue;  // a re-run of one event: allowed
    const std::optional<std::uint64_t> found =
        other.generation > 0 ? stale_point(unit, other.generation) : std::nullopt;
    const bool other_stale = found.has_value();
    const std::uint64_t other_point = found.value_or(0);
    if (!stale && !other_stale) {
      violation(property, unit.category, unit.key, unit.group, {other.enter_index, r.index},
                describe(other) + " and " + describe(e) + " were in the handler at once on " +
                    where(unit) + ", both under a valid lease: two different events of " + scope +
                    " must never overlap.");
      continue;
    }
    std::vector<std::uint64_t> witnesses{other.enter_index, r.index};
    if (stale) witnesses.push_back(*stale);
    if (other_stale) witnesses.push_back(other_point);
    const std::string stale_side =
        other_stale ? describe(other) + " (stale since #" + std::to_string(other_point) + ")"
                    : describe(e) + " (stale since #" + std::to_string(*stale) + ")";
    stale_overlap(property, unit, witnesses,
                  describe(other) + " and " + describe(e) + " overlapped on " + where(unit) +
                      ", but " + stale_side +
                      " had already lost the lease: the admitted residue, as long as it never "
                      "commits.");
    std::sort(witnesses.begin(), witnesses.end());
    auto remember = [&](const Execution& execution) {
      for (const StaleExecution& known : unit.stale) {
        if (known.execution.enter_index == execution.enter_index) return;
      }
      unit.stale.push_back(StaleExecution{execution, witnesses, false});
    };
    if (other_stale) remember(other);
    if (stale) remember(e);
  }

  // parallel: an execution starting while another key has one open.
  Spot& spot = spots_[e.spot];
  if (spot.open_executions == 0) {
    if (spots_open_ > 0 && !parallel_seen_) {
      parallel_seen_ = true;
      for (const Unit& u : units_) {
        for (const Execution& open : u.open) {
          if (open.spot != e.spot && parallel_witnesses_.empty()) {
            parallel_witnesses_ = {open.enter_index, r.index};
          }
        }
      }
    }
    ++spots_open_;
  }
  ++spot.open_executions;
  unit.open.push_back(std::move(e));
}

int Checker::spot_of(const HistoryRecord& r, const Unit& unit, int stream) {
  const std::string label = unit.pm ? unit.group + "/" + unit.key
                                    : streams_[stream].category + ":" + streams_[stream].key;
  auto [it, inserted] =
      spot_ids_.emplace((unit.pm ? "pm\x1f" : "\x1f") + label, static_cast<int>(spots_.size()));
  if (inserted) spots_.push_back(Spot{label, 0, r.index});
  return it->second;
}

void Checker::on_exit(const HistoryRecord& r) {
  const int unit_id = unit_of(r);
  if (unit_id < 0) return;
  Unit& unit = units_[unit_id];
  for (std::size_t i = unit.open.size(); i-- > 0;) {
    if (unit.open[i].node == r.node && same_event(unit.open[i], r.category, r.event_id)) {
      close_execution(unit, i);
      return;
    }
  }
  note("exit #" + std::to_string(r.index) + " by " + r.node + " of event " + r.event_id +
       " matches no open enter");
}

void Checker::on_crash(const HistoryRecord& r) {
  for (Unit& unit : units_) {
    for (std::size_t i = unit.open.size(); i-- > 0;) {
      if (unit.open[i].node == r.node) close_execution(unit, i);
    }
  }
}

void Checker::close_execution(Unit& unit, std::size_t position) {
  Spot& spot = spots_[unit.open[position].spot];
  SEQBY_CHECK(spot.open_executions > 0);
  if (--spot.open_executions == 0) --spots_open_;
  unit.open.erase(unit.open.begin() + static_cast<std::ptrdiff_t>(position));
}

void Checker::check_stale_commit(const HistoryRecord& r, std::int64_t seq) {
  const int unit_id = unit_of(r);
  if (unit_id < 0) return;
  Unit& unit = units_[unit_id];
  for (StaleExecution& known : unit.stale) {
    const Execution& e = known.execution;
    const bool same = r.event_id.empty() ? e.seq == seq && e.category == r.category
                                         : same_event(e, r.category, r.event_id);
    if (known.committed || e.node != r.node || e.generation != r.generation || !same) continue;
    known.committed = true;
    std::vector<std::uint64_t> witnesses = known.witnesses;
    witnesses.push_back(r.index);
    violation(unit.pm ? Property::pm_exclusion : Property::exclusion, unit.category, unit.key,
              unit.group, std::move(witnesses),
              "the stale execution of " + describe(e) + " on " + where(unit) +
                  " overlapped another event's execution and then got an accepted commit: a "
                  "stale execution must never commit.");
  }
}

void Checker::judge_parallel() {
  PropertyStatus& status = report_.properties[static_cast<std::size_t>(Property::parallel)];
  if (!enabled(Property::parallel)) {
    status.note = "skipped";
    return;
  }
  const std::size_t nodes = lease_node_first_acquire_.size();
  const std::size_t keys = spots_.size();
  if (nodes < 2 || keys < 2) {
    status.note = "not applicable: " + std::to_string(nodes) + " node(s) acquired leases and " +
                  std::to_string(keys) + " key(s) had executions";
    return;
  }
  status.checked = true;
  if (parallel_seen_) return;
  const Spot& a = spots_[0];
  const Spot& b = spots_[1];
  violation(Property::parallel, "", "", "",
            {lease_node_first_acquire_[0].second, lease_node_first_acquire_[1].second,
             a.first_enter_index, b.first_enter_index},
            lease_node_first_acquire_[0].first + " and " + lease_node_first_acquire_[1].first +
                " held leases and " + std::to_string(keys) + " keys had work (" + a.label + ", " +
                b.label +
                ", ...), yet no two executions of different keys ever overlapped: processing was "
                "serialized across keys.");
}

}  // namespace seqby::properties::detail
