// no_loss, judged at the end of the history: each lane's accepted commits are exactly seqs 1..n
// in order, n before the lowest unresolved poison event and before the first event whose publish a
// lossy failover undid (its entry, or the key's place in the index) and that was not committed
// anyway, less the events an operator skipped or dlq'd; a category with events but no group is a
// violation.
#include "checker_internal.h"
#include "seqby/core/check.h"

namespace seqby::properties::detail {

DueCommits due_commits(const HistoryIndex& index, const IndexedLane& lane) {
  DueCommits due;
  due.poison_head = index.poison_head(lane);
  const auto published = static_cast<std::int64_t>(index.streams()[lane.stream].events.size());
  const std::int64_t last = due.poison_head > 0 ? due.poison_head - 1 : published;
  const std::vector<IndexedEvent>& events = index.streams()[lane.stream].events;
  for (std::int64_t seq = 1; seq <= last; ++seq) {
    // A publish a lossy failover undid, or an event acked after the failover undid its commit
    // (the ack took the entry the failover put back), is owed no commit; an owner that had it may
    // still commit it, and a numbered sink accepts nothing after it otherwise.
    // So is a stream a lossy failover brought back after its reap, from its first uncommitted seq,
    // and one whose key a lossy failover took out of the index again.
    const IndexedStream& stream = index.streams()[lane.stream];
    if ((events[seq - 1].lost || lane.acked_uncommitted.count(seq) > 0 ||
         (lane.stranded_from > 0 && seq >= lane.stranded_from) || stream.unindexed_at != 0) &&
        !has_commit(lane, seq)) {
      break;
    }
    if (!index.resolved(lane, seq)) due.expected.push_back(seq);
  }
  const std::vector<IndexedCommit>& actual = lane.commits;
  while (due.agreed < due.expected.size() && due.agreed < actual.size() &&
         due.expected[due.agreed] == actual[due.agreed].seq) {
    ++due.agreed;
  }
  due.met = due.agreed == due.expected.size() && due.agreed == actual.size();
  return due;
}

void NoLossChecker::finish() {
  if (!findings_.enabled(Property::no_loss)) return;
  const std::optional<std::size_t> liveness = index_.liveness_marker();
  const std::string after_liveness = liveness
                                         ? " by the end of the history (liveness phase from #" +
                                               std::to_string(index_.record(*liveness).index) + ")"
                                         : " by the end of the history";

  for (std::size_t stream_id = 0; stream_id < index_.streams().size(); ++stream_id) {
    const IndexedStream& stream = index_.streams()[stream_id];
    if (stream.events.empty()) continue;
    auto groups = index_.category_groups().find(stream.category);
    if (groups == index_.category_groups().end()) {
      findings_.violation(
          Property::no_loss, stream.category, stream.key, "", {stream.events[0].index},
          std::to_string(stream.events.size()) + " events were published on " + stream.category +
              ":" + stream.key + " but no handler group ever worked on category " +
              stream.category + ".");
      continue;
    }
    const auto describe = [&](std::int64_t seq) {
      return index_.describe_event(static_cast<int>(stream_id), seq);
    };
    for (const std::string& group : groups->second) {
      const int lane_id = index_.find_lane(stream.category, stream.key, group);
      SEQBY_CHECK(lane_id >= 0);  // the complete index has a lane for each group of the category
      const IndexedLane& lane = index_.lanes()[lane_id];
      const DueCommits due = due_commits(index_, lane);
      if (due.met) continue;
      const std::vector<std::int64_t>& expected = due.expected;
      const std::vector<IndexedCommit>& actual = lane.commits;
      const std::size_t i = due.agreed;
      const std::string where = stream.category + ":" + stream.key + " (group " + group + ")";
      std::vector<std::uint64_t> witnesses;
      std::string explanation;
      if (i < expected.size()) witnesses.push_back(stream.events[expected[i] - 1].index);
      if (i < actual.size()) witnesses.push_back(actual[i].index);
      if (i >= actual.size()) {
        std::vector<std::uint8_t> committed(stream.events.size(), 0);
        for (const IndexedCommit& commit : actual) {
          if (commit.published) committed[commit.seq - 1] = 1;
        }
        std::size_t missing = 0;
        for (std::int64_t seq : expected) missing += committed[seq - 1] ? 0 : 1;
        if (i > 0) witnesses.push_back(actual[i - 1].index);
        if (liveness) witnesses.push_back(index_.record(*liveness).index);
        explanation = describe(expected[i]) + " on " + where + " was never committed" +
                      after_liveness + "; " + std::to_string(missing) + " of " +
                      std::to_string(expected.size()) + " events that should commit are missing.";
      } else if (i >= expected.size()) {
        explanation =
            "the commits on " + where +
            " go beyond what should commit: " + describe(actual[i].seq) +
            " was committed after all " + std::to_string(expected.size()) + " expected events" +
            (due.poison_head > 0
                 ? " (it lies behind poison head seq " + std::to_string(due.poison_head) + ")"
                 : "") +
            ".";
      } else {
        explanation = "the final state of " + where +
                      " differs from applying its events in publish order: commit number " +
                      std::to_string(i + 1) + " applied " + describe(actual[i].seq) + " where " +
                      describe(expected[i]) + " was due.";
      }
      findings_.violation(Property::no_loss, stream.category, stream.key, group,
                          std::move(witnesses), std::move(explanation));
    }
  }
}

}  // namespace seqby::properties::detail
