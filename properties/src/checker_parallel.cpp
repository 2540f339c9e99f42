// parallel: if two or more nodes acquired leases and two or more keys had executions, some
// executions of different keys overlap. For a process manager a key is a correlation value.
#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {

void ParallelChecker::on_enter(const IndexedStep& step) {
  if (step.execution < 0) return;
  const int spot = index_.executions()[step.execution].spot;
  if (open_by_spot_.size() < index_.spots().size()) open_by_spot_.resize(index_.spots().size(), 0);
  if (open_by_spot_[spot] == 0) {
    if (spots_open_ > 0) seen_ = true;  // another key has an execution open: they overlap
    ++spots_open_;
  }
  ++open_by_spot_[spot];
}

void ParallelChecker::on_ended(const std::vector<int>& executions) {
  for (int id : executions) {
    const int spot = index_.executions()[id].spot;
    SEQBY_CHECK(static_cast<std::size_t>(spot) < open_by_spot_.size());
    SEQBY_CHECK(open_by_spot_[spot] > 0);  // paired with on_enter's count
    if (--open_by_spot_[spot] == 0) --spots_open_;
    SEQBY_CHECK(spots_open_ >= 0);
  }
}

void ParallelChecker::finish(PropertyStatus& status) {
  if (!findings_.enabled(Property::parallel)) {
    status.note = "skipped";
    return;
  }
  const auto& nodes = index_.lease_nodes();
  const auto& spots = index_.spots();
  if (nodes.size() < 2 || spots.size() < 2) {
    status.note = "not applicable: " + std::to_string(nodes.size()) +
                  " node(s) acquired leases and " + std::to_string(spots.size()) +
                  " key(s) had executions";
    return;
  }
  status.checked = true;
  if (seen_) return;
  findings_.violation(
      Property::parallel, "", "", "",
      {nodes[0].second, nodes[1].second, spots[0].first_enter_index, spots[1].first_enter_index},
      nodes[0].first + " and " + nodes[1].first + " held leases and " +
          std::to_string(spots.size()) + " keys had work (" + spots[0].label + ", " +
          spots[1].label +
          ", ...), yet no two executions of different keys ever overlapped: "
          "processing was serialized across keys.");
}

}  // namespace seqby::properties::detail
