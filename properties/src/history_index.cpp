// The history index (history_index.h): one record at a time, in history order.
#include "seqby/properties/history_index.h"

#include <algorithm>
#include <optional>

#include "seqby/core/check.h"

namespace seqby::properties {
namespace {

std::string with_sep(const std::string& a, const std::string& b) { return a + '\x1f' + b; }

bool same_event(const HistoryRecord& a, const HistoryRecord& b) {
  return a.category == b.category && a.event_id == b.event_id;
}

}  // namespace

bool has_commit(const IndexedLane& lane, std::int64_t seq) {
  return std::any_of(lane.commits.begin(), lane.commits.end(),
                     [&](const IndexedCommit& c) { return c.seq == seq; });
}

HistoryIndex::HistoryIndex(const std::vector<HistoryRecord>& history) : history_(&history) {
  std::uint64_t previous_index = 0;
  for (std::size_t i = 0; i < history.size(); ++i) {
    const HistoryRecord& r = history[i];
    if (i > 0 && r.index <= previous_index) order_breaks_.push_back(i);
    previous_index = r.index;
    if (is_run_header(r)) {
      RunHeader header = parse_run_header(r);
      for (const std::string& group : header.process_managers) pm_groups_.insert(group);
      for (const auto& [group, categories] : header.pm_categories) {
        pm_categories_[group].insert(categories.begin(), categories.end());
      }
      for (const std::string& demand : header.require) requires_halt_ |= demand == "halt";
      headers_.emplace_back(i, std::move(header));
    } else if (is_liveness_marker(r) && !liveness_marker_) {
      liveness_marker_ = i;
    }
  }
  // A process manager's lanes on the categories it subscribes are judged even where it never
  // worked: every stream C:X it should have applied.
  for (const auto& [group, categories] : pm_categories_) {
    for (const std::string& category : categories) note_group(category, group);
  }
  if (complete()) complete_lanes();
}

HistoryIndex HistoryIndex::build(const std::vector<HistoryRecord>& history) {
  HistoryIndex index(history);
  while (!index.complete()) index.add();
  return index;
}

const IndexedStep& HistoryIndex::add() {
  SEQBY_CHECK(position_ < history_->size());
  const HistoryRecord& r = (*history_)[position_];
  step_ = IndexedStep{};
  step_.position = position_;
  ended_.clear();
  undone_lanes_.clear();
  switch (r.op) {
    case HistoryOp::publish:
      on_publish(r);
      break;
    case HistoryOp::acquire:
      on_acquire(r);
      break;
    case HistoryOp::release:
    case HistoryOp::reap:  // a reap deletes the lease too: it ends the generation
      step_.unit = unit_of(r);
      if (step_.unit >= 0) units_[step_.unit].released.emplace(r.generation, r.index);
      if (r.op == HistoryOp::reap && !r.category.empty() && !r.key.empty()) {
        streams_[stream_of(r.category, r.key)].reaps.push_back(r.index);
      }
      break;
    case HistoryOp::renew:
      step_.unit = unit_of(r);
      break;
    case HistoryOp::read:
      step_.unit = unit_of(r);
      if (step_.unit >= 0) units_[step_.unit].reads.push_back(position_);
      break;
    case HistoryOp::enter:
      on_enter(r);
      break;
    case HistoryOp::exit:
      on_exit(r);
      break;
    case HistoryOp::ack:
    case HistoryOp::commit:
      on_ack_or_commit(r);
      break;
    case HistoryOp::halt:
      on_halt(r);
      break;
    case HistoryOp::dlq:
    case HistoryOp::skip:
      on_resolve(r);
      break;
    case HistoryOp::fault:
      if (is_crash(r)) on_crash(r);
      on_failover_marker(r);
      break;
    case HistoryOp::commit_fenced:
    case HistoryOp::commit_rejected:
    case HistoryOp::lose:
    case HistoryOp::read_fenced:
    case HistoryOp::ack_fenced:
    case HistoryOp::warn:
      keys_put_back_ += r.detail == kPutBackWarning ? 1 : 0;
      break;
    case HistoryOp::reclaim:
    case HistoryOp::resume:
    case HistoryOp::drop:
      break;
  }
  ++position_;
  if (complete()) complete_lanes();
  return step_;
}

void HistoryIndex::on_publish(const HistoryRecord& r) {
  if (r.category.empty() || r.key.empty()) {
    note("publish #" + std::to_string(r.index) + " names no category or key; ignored");
    return;
  }
  IndexedStream& stream = streams_[stream_of(r.category, r.key)];
  const auto seq = static_cast<std::int64_t>(stream.events.size()) + 1;
  if (r.seq != seq) {
    note("publish #" + std::to_string(r.index) + " on " + r.category + ":" + r.key + " has seq " +
         std::to_string(r.seq) + "; publish order makes it seq " + std::to_string(seq));
  }
  if (!stream.seq_of_event.emplace(r.event_id, seq).second) {
    note("publish #" + std::to_string(r.index) + " repeats event '" + r.event_id + "' on " +
         r.category + ":" + r.key);
  }
  const bool poison = detail_has_token(r.detail, kPoisonToken);
  stream.events.push_back(IndexedEvent{r.event_id, r.index, poison});
  stream.resolved_all.push_back(0);
  if (poison) stream.poison_seqs.push_back(seq);
  step_.seq = seq;
}

void HistoryIndex::on_acquire(const HistoryRecord& r) {
  if (lease_node_names_.insert(r.node).second) lease_nodes_.emplace_back(r.node, r.index);
  step_.unit = unit_of(r);
  if (step_.unit < 0) return;
  IndexedUnit& unit = units_[step_.unit];
  unit.acquires.push_back(IndexedAcquire{r.generation, r.node, r.index});
}

void HistoryIndex::on_enter(const HistoryRecord& r) {
  step_.unit = unit_of(r);
  if (step_.unit < 0 || r.category.empty()) return;
  if (units_[step_.unit].pm) note_group(r.category, r.group);
  IndexedExecution e;
  e.unit = step_.unit;
  e.stream = stream_of(r.category, r.key);
  IndexedUnit& unit = units_[step_.unit];
  e.spot = spot_of(r, unit, e.stream);
  e.enter = position_;
  e.seq = seq_of(r);
  e.lease_current = r.generation > 0 && !stale_point(unit, r.generation, &r.node);
  step_.seq = e.seq;
  step_.execution = static_cast<int>(executions_.size());
  // Executions stand in enter order (the scenarios and the parallel checker rely on it).
  SEQBY_CHECK(executions_.empty() || executions_.back().enter < e.enter);
  executions_.push_back(e);
  unit.open.push_back(step_.execution);
}

void HistoryIndex::on_exit(const HistoryRecord& r) {
  step_.unit = unit_of(r);
  if (step_.unit < 0) return;
  IndexedUnit& unit = units_[step_.unit];
  // Two processes may run under one owner id (a replacement started with the same --owner-id
  // while the old one is stalled), both inside the same event: an exit ends the enter of its own
  // generation. Only a record without that match falls back to the node's latest enter.
  for (const bool same_generation : {true, false}) {
    for (std::size_t i = unit.open.size(); i-- > 0;) {
      const HistoryRecord& enter = (*history_)[executions_[unit.open[i]].enter];
      if (enter.node == r.node && same_event(enter, r) &&
          (!same_generation || enter.generation == r.generation)) {
        end_execution(unit, i);
        return;
      }
    }
  }
  note("exit #" + std::to_string(r.index) + " by " + r.node + " of event " + r.event_id +
       " matches no open enter");
}

void HistoryIndex::on_crash(const HistoryRecord& r) {
  crashes_.push_back(position_);
  for (IndexedUnit& unit : units_) {
    for (std::size_t i = unit.open.size(); i-- > 0;) {
      if ((*history_)[executions_[unit.open[i]].enter].node == r.node) end_execution(unit, i);
    }
  }
}

void HistoryIndex::end_execution(IndexedUnit& unit, std::size_t open_position) {
  const int id = unit.open[open_position];
  IndexedExecution& e = executions_[id];
  SEQBY_CHECK(e.end == kNoPosition);
  SEQBY_CHECK(e.enter < position_);  // an execution ends after it began, and only once
  e.end = position_;
  ended_.push_back(id);
  unit.open.erase(unit.open.begin() + static_cast<std::ptrdiff_t>(open_position));
}

void HistoryIndex::on_ack_or_commit(const HistoryRecord& r) {
  step_.unit = unit_of(r);
  step_.seq = seq_of(r);
  if (step_.seq < 1) {
    note(r.op == HistoryOp::commit
             ? "commit #" + std::to_string(r.index) + " names no seq and no published event"
             : "ack #" + std::to_string(r.index) + " names no published event");
    return;
  }
  step_.lane = lane_of(r.category, r.key, r.group);
  IndexedLane& lane = lanes_[step_.lane];
  if (r.op == HistoryOp::ack) {
    if (lane.undone_commits.count(step_.seq) > 0 && !has_commit(lane, step_.seq)) {
      step_.acks_undone_commit = true;
      lane.acked_uncommitted.insert(step_.seq);
    }
    lane.acks.push_back(position_);
    return;
  }
  const auto published = static_cast<std::int64_t>(streams_[lane.stream].events.size());
  lane.commits.push_back(IndexedCommit{step_.seq, r.index, step_.seq <= published});
}

void HistoryIndex::on_halt(const HistoryRecord& r) {
  step_.seq = seq_of(r);
  if (step_.seq < 1 || r.category.empty() || r.key.empty()) {
    note("halt #" + std::to_string(r.index) + " names no published event");
    return;
  }
  step_.lane = lane_of(r.category, r.key, r.group);
  IndexedLane& lane = lanes_[step_.lane];
  lane.halted_seqs.insert(step_.seq);
  const std::vector<IndexedEvent>& events = streams_[lane.stream].events;
  if (step_.seq > static_cast<std::int64_t>(events.size()) || !events[step_.seq - 1].poison) {
    note("halt #" + std::to_string(r.index) + " on " + describe_event(lane.stream, step_.seq) +
         " of " + r.category + ":" + r.key + ", which was not published as poison");
  }
}

void HistoryIndex::on_resolve(const HistoryRecord& r) {
  step_.seq = seq_of(r);
  // A dlq not by an operator resolves nothing (poison_halt judges it).
  if (r.op == HistoryOp::dlq && !detail_starts_with_word(r.detail, kOperatorToken)) return;
  if (step_.seq < 1) {
    note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
         " names no published event");
    return;
  }
  const int stream_id = find_stream(r.category, r.key);
  if (stream_id < 0 || step_.seq > static_cast<std::int64_t>(streams_[stream_id].events.size())) {
    note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
         " names an event that was never published");
    return;
  }
  if (r.group.empty()) {
    streams_[stream_id].resolved_all[step_.seq - 1] = 1;
    return;
  }
  step_.lane = lane_of(r.category, r.key, r.group);
  IndexedLane& lane = lanes_[step_.lane];
  const std::size_t published = streams_[stream_id].events.size();
  if (lane.resolved.size() < published) lane.resolved.resize(published, 0);
  lane.resolved[step_.seq - 1] = 1;
}

