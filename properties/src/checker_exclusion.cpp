// exclusion and pm_exclusion: executions of different events of one lease unit never overlap
// while both are under a valid lease; an overlap where one side had lost its lease is a stale
// overlap (the admitted residue) unless that stale execution then commits; and a node under a
// stale generation enters at most the one event it had in flight or had last read.
#include <algorithm>
#include <optional>

#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {
namespace {

bool same_event(const HistoryRecord& a, const HistoryRecord& b) {
  return a.category == b.category && a.event_id == b.event_id;
}

}  // namespace

ExclusionChecker::UnitState& ExclusionChecker::state_of(int unit) {
  SEQBY_CHECK(unit >= 0 && static_cast<std::size_t>(unit) < index_.units().size());
  SEQBY_CHECK(index_.units()[unit].pm == (property_ == Property::pm_exclusion));
  if (units_.size() <= static_cast<std::size_t>(unit)) units_.resize(unit + 1);
  return units_[unit];
}

std::string ExclusionChecker::describe(const IndexedExecution& e) const {
  const HistoryRecord& enter = index_.record(e.enter);
  return "event " + enter.event_id + (e.seq >= 1 ? " (seq " + std::to_string(e.seq) + ")" : "") +
         " by " + enter.node + " under generation " + std::to_string(enter.generation);
}

// The last event a node read under a generation while that generation was current: a stale
// owner may still enter it (the read was its lease check; a stall can fall in between).
void ExclusionChecker::on_read(const HistoryRecord& r, const IndexedStep& step) {
  if (step.unit < 0 || r.generation == 0) return;
  if (index_.stale_point(index_.units()[step.unit], r.generation, &r.node)) return;
  state_of(step.unit).node_generations[{r.node, r.generation}].last_read = step.position;
}

void ExclusionChecker::on_ack(const HistoryRecord& r, const IndexedStep& step) {
  if (step.unit < 0) return;
  UnitState& state = state_of(step.unit);
  auto found = state.node_generations.find({r.node, r.generation});
  if (found == state.node_generations.end()) return;
  NodeGeneration& ng = found->second;
  if (ng.in_flight != kNoPosition && same_event(index_.record(ng.in_flight), r)) {
    ng.in_flight = kNoPosition;
  }
}

