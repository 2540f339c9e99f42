// The history index: what a history says, gathered once per history and shared by every property
// checker (checker.h) and by the scenarios that look at executions. It interns the history's
// streams (category+key: publishes, operator resolutions), lanes (category+key+group: accepted
// commits, acks, halts), lease units (a lane, or a process manager's group+key: acquires,
// releases, reads, executions) and spots (what `parallel` counts as one key) to dense ids in order
// of first appearance, so every walk over them is deterministic; and it keeps each handler
// execution as an interval of history positions (enter .. exit, or .. the crash of its node).
//
// It never judges: a record it cannot place (a publish without a key, an exit that matches no
// enter) is noted and otherwise ignored, so any parseable history indexes. Records are added in
// history order, one at a time (add()), and every query answers as of the records added so far:
// check_history judges each record against the index as it stands just after that record. The
// index keeps a pointer to the history: the history must outlive it and not change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/properties/markers.h"

namespace seqby::properties {

// A history position that is not there: an execution still open at the end of the history.
inline constexpr std::size_t kNoPosition = static_cast<std::size_t>(-1);

struct IndexedEvent {
  std::string event_id;
  std::uint64_t index = 0;  // the publish record's index
  bool poison = false;
  bool lost = false;  // a lossy failover undid its publish (markers.h)
};

struct IndexedStream {
  std::string category;
  std::string key;
  std::vector<IndexedEvent> events;  // events[seq - 1], in publish order
  std::unordered_map<std::string, std::int64_t> seq_of_event;
  std::vector<std::int64_t> poison_seqs;   // ascending
  std::vector<std::uint8_t> resolved_all;  // by seq - 1: skipped/dlq'd by an operator, all groups
  std::vector<int> lanes;
  std::vector<std::uint64_t> reaps;  // indices of the reap records of the stream
  // A lossy failover of the shard serving the category's index undid the publish that indexed
  // the key again (the first after a reap, or the first ever) while its entries, on the key's own
  // shard, stayed: discovery may never find them. The lossy_failover record's index; 0: none.
  std::uint64_t unindexed_at = 0;
};

// An accepted commit record that named a seq.
struct IndexedCommit {
  std::int64_t seq = 0;
  std::uint64_t index = 0;
  bool published = false;  // its seq named an event already published when it was accepted
};

struct IndexedLane {
  int stream = 0;
  std::string group;
  std::vector<std::uint8_t> resolved;  // by seq - 1 (may be shorter): operator skip/dlq, this group
  std::vector<IndexedCommit> commits;  // in history order
  std::vector<std::size_t> acks;       // positions of accepted acks that named a seq
  // A lossy failover removes the commits and acks it undid from both lists; the seqs whose commit
  // it undid go in undone_commits. An ack of one of them while it has no commit (a retry after a
  // lost reply, or an ack in flight across the failover, landing on the entry the failover put
  // back) leaves the event to nobody: its seq goes in acked_uncommitted.
  std::set<std::int64_t> undone_commits;
  std::set<std::int64_t> acked_uncommitted;
  // A lossy failover that undid a reap of the stream brings the stream back, while the reap's
  // removal from the category index (another slot, maybe another shard) may stand: discovery may
  // never find it again. The lane's first seq then uncommitted; 0: none.
  std::int64_t stranded_from = 0;
  std::set<std::int64_t> halted_seqs;
};

// Whether the lane holds an accepted commit of `seq` (one a lossy failover undid is not held).
bool has_commit(const IndexedLane& lane, std::int64_t seq);

// One lease tenure begins: an acquire. It ends at the unit's stale point (stale_point()).
struct IndexedAcquire {
  std::uint64_t generation = 0;
  std::string node;
  std::uint64_t index = 0;
  // The lossy failover that undid it (its record's index), 0 when none: the tenure ended there,
  // it ends no other, and its generation may be acquired again.
  std::uint64_t undone_at = 0;
};

struct IndexedUnit {
  std::string category;  // "" for a process manager unit
  std::string key;
  std::string group;
  bool pm = false;
  std::vector<IndexedAcquire> acquires;             // in history order
  std::map<std::uint64_t, std::uint64_t> released;  // generation -> first release (or reap) index
                                                    // (one a lossy failover undid is removed)
  std::vector<std::size_t> reads;                   // positions of accepted reads
  std::vector<int> open;                            // executions open now, in enter order
};

// One handler execution: an enter record, until the exit of the same node and event, or a crash
// of the node.
struct IndexedExecution {
  int unit = 0;
  int stream = 0;
  int spot = 0;
  std::size_t enter = 0;          // position of the enter record
  std::size_t end = kNoPosition;  // position of the exit or crash that ended it
  std::int64_t seq = -1;          // the event's seq when entered; -1 when unknown
  bool lease_current = false;     // entered under a generation > 0 that had not ended
};

// What `parallel` counts as one key: a stream, or for a process manager one correlation value
// (its streams of one value never overlap one another, whatever the number of instances).
struct IndexedSpot {
  std::string label;  // "C:K" or "G/X"
  std::uint64_t first_enter_index = 0;
};

// What the record just added resolved to.
struct IndexedStep {
  std::size_t position = 0;  // the record's position in the history
  int unit = -1;             // its lease unit; -1 when it names none or its op has none
  int lane = -1;             // its lane (commit, ack, halt, a group's resolution); -1 otherwise
  std::int64_t seq = -1;     // its seq: its own, else its event's published seq; -1 when unknown
  int execution = -1;        // an enter: the execution it opened
  bool acks_undone_commit = false;  // an ack of a seq whose commit a lossy failover undid, and
                                    // which has none since
};

class HistoryIndex {
 public:
  // Reads the run headers, the first liveness marker and the order of record indices; records
  // are then added with add(). REQUIRES: `history` outlives the index and does not change.
  explicit HistoryIndex(const std::vector<HistoryRecord>& history);
  // An index of the whole history.
  static HistoryIndex build(const std::vector<HistoryRecord>& history);