// A replica_lag opens a window on its shard; the lossy_failover of that shard closes it and undoes
// every write to the keys the master served made inside it (markers.h). Writes of a unit are in
// its slot, so the undone records of a stream, lane or unit are the newest ones it has: a suffix.
// Not undone: an operator's skip or dlq (a resolution stays resolved), a halt record, and the
// records of what the engines did beside Redis (reads, enters, exits: they happened). On the
// shard of a category's index, the window undoes the index's writes (IndexedStream::unindexed_at).
void HistoryIndex::on_failover_marker(const HistoryRecord& r) {
  const std::optional<FailoverMarker> marker = parse_failover_marker(r);
  if (!marker) return;
  if (!marker->lossy_failover) {
    LagWindow window;
    window.begin = r.index;
    window.keys.insert(marker->keys.begin(), marker->keys.end());
    window.indexes.insert(marker->indexes.begin(), marker->indexes.end());
    if (!lags_.emplace(marker->shard, std::move(window)).second) {
      note("replica_lag #" + std::to_string(r.index) + " of shard " +
           std::to_string(marker->shard) + " while one is open; ignored");
    }
    return;
  }
  auto lag = lags_.find(marker->shard);
  if (lag == lags_.end()) {
    note("lossy_failover #" + std::to_string(r.index) + " of shard " +
         std::to_string(marker->shard) + " follows no replica_lag of it; ignored");
    return;
  }
  const std::uint64_t begin = lag->second.begin;
  const std::set<std::string> keys = std::move(lag->second.keys);
  const std::set<std::string> indexes = std::move(lag->second.indexes);
  lags_.erase(lag);
  ++lossy_failovers_;
  auto undone = [&](std::uint64_t index) { return index > begin && index < r.index; };
  for (IndexedStream& stream : streams_) {
    if (keys.count(stream.key) == 0) continue;
    for (IndexedEvent& event : stream.events) {
      if (event.lost || !undone(event.index)) continue;
      event.lost = true;
      ++records_undone_;
    }
  }
  for (std::size_t id = 0; id < lanes_.size(); ++id) {
    IndexedLane& lane = lanes_[id];
    if (keys.count(streams_[lane.stream].key) == 0) continue;
    const std::size_t before = lane.commits.size() + lane.acks.size();
    std::erase_if(lane.commits, [&](const IndexedCommit& c) {
      if (!undone(c.index)) return false;
      lane.undone_commits.insert(c.seq);
      return true;
    });
    std::erase_if(lane.acks, [&](std::size_t p) { return undone((*history_)[p].index); });
    const IndexedStream& stream = streams_[lane.stream];
    if (lane.stranded_from == 0 && std::any_of(stream.reaps.begin(), stream.reaps.end(), undone)) {
      std::int64_t first = 1;
      while (has_commit(lane, first)) ++first;
      lane.stranded_from = first;
    }
    const std::size_t removed = before - lane.commits.size() - lane.acks.size();
    if (removed == 0) continue;
    records_undone_ += removed;
    undone_lanes_.push_back(static_cast<int>(id));
  }
  // The index's writes in the window are undone too: a key it did not hold when the lag began
  // and that a publish inside the window (re)indexed is out of the index again, its entries
  // left on their own shard. A key indexed before the window stays indexed.
  for (IndexedStream& stream : streams_) {
    if (indexes.count(stream.category) == 0 || stream.unindexed_at != 0) continue;
    std::optional<std::uint64_t> last_publish;  // before the window
    bool indexed_inside = false;
    for (const IndexedEvent& event : stream.events) {
      if (event.index < begin) last_publish = event.index;
      if (undone(event.index)) indexed_inside = true;
    }
    std::optional<std::uint64_t> last_reap;
    for (const std::uint64_t reap : stream.reaps) {
      if (reap < begin && (!last_reap || reap > *last_reap)) last_reap = reap;
    }
    const bool indexed_at_begin = last_publish && (!last_reap || *last_publish > *last_reap);
    if (indexed_inside && !indexed_at_begin) stream.unindexed_at = r.index;
  }
  for (IndexedUnit& unit : units_) {
    if (keys.count(unit.key) == 0) continue;
    for (IndexedAcquire& acquire : unit.acquires) {
      if (acquire.undone_at != 0 || !undone(acquire.index)) continue;
      acquire.undone_at = r.index;
      ++records_undone_;
    }
    records_undone_ +=
        std::erase_if(unit.released, [&](const auto& g) { return undone(g.second); });
  }
}