void ExclusionChecker::on_enter(const HistoryRecord& r, const IndexedStep& step) {
  if (step.execution < 0) return;
  const IndexedExecution& e = index_.executions()[step.execution];
  const IndexedUnit& unit = index_.units()[e.unit];
  UnitState& state = state_of(e.unit);
  const std::string scope = unit.pm ? "one correlation value" : "one key";
  SEQBY_CHECK(!unit.open.empty() && unit.open.back() == step.execution);
  SEQBY_CHECK(e.enter == step.position);

  // A node under a stale generation may enter one event only: the later of the event it had in
  // flight and the event it last read while the generation was current (a process manager whose
  // event failed on one stream reads the next one on another before it goes stale), else, with
  // neither recorded, the first it enters.
  std::optional<std::uint64_t> stale;
  if (r.generation > 0) {
    stale = index_.stale_point(unit, r.generation, &r.node);
    SEQBY_CHECK(e.lease_current == !stale);
    NodeGeneration& ng = state.node_generations[{r.node, r.generation}];
    if (stale) {
      if (ng.allowed == kNoPosition) {
        const bool read_later =
            ng.last_read != kNoPosition &&
            (ng.in_flight == kNoPosition ||
             index_.record(ng.last_read).index > index_.record(ng.in_flight).index);
        ng.allowed = read_later                    ? ng.last_read
                     : ng.in_flight != kNoPosition ? ng.in_flight
                                                   : e.enter;
      }
      const HistoryRecord& allowed = index_.record(ng.allowed);
      if (!same_event(allowed, r)) {
        findings_.violation(property_, unit.category, unit.key, unit.group,
                            {allowed.index, *stale, r.index},
                            r.node + " entered " + describe(e) + " on " + index_.where(unit) +
                                ", a generation that record #" + std::to_string(*stale) +
                                " had ended: a stale owner may finish only the event it had in "
                                "flight or had read under its lease (" +
                                allowed.event_id + ") and must never enter a next one.");
      }
    }
    ng.in_flight = e.enter;
  }

  // Overlaps with the unit's other open executions (every one but the new, last one) of other
  // events.
  for (std::size_t i = 0; i + 1 < unit.open.size(); ++i) {
    const IndexedExecution& other = index_.executions()[unit.open[i]];
    const HistoryRecord& other_enter = index_.record(other.enter);
    SEQBY_CHECK(other.enter < e.enter && other.end == kNoPosition);
    if (same_event(other_enter, r)) continue;  // a re-run of one event: allowed
    const std::optional<std::uint64_t> found =
        other_enter.generation > 0
            ? index_.stale_point(unit, other_enter.generation, &other_enter.node)
            : std::nullopt;
    const bool other_stale = found.has_value();
    const std::uint64_t other_point = found.value_or(0);
    if (!stale && !other_stale) {
      findings_.violation(
          property_, unit.category, unit.key, unit.group, {other_enter.index, r.index},
          describe(other) + " and " + describe(e) + " were in the handler at once on " +
              index_.where(unit) + ", both under a valid lease: two different events of " + scope +
              " must never overlap.");
      continue;
    }
    std::vector<std::uint64_t> witnesses{other_enter.index, r.index};
    if (stale) witnesses.push_back(*stale);
    if (other_stale) witnesses.push_back(other_point);
    const std::string stale_side =
        other_stale ? describe(other) + " (stale since #" + std::to_string(other_point) + ")"
                    : describe(e) + " (stale since #" + std::to_string(*stale) + ")";
    findings_.stale_overlap(property_, unit, witnesses,
                            describe(other) + " and " + describe(e) + " overlapped on " +
                                index_.where(unit) + ", but " + stale_side +
                                " had already lost the lease: the admitted residue, as long as "
                                "it never commits.");
    std::sort(witnesses.begin(), witnesses.end());
    auto remember = [&](int execution) {
      const std::uint64_t enter_index = index_.record(index_.executions()[execution].enter).index;
      for (const StaleExecution& known : state.stale) {
        if (index_.record(index_.executions()[known.execution].enter).index == enter_index) return;
      }
      state.stale.push_back(StaleExecution{execution, witnesses, false});
    };
    if (other_stale) remember(unit.open[i]);
    if (stale) remember(step.execution);
  }
}

void ExclusionChecker::on_commit(const HistoryRecord& r, const IndexedStep& step) {
  if (step.unit < 0 || step.seq < 1) return;
  const IndexedUnit& unit = index_.units()[step.unit];
  for (StaleExecution& known : state_of(step.unit).stale) {
    const IndexedExecution& e = index_.executions()[known.execution];
    const HistoryRecord& enter = index_.record(e.enter);
    const bool same = r.event_id.empty() ? e.seq == step.seq && enter.category == r.category
                                         : same_event(enter, r);
    if (known.committed || enter.node != r.node || enter.generation != r.generation || !same) {
      continue;
    }
    // Stale no more: the acquire that ended its tenure was undone by a lossy failover, and the
    // surviving state has it holding the lease again.
    if (!index_.stale_point(unit, enter.generation, &enter.node)) continue;
    known.committed = true;
    std::vector<std::uint64_t> witnesses = known.witnesses;
    witnesses.push_back(r.index);
    findings_.violation(property_, unit.category, unit.key, unit.group, std::move(witnesses),
                        "the stale execution of " + describe(e) + " on " + index_.where(unit) +
                            " overlapped another event's execution and then got an accepted "
                            "commit: a stale execution must never commit.");
  }
}

}  // namespace seqby::properties::detail
