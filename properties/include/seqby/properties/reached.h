// What a run reached: situations the design must survive, counted from its history in the spirit
// of "sometimes" assertions (Antithesis, FoundationDB's TEST macros): a campaign where one never
// happened tested nothing about it, and says so (`reached never: ...`), as it does for faults that
// never fired. Counting judges nothing: the property checker (checker.h) does that.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "seqby/core/history.h"

namespace seqby::properties {

enum class Reached : std::uint8_t {
  stale_owner_refused,    // a step (read, ack, commit) refused FENCED under a generation that a
                          // later acquire of its unit had already replaced
  reclaim_moved,          // a reclaim moved at least one pending entry of an older consumer
  commit_reply_lost,      // a commit accepted whose reply was lost (found again on a retry)
  rerun_after_failover,   // an event entered again under a newer generation of its unit (the
                          // at-least-once residue of a failover)
  halt_resolved_by_skip,  // an operator's skip of a halted head
  halt_resolved_by_dlq,   // an operator's move of a halted head to the DLQ
  reap_raced_publish,     // a publish re-created its key within kReapRaceWindowMs of its reap
  pm_switched_streams,    // a process manager went from one category's stream of a correlation
                          // value to another's between two events
  instances_in_parallel,  // an instance entered a key while another instance was inside a
                          // different key
  // Appended, so the situations above keep their indices:
  same_owner_two_generations,    // a step refused (read, ack, commit FENCED, or a lost renew)
                                 // under generation N of a unit after the SAME owner id had
                                 // acquired it at a newer generation (a replacement process with
                                 // one --owner-id, or an acquire whose reply was lost)
  reap_refused_for_other_group,  // a partition was reaped by group G only after another group
                                 // acked its last entry, which that group had been delivered
                                 // before G had been idle past its reap time since its own ack
                                 // of it: G's reaps in between were refused for the other group
                                 // (count_reap_waits)
};
inline constexpr std::size_t kReachedCount = 11;

const char* reached_name(Reached what);
// Every situation, in declaration order.
const std::array<Reached, kReachedCount>& all_reached();

// "Close to a reap": a publish of the reaped key within this many milliseconds of the reap.
inline constexpr std::uint64_t kReapRaceWindowMs = 100;

struct ReachedCounts {
  std::array<std::uint64_t, kReachedCount> counts{};
  std::uint64_t count(Reached what) const { return counts[static_cast<std::size_t>(what)]; }
  void merge(const ReachedCounts& other);
};

ReachedCounts count_reached(const std::vector<HistoryRecord>& history);

class HistoryIndex;
struct IndexedStep;

// count_reached one step at a time, beside another pass over the same HistoryIndex (the
// checker's, with CheckOptions::reached), so that a campaign builds one index per history, not
// two: on_step after each HistoryIndex::add(), in order, then finish once the index is complete.
class ReachedCounter {
 public:
  explicit ReachedCounter(const HistoryIndex& index);
  void on_step(const IndexedStep& step);
  // The counts, with the two situations counted over the whole history (reap races and waits).
  ReachedCounts finish(const std::vector<HistoryRecord>& history) const;

 private:
  using UnitKey = std::tuple<std::string, std::string, std::string>;  // (C or "" for a pm, K, G)
  void reach(Reached what);

  const HistoryIndex& index_;
  ReachedCounts counts_;
  struct EnteredHash {
    std::size_t operator()(const std::pair<int, std::string>& k) const {
      return std::hash<std::string>{}(k.second) * 31 + static_cast<std::size_t>(k.first);
    }
  };
  // (unit, event) -> the generation it was last entered under (looked up, never iterated).
  std::unordered_map<std::pair<int, std::string>, std::uint64_t, EnteredHash> entered_;
  std::map<int, int> last_stream_of_unit_;  // pm unit -> stream last entered
  std::set<std::tuple<std::string, std::string, std::string>> halted_;  // lanes (C, K, G)
  std::map<UnitKey, std::uint64_t> newest_generation_;  // lease unit -> newest generation acquired
  // (lease unit, owner id) -> the newest generation that owner acquired of it.
  std::map<std::pair<UnitKey, std::string>, std::uint64_t> newest_of_owner_;
};

// Reaps and the publishes that raced them. Instances' clocks may be skewed (a swarm fault), the
// publisher's is global time and history order is the order the server decided things: a reap of
// K lies, in global time, between the publisher's record just before it and the next publish of
// K after it, and their distance bounds how far that publish landed from the reap.
struct ReapRaces {
  std::uint64_t reaps = 0;
  std::uint64_t raced = 0;           // publishes within kReapRaceWindowMs of their key's reap
  std::uint64_t closest_ms = ~0ull;  // the smallest bound seen (~0: no publish after a reap)
};
ReapRaces count_reap_races(const std::vector<HistoryRecord>& history);

// Reaps that had to wait for another group (Reached::reap_refused_for_other_group): a reap of C:K
// by group G with detail idle_ms=I, where G acked C:K's last entry at t, and another group H read
// that entry at or before t + I and acked it after t + I. A reap is tried once its worker has
// been idle for I, so the tries between t + I and H's ack found H's entry in flight and were
// refused. Times are the records' own (instance clocks), so this is a count of what a history
// shows, not a proof of each try; a refused reap followed by a publish is not counted.
std::uint64_t count_reap_waits(const std::vector<HistoryRecord>& history);

}  // namespace seqby::properties
