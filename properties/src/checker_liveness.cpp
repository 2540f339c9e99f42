// End-of-history judgements: no_loss (every lane committed exactly what it should, in order) and
// the visible-halt part of poison_halt (a lane that reached its poison head recorded a halt).
#include "checker_internal.h"

namespace seqby::properties::detail {

void Checker::judge_no_loss() {
  const bool judge_halts = require_halt_record_ && enabled(Property::poison_halt);
  if (!enabled(Property::no_loss) && !judge_halts) return;
  const std::string after_liveness =
      report_.counters.liveness_marker
          ? " by the end of the history (liveness phase from #" +
                std::to_string(report_.counters.liveness_marker_index) + ")"
          : " by the end of the history";

  for (std::size_t stream_id = 0; stream_id < streams_.size(); ++stream_id) {
    const Stream& stream = streams_[stream_id];
    if (stream.events.empty()) continue;
    auto groups = category_groups_.find(stream.category);
    if (groups == category_groups_.end()) {
      violation(Property::no_loss, stream.category, stream.key, "", {stream.events[0].index},
                std::to_string(stream.events.size()) + " events were published on " +
                    stream.category + ":" + stream.key +
                    " but no handler group ever worked on category " + stream.category + ".");
      continue;
    }
    for (const std::string& group : groups->second) {
      Lane& lane = lanes_[lane_of(stream.category, stream.key, group)];
      advance(lane);
      const std::int64_t head = poison_head(lane);
      const auto published = static_cast<std::int64_t>(stream.events.size());
      const std::int64_t last = head > 0 ? head - 1 : published;
      std::vector<std::int64_t> expected;
      for (std::int64_t seq = 1; seq <= last; ++seq) {
        if (!resolved(lane, seq)) expected.push_back(seq);
      }
      const std::vector<std::int64_t>& actual = lane.committed_order;
      std::size_t i = 0;
      while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
      const std::string where = stream.category + ":" + stream.key + " (group " + group + ")";
      if (i < expected.size() || i < actual.size()) {
        std::vector<std::uint64_t> witnesses;
        std::string explanation;
        if (i < expected.size()) witnesses.push_back(stream.events[expected[i] - 1].index);
        if (i < actual.size()) witnesses.push_back(lane.committed_order_index[i]);
        if (i >= actual.size()) {
          std::size_t missing = 0;
          for (std::int64_t seq : expected) missing += lane.committed[seq - 1] ? 0 : 1;
          if (i > 0) witnesses.push_back(lane.committed_order_index[i - 1]);
          if (report_.counters.liveness_marker) {
            witnesses.push_back(report_.counters.liveness_marker_index);
          }
          explanation = describe_event(static_cast<int>(stream_id), expected[i]) + " on " + where +
                        " was never committed" + after_liveness + "; " + std::to_string(missing) +
                        " of " + std::to_string(expected.size()) +
                        " events that should commit are missing.";
        } else if (i >= expected.size()) {
          explanation =
              "the commits on " + where + " go beyond what should commit: " +
              describe_event(static_cast<int>(stream_id), actual[i]) + " was committed after all " +
              std::to_string(expected.size()) + " expected events" +
              (head > 0 ? " (it lies behind poison head seq " + std::to_string(head) + ")" : "") +
              ".";
        } else {
          explanation = "the final state of " + where +
                        " differs from applying its events in publish order: commit number " +
                        std::to_string(i + 1) + " applied " +
                        describe_event(static_cast<int>(stream_id), actual[i]) + " where " +
                        describe_event(static_cast<int>(stream_id), expected[i]) + " was due.";
        }
        violation(Property::no_loss, stream.category, stream.key, group, std::move(witnesses),
                  std::move(explanation));
        continue;
      }
      if (judge_halts && head > 0 && lane.halted_seqs.count(head) == 0) {
        std::vector<std::uint64_t> witnesses{stream.events[head - 1].index};
        if (!lane.committed_order_index.empty()) {
          witnesses.push_back(lane.committed_order_index.back());
        }
        violation(Property::poison_halt, stream.category, stream.key, group, std::move(witnesses),
                  where + " reached its poison head " +
                      describe_event(static_cast<int>(stream_id), head) +
                      " but never recorded a halt on it: a halt must be visible.");
      }
    }
  }
}

}  // namespace seqby::properties::detail
