// order: per lane, accepted commits take seqs in publish order, each at most once, with no gap
// (seq k only after k-1 was committed or resolved by an operator); an accepted ack of seq k while
// an earlier seq was neither acked nor resolved is a violation, a repeated ack is not. A publish a
// lossy failover undid may still be committed (by an owner that had read it), in order, and needs
// no ack.
#include <algorithm>

#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {

OrderChecker::LaneState& OrderChecker::advance(int lane_id) {
  SEQBY_CHECK(lane_id >= 0 && static_cast<std::size_t>(lane_id) < index_.lanes().size());
  if (lanes_.size() <= static_cast<std::size_t>(lane_id)) lanes_.resize(lane_id + 1);
  LaneState& state = lanes_[lane_id];
  const IndexedLane& lane = index_.lanes()[lane_id];
  const std::size_t published = index_.streams()[lane.stream].events.size();
  if (state.committed.size() < published) {
    state.committed.resize(published, 0);
    state.commit_index.resize(published, 0);
    state.acked.resize(published, 0);
  }
  const auto size = static_cast<std::int64_t>(state.committed.size());
  while (state.commit_next <= size &&
         (state.committed[state.commit_next - 1] || index_.resolved(lane, state.commit_next))) {
    ++state.commit_next;
  }
  const std::vector<IndexedEvent>& events = index_.streams()[lane.stream].events;
  // A lost publish (a lossy failover undid it) has no entry left to ack.
  while (state.ack_next <= size &&
         (state.acked[state.ack_next - 1] || index_.resolved(lane, state.ack_next) ||
          events[state.ack_next - 1].lost)) {
    ++state.ack_next;
  }
  return state;
}

void OrderChecker::on_commit(const HistoryRecord& r, const IndexedStep& step) {
  if (step.seq < 1) return;
  SEQBY_CHECK(step.lane >= 0);  // the index gives every commit naming a seq its lane
  const IndexedLane& lane = index_.lanes()[step.lane];
  SEQBY_CHECK(!lane.commits.empty() && lane.commits.back().index == r.index);
  const std::int64_t seq = step.seq;
  const auto published = static_cast<std::int64_t>(index_.streams()[lane.stream].events.size());
  if (seq > published) {
    findings_.violation(Property::order, r.category, r.key, r.group, {r.index},
                        "seq " + std::to_string(seq) + " was committed by " + r.node +
                            ", but only " + std::to_string(published) +
                            " events had been published on " + r.category + ":" + r.key + ".");
    return;  // nothing to mark: the seq names no event (and may be absurdly large)
  }
  LaneState& state = advance(step.lane);
  if (state.committed[seq - 1]) {
    findings_.violation(
        Property::order, r.category, r.key, r.group, {state.commit_index[seq - 1], r.index},
        index_.describe_event(lane.stream, seq) + " was committed twice (by " + r.node +
            " the second time): each event's effect must be accepted at most "
            "once.");
    return;
  }
  if (seq != state.commit_next) {
    std::vector<std::uint64_t> witnesses{r.index};
    if (state.commit_next <= published) {
      witnesses.push_back(index_.streams()[lane.stream].events[state.commit_next - 1].index);
    }
    findings_.violation(Property::order, r.category, r.key, r.group, std::move(witnesses),
                        index_.describe_event(lane.stream, seq) + " was committed by " + r.node +
                            " before " + index_.describe_event(lane.stream, state.commit_next) +
                            " had been: accepted commits must follow publish order with no gap.");
  }
  state.committed[seq - 1] = 1;
  state.commit_index[seq - 1] = r.index;
  advance(step.lane);
}

void OrderChecker::on_ack(const HistoryRecord& r, const IndexedStep& step) {
  if (step.seq < 1) return;
  SEQBY_CHECK(step.lane >= 0);  // the index gives every ack naming a seq its lane
  const std::int64_t seq = step.seq;
  const IndexedLane& lane = index_.lanes()[step.lane];
  LaneState& state = advance(step.lane);
  if (seq <= static_cast<std::int64_t>(state.acked.size()) && state.acked[seq - 1]) return;
  const std::vector<IndexedEvent>& events = index_.streams()[lane.stream].events;
  // An ack of an event whose commit a lossy failover undid, before it was committed again: a
  // retry after a lost reply or an ack in flight across the failover, decided by an engine that
  // had committed it (in order then). Not judged for order; no_loss judges what it cost.
  if (!step.acks_undone_commit && state.ack_next < seq &&
      state.ack_next <= static_cast<std::int64_t>(events.size())) {
    findings_.violation(
        Property::order, r.category, r.key, r.group, {events[state.ack_next - 1].index, r.index},
        "the ack of " + index_.describe_event(lane.stream, seq) + " by " + r.node +
            " was accepted while " + index_.describe_event(lane.stream, state.ack_next) +
            " had been neither acked nor skipped by an operator: acks must "
            "follow publish order.");
  }
  if (seq <= static_cast<std::int64_t>(state.acked.size())) state.acked[seq - 1] = 1;
  advance(step.lane);
}

void OrderChecker::on_undo(const std::vector<int>& lanes) {
  // Commits are made again from what the index still holds. Acks are not: the ack order judges
  // the engines' acks, and an ack the failover undid was made in order (its entry is pending
  // again, to be delivered and acked once more).
  for (const int lane_id : lanes) {
    LaneState& state = advance(lane_id);
    std::fill(state.committed.begin(), state.committed.end(), 0);
    std::fill(state.commit_index.begin(), state.commit_index.end(), 0);
    state.commit_next = 1;
    const auto size = static_cast<std::int64_t>(state.committed.size());
    for (const IndexedCommit& commit : index_.lanes()[lane_id].commits) {
      if (commit.seq > size || state.committed[commit.seq - 1]) continue;
      state.committed[commit.seq - 1] = 1;
      state.commit_index[commit.seq - 1] = commit.index;
    }
    advance(lane_id);
  }
}

}  // namespace seqby::properties::detail
