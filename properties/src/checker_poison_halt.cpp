// poison_halt: no accepted commit of a seq after an unresolved poison event of its key; a dlq
// only by an operator; and, when asked, a lane that reached its poison head recorded a halt on it
// (not by default: a run may end while the engine still spends its retries on the head).
#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {

void PoisonHaltChecker::on_commit(const HistoryRecord& r, const IndexedStep& step) {
  if (step.seq < 1) return;
  SEQBY_CHECK(step.lane >= 0);  // the index gives every commit naming a seq its lane
  const IndexedLane& lane = index_.lanes()[step.lane];
  const std::int64_t head = index_.poison_head(lane);
  if (head == 0 || step.seq <= head) return;
  findings_.violation(Property::poison_halt, r.category, r.key, r.group,
                      {index_.streams()[lane.stream].events[head - 1].index, r.index},
                      index_.describe_event(lane.stream, step.seq) + " was committed although " +
                          index_.describe_event(lane.stream, head) +
                          " before it is an unresolved poison event: a halted partition must not "
                          "advance past its head.");
}

void PoisonHaltChecker::on_dlq(const HistoryRecord& r) {
  if (detail_starts_with_word(r.detail, kOperatorToken)) return;
  findings_.violation(Property::poison_halt, r.category, r.key, r.group, {r.index},
                      "event " + r.event_id + " of " + r.category + ":" + r.key +
                          " was moved to the DLQ" +
                          (r.detail.empty() ? "" : " by '" + r.detail + "'") +
                          " rather than by an operator: a poison head stays put until an "
                          "operator acts.");
}

// A lane whose commits are not what should commit is no_loss's to explain; only a lane that got
// exactly its due commits and stopped at a poison head must show the halt.
void PoisonHaltChecker::finish(bool require_halt_record) {
  if (!require_halt_record || !findings_.enabled(Property::poison_halt)) return;
  for (std::size_t stream_id = 0; stream_id < index_.streams().size(); ++stream_id) {
    const IndexedStream& stream = index_.streams()[stream_id];
    if (stream.events.empty()) continue;
    auto groups = index_.category_groups().find(stream.category);
    if (groups == index_.category_groups().end()) continue;
    for (const std::string& group : groups->second) {
      const int lane_id = index_.find_lane(stream.category, stream.key, group);
      SEQBY_CHECK(lane_id >= 0);  // the complete index has a lane for each group of the category
      const IndexedLane& lane = index_.lanes()[lane_id];
      const DueCommits due = due_commits(index_, lane);
      if (!due.met || due.poison_head == 0 || lane.halted_seqs.count(due.poison_head) > 0) {
        continue;
      }
      std::vector<std::uint64_t> witnesses{stream.events[due.poison_head - 1].index};
      if (!lane.commits.empty()) witnesses.push_back(lane.commits.back().index);
      findings_.violation(
          Property::poison_halt, stream.category, stream.key, group, std::move(witnesses),
          stream.category + ":" + stream.key + " (group " + group + ") reached its poison head " +
              index_.describe_event(static_cast<int>(stream_id), due.poison_head) +
              " but never recorded a halt on it: a halt must be visible.");
    }
  }
}

}  // namespace seqby::properties::detail