// Every stream with events gets a lane for every group of its category, so the end-of-history
// judgements find one even where a group never touched the stream.
void HistoryIndex::complete_lanes() {
  for (std::size_t stream_id = 0; stream_id < streams_.size(); ++stream_id) {
    if (streams_[stream_id].events.empty()) continue;
    auto groups = category_groups_.find(streams_[stream_id].category);
    if (groups == category_groups_.end()) continue;
    for (const std::string& group : groups->second) {
      lane_of(streams_[stream_id].category, streams_[stream_id].key, group);
    }
  }
}

void HistoryIndex::note(std::string text) {
  if (notes_.size() < kNotesKept) notes_.push_back(std::move(text));
}

const std::string& HistoryIndex::id_of(std::initializer_list<std::string_view> parts) const {
  id_scratch_.clear();
  for (const std::string_view* part = parts.begin(); part != parts.end(); ++part) {
    if (part != parts.begin()) id_scratch_ += '\x1f';
    id_scratch_ += *part;
  }
  return id_scratch_;
}

int HistoryIndex::stream_of(const std::string& category, const std::string& key) {
  const int found = find_stream(category, key);
  if (found >= 0) return found;
  const int id = static_cast<int>(streams_.size());
  stream_ids_.emplace(id_of({category, key}), id);
  IndexedStream stream;
  stream.category = category;
  stream.key = key;
  streams_.push_back(std::move(stream));
  return id;
}

