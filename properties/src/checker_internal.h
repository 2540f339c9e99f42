// Private to the checker: one small type per property, each fed the same HistoryIndex
// (history_index.h) record by record, each with its own state and its own explanation of a
// violation, and the Findings they all report into. check_history (checker.cpp) adds each record
// to the index, then hands it to the checkers that judge its op; the report is assembled there.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seqby/properties/checker.h"
#include "seqby/properties/history_index.h"

namespace seqby::properties::detail {

// Where every checker's violations and stale overlaps go: counted per property, listed up to the
// per-property limit, dropped for a property not judged.
class Findings {
 public:
  Findings(CheckReport& report, const std::array<bool, kPropertyCount>& enabled,
           std::size_t per_property_max)
      : report_(report), enabled_(enabled), per_property_max_(per_property_max) {}
  bool enabled(Property property) const { return enabled_[static_cast<std::size_t>(property)]; }
  void violation(Property property, const std::string& category, const std::string& key,
                 const std::string& group, std::vector<std::uint64_t> witnesses,
                 std::string explanation);
  void stale_overlap(Property property, const IndexedUnit& unit,
                     std::vector<std::uint64_t> witnesses, std::string explanation);

 private:
  CheckReport& report_;
  const std::array<bool, kPropertyCount>& enabled_;
  std::size_t per_property_max_;
  std::array<std::uint64_t, kPropertyCount> listed_{};
};

// order (checker_order.cpp): per lane, accepted commits and acks follow publish order.
class OrderChecker {
 public:
  OrderChecker(const HistoryIndex& index, Findings& findings)
      : index_(index), findings_(findings) {}
  void on_commit(const HistoryRecord& r, const IndexedStep& step);
  void on_ack(const HistoryRecord& r, const IndexedStep& step);
  // A lossy failover undid commits or acks of these lanes: their state is made again from what the
  // index still holds.
  void on_undo(const std::vector<int>& lanes);

 private:
  struct LaneState {
    std::vector<std::uint8_t> committed;      // by seq - 1
    std::vector<std::uint64_t> commit_index;  // by seq - 1: first accepted commit
    std::vector<std::uint8_t> acked;          // by seq - 1
    std::int64_t commit_next = 1;             // lowest seq neither committed nor resolved
    std::int64_t ack_next = 1;                // lowest seq neither acked nor resolved
  };
  // The lane's state, grown to the events published so far and moved past what is done.
  LaneState& advance(int lane);

  const HistoryIndex& index_;
  Findings& findings_;
  std::vector<LaneState> lanes_;  // by lane id
};

// fence (checker_fence.cpp): every accepted step is under the current generation of its node.
class FenceChecker {
 public:
  FenceChecker(const HistoryIndex& index, Findings& findings)
      : index_(index), findings_(findings) {}
  void on_acquire(const HistoryRecord& r, const IndexedStep& step);
  // An accepted read, renew, ack or commit.
  void on_step(const HistoryRecord& r, const IndexedStep& step);

 private:
  const HistoryIndex& index_;
  Findings& findings_;
};

// exclusion and pm_exclusion (checker_exclusion.cpp): one type judging one kind of lease unit,
// lanes (exclusion) or process managers' correlation values (pm_exclusion).
class ExclusionChecker {
 public:
  ExclusionChecker(const HistoryIndex& index, Findings& findings, bool process_managers)
      : index_(index),
        findings_(findings),
        property_(process_managers ? Property::pm_exclusion : Property::exclusion) {}
  void on_read(const HistoryRecord& r, const IndexedStep& step);
  void on_enter(const HistoryRecord& r, const IndexedStep& step);
  void on_ack(const HistoryRecord& r, const IndexedStep& step);
  void on_commit(const HistoryRecord& r, const IndexedStep& step);

 private:
  struct StaleExecution {
    int execution = 0;
    std::vector<std::uint64_t> witnesses;  // enter, stale point, the other execution's enter
    bool committed = false;
  };
  // A node's work under one generation of a unit: what it had in flight when the generation
  // went stale decides which single event it may still enter. Positions name history records.
  struct NodeGeneration {
    std::size_t in_flight = kNoPosition;  // its last enter, while not yet acked
    std::size_t last_read = kNoPosition;  // its last read accepted before the generation ended
    std::size_t allowed = kNoPosition;    // once stale: the one event it may still enter
  };
  struct UnitState {
    std::vector<StaleExecution> stale;
    std::map<std::pair<std::string, std::uint64_t>, NodeGeneration> node_generations;
  };
  UnitState& state_of(int unit);
  std::string describe(const IndexedExecution& e) const;

  const HistoryIndex& index_;
  Findings& findings_;
  Property property_;
  std::vector<UnitState> units_;  // by unit id
};

// parallel (checker_parallel.cpp): executions of different keys overlap somewhere.
class ParallelChecker {
 public:
  ParallelChecker(const HistoryIndex& index, Findings& findings)
      : index_(index), findings_(findings) {}
  void on_enter(const IndexedStep& step);
  void on_ended(const std::vector<int>& executions);
  void finish(PropertyStatus& status);

 private:
  const HistoryIndex& index_;
  Findings& findings_;
  std::vector<int> open_by_spot_;  // open executions, by spot id
  int spots_open_ = 0;
  bool seen_ = false;
};

// What a lane should have committed by the end of the history: seqs 1..n in publish order, n
// before the lowest unresolved poison seq, less the seqs an operator skipped or dlq'd; and how
// far its accepted commits agree with that (checker_no_loss.cpp).
struct DueCommits {
  std::int64_t poison_head = 0;
  std::vector<std::int64_t> expected;
  std::size_t agreed = 0;  // length of the common prefix of expected and the commits
  bool met = false;        // the commits are exactly expected
};
DueCommits due_commits(const HistoryIndex& index, const IndexedLane& lane);

// no_loss (checker_no_loss.cpp), judged at the end.
class NoLossChecker {
 public:
  NoLossChecker(const HistoryIndex& index, Findings& findings)
      : index_(index), findings_(findings) {}
  void finish();

 private:
  const HistoryIndex& index_;
  Findings& findings_;
};

// poison_halt (checker_poison_halt.cpp): nothing past an unresolved poison head commits, only an
// operator dlq's, and (when required) a lane that reached its head recorded a halt.
class PoisonHaltChecker {
 public:
  PoisonHaltChecker(const HistoryIndex& index, Findings& findings)
      : index_(index), findings_(findings) {}
  void on_commit(const HistoryRecord& r, const IndexedStep& step);
  void on_dlq(const HistoryRecord& r);
  void finish(bool require_halt_record);

 private:
  const HistoryIndex& index_;
  Findings& findings_;
};

}  // namespace seqby::properties::detail
