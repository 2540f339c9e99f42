// fence: every accepted read, renew, ack and commit is under a generation its node acquired on
// its unit, with no later generation acquired and that generation not released before it; the
// generations of a unit strictly increase across acquires. Generation 0 means no lease. An acquire
// a lossy failover undid (history_index.h) ends its tenure there and counts for neither rule after.
#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {

void FenceChecker::on_acquire(const HistoryRecord& r, const IndexedStep& step) {
  if (step.unit < 0) return;
  const IndexedUnit& unit = index_.units()[step.unit];
  SEQBY_CHECK(!unit.acquires.empty() && unit.acquires.back().index == r.index);
  if (r.generation == 0) {
    findings_.violation(Property::fence, unit.category, unit.key, unit.group, {r.index},
                        r.node + " acquired the lease of " + index_.where(unit) +
                            " without a generation: every acquire must take a new, higher "
                            "generation.");
  }
  const IndexedAcquire* highest = nullptr;
  for (std::size_t i = 0; i + 1 < unit.acquires.size(); ++i) {  // every acquire before this one
    const IndexedAcquire& previous = unit.acquires[i];
    if (previous.undone_at == 0 && previous.generation >= r.generation &&
        (highest == nullptr || previous.generation > highest->generation)) {
      highest = &previous;
    }
  }
  if (highest != nullptr) {
    findings_.violation(Property::fence, unit.category, unit.key, unit.group,
                        {highest->index, r.index},
                        r.node + " acquired generation " + std::to_string(r.generation) + " of " +
                            index_.where(unit) + ", which does not exceed generation " +
                            std::to_string(highest->generation) + " acquired by " + highest->node +
                            " before: generations must strictly increase and never repeat.");
  }
}

void FenceChecker::on_step(const HistoryRecord& r, const IndexedStep& step) {
  if (step.unit < 0) return;
  const IndexedUnit& unit = index_.units()[step.unit];
  auto what = [&] {
    return std::string(history_op_name(r.op)) + " by " + r.node +
           (r.event_id.empty() ? "" : " of event " + r.event_id) + " on " + index_.where(unit);
  };
  if (r.generation == 0) {
    findings_.violation(Property::fence, unit.category, unit.key, unit.group, {r.index},
                        what() +
                            " was accepted under no lease generation: every read, ack and commit "
                            "must be made under the generation holding the lease.");
    return;
  }
  const IndexedAcquire* acquire = nullptr;
  for (auto it = unit.acquires.rbegin(); it != unit.acquires.rend(); ++it) {
    if (it->generation == r.generation) {
      acquire = &*it;
      break;
    }
  }
  if (acquire == nullptr) {
    findings_.violation(Property::fence, unit.category, unit.key, unit.group, {r.index},
                        what() + " was accepted under generation " + std::to_string(r.generation) +
                            ", but no acquire of that generation precedes it.");
    return;
  }
  if (acquire->node != r.node) {
    findings_.violation(Property::fence, unit.category, unit.key, unit.group,
                        {acquire->index, r.index},
                        what() + " was accepted under generation " + std::to_string(r.generation) +
                            ", which " + acquire->node + " had acquired, not " + r.node + ".");
    return;
  }
  const std::optional<std::uint64_t> stale = index_.stale_point(unit, r.generation, &r.node);
  if (stale) {
    findings_.violation(Property::fence, unit.category, unit.key, unit.group,
                        {acquire->index, *stale, r.index},
                        what() + " was accepted under generation " + std::to_string(r.generation) +
                            " after record #" + std::to_string(*stale) +
                            (acquire->undone_at == *stale
                                 ? ", a lossy failover that undid its acquire, ended that "
                                   "generation: a stale owner's steps must be refused."
                                 : " ended that generation (a later acquire or its release): a "
                                   "stale owner's steps must be refused."));
  }
}

}  // namespace seqby::properties::detail