int HistoryIndex::find_stream(const std::string& category, const std::string& key) const {
  if (last_stream_ >= 0 && streams_[last_stream_].key == key &&
      streams_[last_stream_].category == category) {
    return last_stream_;
  }
  auto it = stream_ids_.find(id_of({category, key}));
  if (it == stream_ids_.end()) return -1;
  last_stream_ = it->second;
  return it->second;
}

int HistoryIndex::find_lane(const std::string& category, const std::string& key,
                            const std::string& group) const {
  auto it = lane_ids_.find(id_of({category, key, group}));
  return it == lane_ids_.end() ? -1 : it->second;
}

int HistoryIndex::lane_of(const std::string& category, const std::string& key,
                          const std::string& group) {
  const int found = find_lane(category, key, group);
  if (found >= 0) return found;
  const int id = static_cast<int>(lanes_.size());
  lane_ids_.emplace(id_scratch_, id);  // find_lane's id
  IndexedLane lane;
  lane.stream = stream_of(category, key);
  lane.group = group;
  streams_[lane.stream].lanes.push_back(id);
  lanes_.push_back(std::move(lane));
  note_group(category, group);
  return id;
}

void HistoryIndex::note_group(const std::string& category, const std::string& group) {
  if (category.empty() || group.empty()) return;
  if (category_group_seen_.emplace(with_sep(category, group), true).second) {
    category_groups_[category].push_back(group);
    auto declared = pm_categories_.find(group);
    if (declared != pm_categories_.end() && declared->second.count(category) == 0) {
      note("process manager " + group + " works on category " + category +
           ", which its run header does not name");
    }
  }
}

