// Private to the checker: the state of one check_history pass, split over checker*.cpp files.
// Streams (category+key) hold published events; lanes (category+key+group) hold what one handler
// group committed and acked; units (a lane, or a process manager's group+key) hold leases and
// handler executions; spots (a stream, or a process manager's group+key) are what `parallel`
// wants to see overlap. All are interned to dense ids in order of first appearance, so every walk
// over them is deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "seqby/properties/checker.h"

namespace seqby::properties::detail {

struct Published {
  std::string event_id;
  std::uint64_t index = 0;
  bool poison = false;
};

struct Stream {
  std::string category;
  std::string key;
  std::vector<Published> events;  // events[seq - 1]
  std::unordered_map<std::string, std::int64_t> seq_of_event;
  std::vector<std::int64_t> poison_seqs;   // ascending
  std::vector<std::uint8_t> resolved_all;  // by seq - 1: skipped/dlq'd by an operator, all groups
  std::vector<int> lanes;
};

// What parallel counts as one key: a stream, or for a process manager one correlation value (its
// streams can never overlap one another, whatever the number of instances).
struct Spot {
  std::string label;  // "C:K" or "G/X"
  int open_executions = 0;
  std::uint64_t first_enter_index = 0;
};

struct Lane {
  int stream = 0;
  std::string group;
  std::vector<std::uint8_t> committed;        // by seq - 1
  std::vector<std::uint64_t> commit_index;    // by seq - 1: first accepted commit
  std::vector<std::uint8_t> acked;            // by seq - 1
  std::vector<std::uint8_t> resolved;         // by seq - 1: operator skip/dlq for this group
  std::int64_t commit_next = 1;               // lowest seq neither committed nor resolved
  std::int64_t ack_next = 1;                  // lowest seq neither acked nor resolved
  std::vector<std::int64_t> committed_order;  // accepted commits' seqs, in history order
  std::vector<std::uint64_t> committed_order_index;
  std::set<std::int64_t> halted_seqs;
};

struct Acquire {
  std::uint64_t generation = 0;
  std::string node;
  std::uint64_t index = 0;
};

struct Execution {
  std::string node;
  std::string category;
  std::string event_id;
  std::uint64_t generation = 0;
  std::uint64_t enter_index = 0;
  int stream = -1;
  int spot = -1;
  std::int64_t seq = -1;
};

struct StaleExecution {
  Execution execution;
  std::vector<std::uint64_t> witnesses;  // enter, stale point, the other execution's enter
  bool committed = false;
};

// A node's work under one generation of a unit: what it had in flight when the generation went
// stale decides which single event it may still enter.
struct NodeGeneration {
  bool in_flight = false;  // last entered event not yet acked
  std::string in_flight_category;
  std::string in_flight_event;
  std::uint64_t in_flight_index = 0;
  bool read_before_stale = false;  // a read accepted before the generation went stale
  std::string last_read_category;  // the last such read's event
  std::string last_read_event;
  std::uint64_t last_read_index = 0;
  bool stale_decided = false;
  std::string allowed_category;
  std::string allowed_event;
  std::uint64_t allowed_index = 0;
};

struct Unit {
  std::string category;  // "" for a process manager unit
  std::string key;
  std::string group;
  bool pm = false;
  std::vector<Acquire> acquires;
  std::uint64_t max_generation = 0;
  std::map<std::uint64_t, std::uint64_t> released;  // generation -> release index
  std::vector<Execution> open;
  std::vector<StaleExecution> stale;
  std::map<std::pair<std::string, std::uint64_t>, NodeGeneration> node_generations;
};

class Checker {
 public:
  Checker(const std::vector<HistoryRecord>& history, const CheckOptions& options);
  CheckReport run();