  // Adds the next record of the history and says what it resolved to. REQUIRES: !complete().
  const IndexedStep& add();
  bool complete() const { return position_ == history_->size(); }
  // The executions the last add() ended: an exit's one, or every open one of a crashed node.
  const std::vector<int>& ended() const { return ended_; }

  const std::vector<HistoryRecord>& history() const { return *history_; }
  const HistoryRecord& record(std::size_t position) const { return (*history_)[position]; }

  // --- what the first pass read ---
  // The run headers with their positions, in history order.
  const std::vector<std::pair<std::size_t, RunHeader>>& headers() const { return headers_; }
  const std::set<std::string>& process_managers() const { return pm_groups_; }
  bool requires_halt() const { return requires_halt_; }
  // Positions whose record index does not exceed the one before it.
  const std::vector<std::size_t>& order_breaks() const { return order_breaks_; }
  // The position of the first liveness marker.
  std::optional<std::size_t> liveness_marker() const { return liveness_marker_; }

  // --- what add() gathered ---
  const std::vector<IndexedStream>& streams() const { return streams_; }
  const std::vector<IndexedLane>& lanes() const { return lanes_; }
  const std::vector<IndexedUnit>& units() const { return units_; }
  const std::vector<IndexedExecution>& executions() const { return executions_; }  // enter order
  const std::vector<IndexedSpot>& spots() const { return spots_; }      // order of first execution
  const std::vector<std::size_t>& crashes() const { return crashes_; }  // positions
  // Each node that acquired a lease with its first acquire's index, in that order.
  const std::vector<std::pair<std::string, std::uint64_t>>& lease_nodes() const {
    return lease_nodes_;
  }
  // The groups seen working on each category (first-seen order), and each process manager on
  // the categories its header names. Once complete(), every stream with events has a lane for
  // every group of its category.
  const std::map<std::string, std::vector<std::string>>& category_groups() const {
    return category_groups_;
  }
  // The lanes whose commits or acks the last add() undid (a lossy failover), in id order.
  const std::vector<int>& undone_lanes() const { return undone_lanes_; }
  // Lossy failovers met so far, and the records they undid (publishes, leases, commits, acks).
  std::uint64_t lossy_failovers() const { return lossy_failovers_; }
  std::uint64_t records_undone() const { return records_undone_; }
  // Units their holder put back into an index that had lost them (kPutBackWarning).
  std::uint64_t keys_put_back() const { return keys_put_back_; }
  // Oddities of the history met while adding, in history order (the first few only).
  const std::vector<std::string>& notes() const { return notes_; }