int HistoryIndex::unit_of(const HistoryRecord& r) {
  const bool pm = pm_groups_.count(r.group) > 0;
  if (r.key.empty() || (!pm && r.category.empty())) {
    note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
         " names no partition; ignored");
    return -1;
  }
  if (last_unit_ >= 0) {
    const IndexedUnit& last = units_[last_unit_];
    if (last.pm == pm && last.key == r.key && last.group == r.group &&
        (pm || last.category == r.category)) {
      return last_unit_;
    }
  }
  const std::string& id =
      pm ? id_of({"", r.key, r.group, "pm"}) : id_of({r.category, r.key, r.group});
  const auto found = unit_ids_.find(id);
  if (found != unit_ids_.end()) return last_unit_ = found->second;
  last_unit_ = static_cast<int>(units_.size());
  unit_ids_.emplace(id, last_unit_);
  IndexedUnit unit;
  unit.category = pm ? "" : r.category;
  unit.key = r.key;
  unit.group = r.group;
  unit.pm = pm;
  units_.push_back(std::move(unit));
  if (!pm) note_group(r.category, r.group);
  return last_unit_;
}

int HistoryIndex::spot_of(const HistoryRecord& r, const IndexedUnit& unit, int stream) {
  const std::string label = unit.pm ? unit.group + "/" + unit.key
                                    : streams_[stream].category + ":" + streams_[stream].key;
  auto [it, inserted] =
      spot_ids_.emplace((unit.pm ? "pm\x1f" : "\x1f") + label, static_cast<int>(spots_.size()));
  if (inserted) spots_.push_back(IndexedSpot{label, r.index});
  return it->second;
}

