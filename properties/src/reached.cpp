// count_reached (reached.h): one pass over the history index, one rule per situation.
#include "seqby/properties/reached.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

#include "seqby/core/check.h"
#include "seqby/properties/history_index.h"

namespace seqby::properties {
namespace {

constexpr std::array<Reached, kReachedCount> kAll = {
    Reached::stale_owner_refused,
    Reached::reclaim_moved,
    Reached::commit_reply_lost,
    Reached::rerun_after_failover,
    Reached::halt_resolved_by_skip,
    Reached::halt_resolved_by_dlq,
    Reached::reap_raced_publish,
    Reached::pm_switched_streams,
    Reached::instances_in_parallel,
    Reached::same_owner_two_generations,
    Reached::reap_refused_for_other_group,
};

// The lost-reply commit the engine records (core/src/engine_context.cpp).
constexpr std::string_view kCommitAfterLostReply = "accepted after a lost reply";

bool is_fenced_refusal(HistoryOp op) {
  return op == HistoryOp::read_fenced || op == HistoryOp::ack_fenced ||
         op == HistoryOp::commit_fenced;
}

// The N of a reclaim's "count=N" detail (0 when absent).
std::uint64_t reclaim_count(const std::string& detail) {
  const std::size_t at = detail.find("count=");
  if (at == std::string::npos) return 0;
  return std::strtoull(detail.c_str() + at + 6, nullptr, 10);
}

}  // namespace

const char* reached_name(Reached what) {
  switch (what) {
    case Reached::stale_owner_refused:
      return "stale_owner_refused";
    case Reached::reclaim_moved:
      return "reclaim_moved";
    case Reached::commit_reply_lost:
      return "commit_reply_lost";
    case Reached::rerun_after_failover:
      return "rerun_after_failover";
    case Reached::halt_resolved_by_skip:
      return "halt_resolved_by_skip";
    case Reached::halt_resolved_by_dlq:
      return "halt_resolved_by_dlq";
    case Reached::reap_raced_publish:
      return "reap_raced_publish";
    case Reached::pm_switched_streams:
      return "pm_switched_streams";
    case Reached::instances_in_parallel:
      return "instances_in_parallel";
    case Reached::same_owner_two_generations:
      return "same_owner_two_generations";
    case Reached::reap_refused_for_other_group:
      return "reap_refused_for_other_group";
  }
  return "?";
}

const std::array<Reached, kReachedCount>& all_reached() { return kAll; }

void ReachedCounts::merge(const ReachedCounts& other) {
  for (std::size_t i = 0; i < kReachedCount; ++i) counts[i] += other.counts[i];
}

ReapRaces count_reap_races(const std::vector<HistoryRecord>& history) {
  ReapRaces out;
  std::map<std::string, std::uint64_t> reaped_after;  // "C:K" -> publisher time before its reap
  std::uint64_t last_publish_ms = 0;
  for (const HistoryRecord& r : history) {
    if (r.op != HistoryOp::reap && r.op != HistoryOp::publish) continue;
    const std::string stream = r.category + ":" + r.key;
    if (r.op == HistoryOp::reap) {
      ++out.reaps;
      reaped_after[stream] = last_publish_ms;
    }
    if (r.op != HistoryOp::publish) continue;
    last_publish_ms = r.time_ms;
    auto it = reaped_after.find(stream);
    if (it == reaped_after.end()) continue;
    const std::uint64_t bound_ms = r.time_ms - std::min(r.time_ms, it->second);
    out.closest_ms = std::min(out.closest_ms, bound_ms);
    if (bound_ms <= kReapRaceWindowMs) ++out.raced;
    reaped_after.erase(it);
  }
  return out;
}

std::uint64_t count_reap_waits(const std::vector<HistoryRecord>& history) {
  // Per stream C:K, its last entry and, per group, when it read and acked that entry.
  struct Steps {
    std::optional<std::uint64_t> read_ms;
    std::optional<std::uint64_t> ack_ms;
  };
  struct Stream {
    std::string last_entry;
    std::map<std::string, Steps> by_group;
  };
  std::map<std::string, Stream, std::less<>> streams;  // by C \x1f K
  std::string id;                                      // the record's C \x1f K, one buffer
  std::uint64_t waits = 0;
  for (const HistoryRecord& r : history) {
    if (r.category.empty()) continue;
    if (r.op != HistoryOp::publish && r.op != HistoryOp::read && r.op != HistoryOp::ack &&
        r.op != HistoryOp::reap) {
      continue;
    }
    id.assign(r.category).append(1, '\x1f').append(r.key);
    auto found = streams.find(id);
    if (found == streams.end()) found = streams.emplace(id, Stream{}).first;
    Stream& stream = found->second;
    switch (r.op) {
      case HistoryOp::publish:
        stream.last_entry = r.event_id;
        stream.by_group.clear();
        break;
      case HistoryOp::read:
        if (r.event_id == stream.last_entry) {
          Steps& steps = stream.by_group[r.group];
          if (!steps.read_ms) steps.read_ms = r.time_ms;
        }
        break;
      case HistoryOp::ack:
        if (r.event_id == stream.last_entry) {
          Steps& steps = stream.by_group[r.group];
          if (!steps.ack_ms) steps.ack_ms = r.time_ms;
        }
        break;
      case HistoryOp::reap: {
        const std::size_t at = r.detail.find("idle_ms=");
        const auto own = stream.by_group.find(r.group);
        if (at != std::string::npos && own != stream.by_group.end() && own->second.ack_ms) {
          const std::uint64_t due_ms =
              *own->second.ack_ms + std::strtoull(r.detail.c_str() + at + 8, nullptr, 10);
          for (const auto& [group, steps] : stream.by_group) {
            if (group != r.group && steps.read_ms && steps.ack_ms && *steps.read_ms <= due_ms &&
                *steps.ack_ms > due_ms) {
              ++waits;
              break;
            }
          }
        }
        streams.erase(found);
        break;
      }
      default:
        break;
    }
  }
  return waits;
}

ReachedCounter::ReachedCounter(const HistoryIndex& index) : index_(index) {}

void ReachedCounter::reach(Reached what) { ++counts_.counts[static_cast<std::size_t>(what)]; }

void ReachedCounter::on_step(const IndexedStep& step) {
  const HistoryIndex& index = index_;
  const HistoryRecord& r = index.record(step.position);
  // A lease unit: a lane, or a process manager's (group, correlation value) in every category.
  // Made only for the few records that need it (acquires, refusals and losses).
  const auto unit_key = [&] {
    const bool pm = index.process_managers().count(r.group) > 0;
    return std::make_tuple(pm ? std::string() : r.category, r.key, r.group);
  };
  if (r.op == HistoryOp::acquire) {
    std::uint64_t& newest = newest_generation_[unit_key()];
    newest = std::max(newest, r.generation);
    std::uint64_t& owners = newest_of_owner_[{unit_key(), r.node}];
    owners = std::max(owners, r.generation);
  }
  if ((is_fenced_refusal(r.op) || r.op == HistoryOp::lose) && r.generation > 0) {
    const auto own = newest_of_owner_.find({unit_key(), r.node});
    if (own != newest_of_owner_.end() && own->second > r.generation) {
      reach(Reached::same_owner_two_generations);
    }
  }
  if (is_fenced_refusal(r.op)) {
    const auto newest = newest_generation_.find(unit_key());
    if (newest != newest_generation_.end() && newest->second > r.generation) {
      reach(Reached::stale_owner_refused);
    }
  }
  if (r.op == HistoryOp::reclaim && reclaim_count(r.detail) > 0) reach(Reached::reclaim_moved);
  if (r.op == HistoryOp::commit && r.detail == kCommitAfterLostReply) {
    reach(Reached::commit_reply_lost);
  }
  if (r.op == HistoryOp::halt) halted_.insert({r.category, r.key, r.group});
  if ((r.op == HistoryOp::skip || r.op == HistoryOp::dlq) &&
      halted_.erase({r.category, r.key, r.group}) > 0) {
    reach(r.op == HistoryOp::skip ? Reached::halt_resolved_by_skip : Reached::halt_resolved_by_dlq);
  }
  if (r.op != HistoryOp::enter || step.execution < 0) return;
  const IndexedExecution& execution = index.executions()[static_cast<std::size_t>(step.execution)];
  const IndexedUnit& unit = index.units()[static_cast<std::size_t>(execution.unit)];
  auto [first, fresh] =
      entered_.try_emplace(std::make_pair(execution.unit, r.event_id), r.generation);
  if (!fresh && r.generation > first->second) {
    reach(Reached::rerun_after_failover);
    first->second = r.generation;
  }
  if (unit.pm) {
    auto [last, first_enter] = last_stream_of_unit_.emplace(execution.unit, execution.stream);
    if (!first_enter && last->second != execution.stream) reach(Reached::pm_switched_streams);
    last->second = execution.stream;
  }
  for (const IndexedUnit& other : index.units()) {
    const bool another_inside = std::any_of(other.open.begin(), other.open.end(), [&](int e) {
      const IndexedExecution& open = index.executions()[static_cast<std::size_t>(e)];
      return open.spot != execution.spot && index.record(open.enter).node != r.node;
    });
    if (another_inside) {
      reach(Reached::instances_in_parallel);
      break;
    }
  }
}

ReachedCounts ReachedCounter::finish(const std::vector<HistoryRecord>& history) const {
  ReachedCounts out = counts_;
  const ReapRaces races = count_reap_races(history);
  out.counts[static_cast<std::size_t>(Reached::reap_raced_publish)] = races.raced;
  out.counts[static_cast<std::size_t>(Reached::reap_refused_for_other_group)] =
      count_reap_waits(history);
  return out;
}

ReachedCounts count_reached(const std::vector<HistoryRecord>& history) {
  HistoryIndex index(history);
  ReachedCounter counter(index);
  while (!index.complete()) counter.on_step(index.add());
  return counter.finish(history);
}

}  // namespace seqby::properties