  // --- queries, as of the records added so far ---
  // -1 when the history has no such stream or lane.
  int find_stream(const std::string& category, const std::string& key) const;
  int find_lane(const std::string& category, const std::string& key,
                const std::string& group) const;
  // Whether an operator skipped or dlq'd `seq` for the lane (or for every group).
  bool resolved(const IndexedLane& lane, std::int64_t seq) const;
  // The lowest poison seq of the lane's stream not resolved for the lane; 0 when none.
  std::int64_t poison_head(const IndexedLane& lane) const;
  // Where generation g of `unit` went stale: the first later acquire or its release; with `node`,
  // where `node`'s tenure of g ended, which a lossy failover can end too (its latest acquire of
  // g; without one, as without a node). An acquire a lossy failover undid ends no other tenure.
  std::optional<std::uint64_t> stale_point(const IndexedUnit& unit, std::uint64_t generation,
                                           const std::string* node = nullptr) const;
  // "seq N (event ID)" (the event only once published).
  std::string describe_event(int stream, std::int64_t seq) const;
  // "C:K (group G)", or "correlation X of process manager G".
  std::string where(const IndexedUnit& unit) const;

  // At most this many notes are kept: one more than a report lists, so it can say some were left
  // out.
  static constexpr std::size_t kNotesKept = 51;

 private:
  void on_publish(const HistoryRecord& r);
  void on_acquire(const HistoryRecord& r);
  void on_enter(const HistoryRecord& r);
  void on_exit(const HistoryRecord& r);
  void on_crash(const HistoryRecord& r);
  void on_ack_or_commit(const HistoryRecord& r);
  void on_halt(const HistoryRecord& r);
  void on_resolve(const HistoryRecord& r);
  void on_failover_marker(const HistoryRecord& r);
  void complete_lanes();

  void note(std::string text);
  int stream_of(const std::string& category, const std::string& key);
  // `parts` joined by \x1f in id_scratch_ (the key of stream_ids_, lane_ids_ and unit_ids_).
  const std::string& id_of(std::initializer_list<std::string_view> parts) const;
  int lane_of(const std::string& category, const std::string& key, const std::string& group);
  // The record's lease unit (created on first sight); -1 when it names no partition.
  int unit_of(const HistoryRecord& r);
  // Remembers that `group` works on `category`.
  void note_group(const std::string& category, const std::string& group);
  // The spot of an execution of `r` (created on first sight; its first enter is `r`).
  int spot_of(const HistoryRecord& r, const IndexedUnit& unit, int stream);
  std::int64_t seq_of(const HistoryRecord& r);
  void end_execution(IndexedUnit& unit, std::size_t open_position);

  const std::vector<HistoryRecord>* history_;
  std::size_t position_ = 0;
  IndexedStep step_;
  std::vector<int> ended_;

  std::vector<std::pair<std::size_t, RunHeader>> headers_;
  std::set<std::string> pm_groups_;
  std::map<std::string, std::set<std::string>> pm_categories_;  // as the run headers name them
  bool requires_halt_ = false;
  std::vector<std::size_t> order_breaks_;
  std::optional<std::size_t> liveness_marker_;

  std::vector<IndexedStream> streams_;
  std::vector<IndexedLane> lanes_;
  std::vector<IndexedUnit> units_;
  std::vector<IndexedExecution> executions_;
  std::vector<IndexedSpot> spots_;
  std::vector<std::size_t> crashes_;
  std::vector<std::pair<std::string, std::uint64_t>> lease_nodes_;
  std::set<std::string> lease_node_names_;
  std::map<std::string, std::vector<std::string>> category_groups_;
  std::vector<std::string> notes_;
  // A replica lag not yet ended by a lossy failover: the replica_lag record's index, the keys its
  // master serves, and the categories whose index it serves.
  struct LagWindow {
    std::uint64_t begin = 0;
    std::set<std::string> keys;
    std::set<std::string> indexes;
  };
  std::map<std::uint64_t, LagWindow> lags_;  // by shard
  std::vector<int> undone_lanes_;
  std::uint64_t lossy_failovers_ = 0;
  std::uint64_t keys_put_back_ = 0;
  std::uint64_t records_undone_ = 0;

  std::unordered_map<std::string, int> stream_ids_;
  std::unordered_map<std::string, int> lane_ids_;
  std::unordered_map<std::string, int> unit_ids_;
  std::unordered_map<std::string, int> spot_ids_;
  std::unordered_map<std::string, bool> category_group_seen_;
  mutable int last_stream_ = -1;  // find_stream's last answer
  int last_unit_ = -1;            // unit_of's last answer
  // The parts of an id joined by \x1f, in one buffer reused by every lookup (id_of).
  mutable std::string id_scratch_;
};

}  // namespace seqby::properties