std::int64_t HistoryIndex::seq_of(const HistoryRecord& r) {
  const int stream_id = find_stream(r.category, r.key);
  std::int64_t by_event = -1;
  if (stream_id >= 0 && !r.event_id.empty()) {
    auto it = streams_[stream_id].seq_of_event.find(r.event_id);
    if (it != streams_[stream_id].seq_of_event.end()) by_event = it->second;
  }
  if (r.seq >= 1) {
    if (by_event >= 1 && by_event != r.seq) {
      note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) + " has seq " +
           std::to_string(r.seq) + " but its event " + r.event_id + " was published as seq " +
           std::to_string(by_event));
    }
    return r.seq;
  }
  return by_event;
}

bool HistoryIndex::resolved(const IndexedLane& lane, std::int64_t seq) const {
  const IndexedStream& stream = streams_[lane.stream];
  if (seq <= static_cast<std::int64_t>(stream.resolved_all.size()) &&
      stream.resolved_all[seq - 1]) {
    return true;
  }
  return seq <= static_cast<std::int64_t>(lane.resolved.size()) && lane.resolved[seq - 1];
}

std::int64_t HistoryIndex::poison_head(const IndexedLane& lane) const {
  for (std::int64_t seq : streams_[lane.stream].poison_seqs) {
    if (!resolved(lane, seq)) return seq;
  }
  return 0;
}

std::optional<std::uint64_t> HistoryIndex::stale_point(const IndexedUnit& unit,
                                                       std::uint64_t generation,
                                                       const std::string* node) const {
  std::optional<std::uint64_t> point;
  if (node != nullptr) {
    for (auto it = unit.acquires.rbegin(); it != unit.acquires.rend(); ++it) {
      if (it->generation != generation || it->node != *node) continue;
      if (it->undone_at != 0) point = it->undone_at;
      break;
    }
  }
  for (const IndexedAcquire& acquire : unit.acquires) {
    if (acquire.generation > generation && acquire.undone_at == 0) {
      if (!point || acquire.index < *point) point = acquire.index;
      break;
    }
  }
  auto released = unit.released.find(generation);
  if (released != unit.released.end() && (!point || released->second < *point)) {
    point = released->second;
  }
  return point;
}

std::string HistoryIndex::describe_event(int stream, std::int64_t seq) const {
  const IndexedStream& s = streams_[stream];
  std::string text = "seq " + std::to_string(seq);
  if (seq >= 1 && seq <= static_cast<std::int64_t>(s.events.size())) {
    text += " (event " + s.events[seq - 1].event_id + ")";
  }
  return text;
}

std::string HistoryIndex::where(const IndexedUnit& unit) const {
  if (unit.pm) return "correlation " + unit.key + " of process manager " + unit.group;
  return unit.category + ":" + unit.key + " (group " + unit.group + ")";
}

}  // namespace seqby::properties