 private:
  // checker.cpp
  void prepass();
  void step(const HistoryRecord& r);
  void on_publish(const HistoryRecord& r);
  void on_acquire(const HistoryRecord& r);
  void on_release(const HistoryRecord& r);
  void check_fenced_step(const HistoryRecord& r);
  void on_read(const HistoryRecord& r);
  void on_commit(const HistoryRecord& r);
  void on_ack(const HistoryRecord& r);
  void on_resolve(const HistoryRecord& r);
  void on_halt(const HistoryRecord& r);
  void finish();

  // checker_exclusion.cpp
  void on_enter(const HistoryRecord& r);
  void on_exit(const HistoryRecord& r);
  void on_crash(const HistoryRecord& r);
  void check_stale_commit(const HistoryRecord& r, std::int64_t seq);
  void close_execution(Unit& unit, std::size_t position);
  void judge_parallel();

  // checker_liveness.cpp
  void judge_no_loss();

  // Shared helpers (checker.cpp).
  bool enabled(Property property) const { return enabled_[static_cast<std::size_t>(property)]; }
  void violation(Property property, const std::string& category, const std::string& key,
                 const std::string& group, std::vector<std::uint64_t> witnesses,
                 std::string explanation);
  void stale_overlap(Property property, const Unit& unit, std::vector<std::uint64_t> witnesses,
                     std::string explanation);
  void note(std::string text);
  int stream_of(const std::string& category, const std::string& key);
  int find_stream(const std::string& category, const std::string& key) const;
  int lane_of(const std::string& category, const std::string& key, const std::string& group);
  // The record's lease unit (created on first sight); -1 when it names no partition.
  int unit_of(const HistoryRecord& r);
  // Remembers that `group` works on `category` (no_loss judges every such lane).
  void note_group(const std::string& category, const std::string& group);
  // The spot of an execution of `r` (created on first sight; its first enter is `r`).
  int spot_of(const HistoryRecord& r, const Unit& unit, int stream);
  // The record's seq: its own, else its event's published seq; -1 when unknown.
  std::int64_t seq_of(const HistoryRecord& r);
  bool resolved(const Lane& lane, std::int64_t seq) const;
  void advance(Lane& lane);
  // The lowest poison seq of the lane's stream not resolved for the lane; 0 when none.
  std::int64_t poison_head(const Lane& lane) const;
  // Where generation g of `unit` went stale: the first later acquire or its release.
  std::optional<std::uint64_t> stale_point(const Unit& unit, std::uint64_t generation) const;
  std::string describe_event(int stream, std::int64_t seq) const;
  std::string where(const Unit& unit) const;

  const std::vector<HistoryRecord>& history_;
  const CheckOptions& options_;
  CheckReport report_;
  std::array<bool, kPropertyCount> enabled_{};
  std::array<std::uint64_t, kPropertyCount> listed_{};
  std::set<std::string> pm_groups_;
  std::map<std::string, std::set<std::string>> pm_categories_;  // as the run header names them
  bool require_halt_record_ = false;
  std::set<std::string> lease_nodes_;

  std::vector<Stream> streams_;
  std::vector<Lane> lanes_;
  std::vector<Unit> units_;
  std::unordered_map<std::string, int> stream_ids_;
  std::unordered_map<std::string, int> lane_ids_;
  std::unordered_map<std::string, int> unit_ids_;
  std::map<std::string, std::vector<std::string>> category_groups_;  // groups in first-seen order
  std::unordered_map<std::string, bool> category_group_seen_;

  const HistoryRecord* cached_record_ = nullptr;  // unit_of's last answer
  int cached_unit_ = -1;
  mutable int last_stream_ = -1;  // find_stream's last answer

  // parallel
  std::vector<Spot> spots_;  // in order of first execution
  std::unordered_map<std::string, int> spot_ids_;
  int spots_open_ = 0;
  bool parallel_seen_ = false;
  std::vector<std::uint64_t> parallel_witnesses_;
  std::vector<std::pair<std::string, std::uint64_t>> lease_node_first_acquire_;
};

}  // namespace seqby::properties::detail
