// The checker's pass over the history: publishes, leases (fence), commits and acks (order,
// poison_halt), operator actions. Executions are in checker_exclusion.cpp, the end-of-history
// judgements in checker_liveness.cpp.
#include "seqby/properties/checker.h"

#include <algorithm>

#include "checker_internal.h"
#include "seqby/properties/markers.h"

namespace seqby::properties {
namespace {

constexpr std::array<const char*, kPropertyCount> kPropertyNames{
    "order", "fence", "exclusion", "no_loss", "poison_halt", "parallel", "pm_exclusion"};
constexpr std::size_t kNotesMax = 50;

std::string with_sep(const std::string& a, const std::string& b) { return a + '\x1f' + b; }

}  // namespace

const char* property_name(Property property) {
  return kPropertyNames[static_cast<std::size_t>(property)];
}

bool parse_property(std::string_view name, Property* out) {
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    if (name == kPropertyNames[i]) {
      *out = static_cast<Property>(i);
      return true;
    }
  }
  return false;
}

bool CheckReport::ok() const {
  for (const PropertyStatus& status : properties) {
    if (status.violated()) return false;
  }
  return true;
}

CheckReport check_history(const std::vector<HistoryRecord>& history, const CheckOptions& options) {
  detail::Checker checker(history, options);
  return checker.run();
}

namespace detail {

Checker::Checker(const std::vector<HistoryRecord>& history, const CheckOptions& options)
    : history_(history), options_(options) {
  enabled_.fill(true);
}

CheckReport Checker::run() {
  prepass();
  for (const HistoryRecord& r : history_) step(r);
  finish();
  return std::move(report_);
}

void Checker::prepass() {
  for (Property property : options_.skip) enabled_[static_cast<std::size_t>(property)] = false;
  require_halt_record_ = options_.require_halt_record;
  std::uint64_t previous_index = 0;
  for (std::size_t i = 0; i < history_.size(); ++i) {
    const HistoryRecord& r = history_[i];
    if (i > 0 && r.index <= previous_index) {
      note("record indices do not strictly increase at position " + std::to_string(i) + " (index " +
           std::to_string(r.index) + "); witnesses name indices");
    }
    previous_index = r.index;
    if (is_run_header(r)) {
      const RunHeader header = parse_run_header(r);
      for (const std::string& group : header.process_managers) pm_groups_.insert(group);
      for (const auto& [group, categories] : header.pm_categories) {
        pm_categories_[group].insert(categories.begin(), categories.end());
      }
      for (const std::string& demand : header.require) {
        if (demand == "halt") {
          require_halt_record_ = true;
        } else {
          note("run header #" + std::to_string(r.index) + " requires unknown '" + demand + "'");
        }
      }
      if (!options_.honor_header_skip) continue;
      for (const std::string& name : header.skip) {
        Property property;
        if (parse_property(name, &property)) {
          enabled_[static_cast<std::size_t>(property)] = false;
        } else {
          note("run header #" + std::to_string(r.index) + " skips unknown property '" + name + "'");
        }
      }
    } else if (is_liveness_marker(r) && !report_.counters.liveness_marker) {
      report_.counters.liveness_marker = true;
      report_.counters.liveness_marker_index = r.index;
    }
  }
  if (pm_groups_.empty()) enabled_[static_cast<std::size_t>(Property::pm_exclusion)] = false;
  // A process manager's lanes on the categories it subscribes are judged even where it never
  // worked: every stream C:X it should have applied.
  for (const auto& [group, categories] : pm_categories_) {
    for (const std::string& category : categories) note_group(category, group);
  }
}

void Checker::step(const HistoryRecord& r) {
  ++report_.counters.records;
  switch (r.op) {
    case HistoryOp::publish:
      on_publish(r);
      break;
    case HistoryOp::acquire:
      on_acquire(r);
      break;
    case HistoryOp::release:
    case HistoryOp::reap:  // a reap deletes the lease too: it ends the generation
      on_release(r);
      break;
    case HistoryOp::renew:
      check_fenced_step(r);
      break;
    case HistoryOp::read:
      check_fenced_step(r);
      on_read(r);
      break;
    case HistoryOp::enter:
      on_enter(r);
      break;
    case HistoryOp::exit:
      on_exit(r);
      break;
    case HistoryOp::ack:
      check_fenced_step(r);
      on_ack(r);
      break;
    case HistoryOp::commit:
      ++report_.counters.events_committed;
      check_fenced_step(r);
      on_commit(r);
      break;
    case HistoryOp::commit_fenced:
      ++report_.counters.commits_fenced;
      break;
    case HistoryOp::commit_rejected:
      ++report_.counters.commits_rejected;
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
      if (!is_run_header(r) && !is_liveness_marker(r)) ++report_.counters.faults;
      break;
    case HistoryOp::lose:
    case HistoryOp::read_fenced:
    case HistoryOp::ack_fenced:
    case HistoryOp::reclaim:
    case HistoryOp::warn:
    case HistoryOp::resume:
      break;
  }
}

void Checker::on_publish(const HistoryRecord& r) {
  if (r.category.empty() || r.key.empty()) {
    note("publish #" + std::to_string(r.index) + " names no category or key; ignored");
    return;
  }
  Stream& stream = streams_[stream_of(r.category, r.key)];
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
  stream.events.push_back(Published{r.event_id, r.index, poison});
  stream.resolved_all.push_back(0);
  if (poison) {
    stream.poison_seqs.push_back(seq);
    ++report_.counters.events_poison;
  }
  ++report_.counters.events_published;
}

void Checker::on_acquire(const HistoryRecord& r) {
  ++report_.counters.acquires;
  if (lease_nodes_.insert(r.node).second) lease_node_first_acquire_.emplace_back(r.node, r.index);
  const int id = unit_of(r);
  if (id < 0) return;
  Unit& unit = units_[id];
  if (r.generation == 0) {
    violation(Property::fence, unit.category, unit.key, unit.group, {r.index},
              r.node + " acquired the lease of " + where(unit) +
                  " without a generation: every acquire must take a new, higher generation.");
  }
  const Acquire* highest = nullptr;
  for (const Acquire& previous : unit.acquires) {
    if (previous.generation >= r.generation &&
        (highest == nullptr || previous.generation > highest->generation)) {
      highest = &previous;
    }
  }
  if (highest != nullptr) {
    violation(Property::fence, unit.category, unit.key, unit.group, {highest->index, r.index},
              r.node + " acquired generation " + std::to_string(r.generation) + " of " +
                  where(unit) + ", which does not exceed generation " +
                  std::to_string(highest->generation) + " acquired by " + highest->node +
                  " before: generations must strictly increase and never repeat.");
  }
  unit.acquires.push_back(Acquire{r.generation, r.node, r.index});
  unit.max_generation = std::max(unit.max_generation, r.generation);
}

void Checker::on_release(const HistoryRecord& r) {
  const int id = unit_of(r);
  if (id < 0) return;
  units_[id].released.emplace(r.generation, r.index);
}

void Checker::check_fenced_step(const HistoryRecord& r) {
  const int id = unit_of(r);
  if (id < 0) return;
  const Unit& unit = units_[id];
  auto what = [&] {
    return std::string(history_op_name(r.op)) + " by " + r.node +
           (r.event_id.empty() ? "" : " of event " + r.event_id) + " on " + where(unit);
  };
  if (r.generation == 0) {
    violation(Property::fence, unit.category, unit.key, unit.group, {r.index},
              what() +
                  " was accepted under no lease generation: every read, ack and commit must "
                  "be made under the generation holding the lease.");
    return;
  }
  const Acquire* acquire = nullptr;
  for (auto it = unit.acquires.rbegin(); it != unit.acquires.rend(); ++it) {
    if (it->generation == r.generation) {
      acquire = &*it;
      break;
    }
  }
  if (acquire == nullptr) {
    violation(Property::fence, unit.category, unit.key, unit.group, {r.index},
              what() + " was accepted under generation " + std::to_string(r.generation) +
                  ", but no acquire of that generation precedes it.");
    return;
  }
  if (acquire->node != r.node) {
    violation(Property::fence, unit.category, unit.key, unit.group, {acquire->index, r.index},
              what() + " was accepted under generation " + std::to_string(r.generation) +
                  ", which " + acquire->node + " had acquired, not " + r.node + ".");
    return;
  }
  const std::optional<std::uint64_t> stale = stale_point(unit, r.generation);
  if (stale) {
    violation(Property::fence, unit.category, unit.key, unit.group,
              {acquire->index, *stale, r.index},
              what() + " was accepted under generation " + std::to_string(r.generation) +
                  " after record #" + std::to_string(*stale) +
                  " ended that generation (a later acquire or its release): a stale owner's "
                  "steps must be refused.");
  }
}

void Checker::on_commit(const HistoryRecord& r) {
  const std::int64_t seq = seq_of(r);
  if (seq < 1) {
    note("commit #" + std::to_string(r.index) + " names no seq and no published event");
    return;
  }
  check_stale_commit(r, seq);
  Lane& lane = lanes_[lane_of(r.category, r.key, r.group)];
  const Stream& stream = streams_[lane.stream];
  const auto published = static_cast<std::int64_t>(stream.events.size());
  const std::int64_t head = poison_head(lane);
  if (head > 0 && seq > head) {
    violation(Property::poison_halt, r.category, r.key, r.group,
              {stream.events[head - 1].index, r.index},
              describe_event(lane.stream, seq) + " was committed although " +
                  describe_event(lane.stream, head) +
                  " before it is an unresolved poison event: a halted partition must not advance "
                  "past its head.");
  }
  if (seq > published) {
    violation(Property::order, r.category, r.key, r.group, {r.index},
              "seq " + std::to_string(seq) + " was committed by " + r.node + ", but only " +
                  std::to_string(published) + " events had been published on " + r.category + ":" +
                  r.key + ".");
    lane.committed_order.push_back(seq);
    lane.committed_order_index.push_back(r.index);
    return;  // nothing to mark: the seq names no event (and may be absurdly large)
  }
  advance(lane);
  if (lane.committed[seq - 1]) {
    violation(Property::order, r.category, r.key, r.group, {lane.commit_index[seq - 1], r.index},
              describe_event(lane.stream, seq) + " was committed twice (by " + r.node +
                  " the second time): each event's effect must be accepted at most once.");
  } else {
    if (seq != lane.commit_next && seq <= published) {
      std::vector<std::uint64_t> witnesses{r.index};
      if (lane.commit_next <= published) {
        witnesses.push_back(stream.events[lane.commit_next - 1].index);
      }
      violation(Property::order, r.category, r.key, r.group, std::move(witnesses),
                describe_event(lane.stream, seq) + " was committed by " + r.node + " before " +
                    describe_event(lane.stream, lane.commit_next) +
                    " had been: accepted commits must follow publish order with no gap.");
    }
    lane.committed[seq - 1] = 1;
    lane.commit_index[seq - 1] = r.index;
    advance(lane);
  }
  lane.committed_order.push_back(seq);
  lane.committed_order_index.push_back(r.index);
}

// The last event a node read under a generation while that generation was current: a stale
// owner may still enter it (the read was its lease check; a stall can fall in between).
void Checker::on_read(const HistoryRecord& r) {
  const int unit_id = unit_of(r);
  if (unit_id < 0 || r.generation == 0) return;
  Unit& unit = units_[unit_id];
  if (stale_point(unit, r.generation)) return;
  NodeGeneration& ng = unit.node_generations[{r.node, r.generation}];
  ng.read_before_stale = true;
  ng.last_read_category = r.category;
  ng.last_read_event = r.event_id;
  ng.last_read_index = r.index;
}

void Checker::on_ack(const HistoryRecord& r) {
  const int unit_id = unit_of(r);
  if (unit_id >= 0) {
    auto found = units_[unit_id].node_generations.find({r.node, r.generation});
    if (found != units_[unit_id].node_generations.end() && found->second.in_flight &&
        found->second.in_flight_event == r.event_id &&
        found->second.in_flight_category == r.category) {
      found->second.in_flight = false;
    }
  }
  const std::int64_t seq = seq_of(r);
  if (seq < 1) {
    note("ack #" + std::to_string(r.index) + " names no published event");
    return;
  }
  Lane& lane = lanes_[lane_of(r.category, r.key, r.group)];
  advance(lane);
  if (seq <= static_cast<std::int64_t>(lane.acked.size()) && lane.acked[seq - 1]) return;
  const Stream& stream = streams_[lane.stream];
  if (lane.ack_next < seq && lane.ack_next <= static_cast<std::int64_t>(stream.events.size())) {
    violation(Property::order, r.category, r.key, r.group,
              {stream.events[lane.ack_next - 1].index, r.index},
              "the ack of " + describe_event(lane.stream, seq) + " by " + r.node +
                  " was accepted while " + describe_event(lane.stream, lane.ack_next) +
                  " had been neither acked nor skipped by an operator: acks must follow publish "
                  "order.");
  }
  if (seq <= static_cast<std::int64_t>(lane.acked.size())) lane.acked[seq - 1] = 1;
  advance(lane);
}

void Checker::on_resolve(const HistoryRecord& r) {
  ++(r.op == HistoryOp::dlq ? report_.counters.dlqs : report_.counters.skips);
  const std::int64_t seq = seq_of(r);
  if (r.op == HistoryOp::dlq && !detail_starts_with_word(r.detail, kOperatorToken)) {
    violation(Property::poison_halt, r.category, r.key, r.group, {r.index},
              "event " + r.event_id + " of " + r.category + ":" + r.key + " was moved to the DLQ" +
                  (r.detail.empty() ? "" : " by '" + r.detail + "'") +
                  " rather than by an operator: a poison head stays put until an operator acts.");
    return;
  }
  if (seq < 1) {
    note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
         " names no published event");
    return;
  }
  const int stream_id = find_stream(r.category, r.key);
  if (stream_id < 0 || seq > static_cast<std::int64_t>(streams_[stream_id].events.size())) {
    note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
         " names an event that was never published");
    return;
  }
  if (r.group.empty()) {
    streams_[stream_id].resolved_all[seq - 1] = 1;
    for (int lane_id : streams_[stream_id].lanes) advance(lanes_[lane_id]);
  } else {
    Lane& lane = lanes_[lane_of(r.category, r.key, r.group)];
    advance(lane);
    lane.resolved[seq - 1] = 1;
    advance(lane);
  }
}

void Checker::on_halt(const HistoryRecord& r) {
  ++report_.counters.halts;
  const std::int64_t seq = seq_of(r);
  if (seq < 1 || r.category.empty() || r.key.empty()) {
    note("halt #" + std::to_string(r.index) + " names no published event");
    return;
  }
  Lane& lane = lanes_[lane_of(r.category, r.key, r.group)];
  lane.halted_seqs.insert(seq);
  const std::vector<Published>& events = streams_[lane.stream].events;
  if (seq > static_cast<std::int64_t>(events.size()) || !events[seq - 1].poison) {
    note("halt #" + std::to_string(r.index) + " on " + describe_event(lane.stream, seq) + " of " +
         r.category + ":" + r.key + ", which was not published as poison");
  }
}

void Checker::finish() {
  judge_parallel();
  judge_no_loss();
  for (std::size_t i = 0; i < kPropertyCount; ++i) {
    PropertyStatus& status = report_.properties[i];
    if (static_cast<Property>(i) == Property::parallel) continue;  // judge_parallel decided
    status.checked = enabled_[i];
    if (!enabled_[i]) {
      status.note = static_cast<Property>(i) == Property::pm_exclusion && pm_groups_.empty()
                        ? "no process manager declared in a run header"
                        : "skipped";
    }
  }
  report_.counters.nodes_with_lease = lease_nodes_.size();
  auto by_property_then_witness = [](const Finding& a, const Finding& b) {
    if (a.property != b.property) return a.property < b.property;
    return a.witnesses < b.witnesses;
  };
  std::stable_sort(report_.violations.begin(), report_.violations.end(), by_property_then_witness);
  std::stable_sort(report_.stale_overlaps.begin(), report_.stale_overlaps.end(),
                   by_property_then_witness);
}

void Checker::violation(Property property, const std::string& category, const std::string& key,
                        const std::string& group, std::vector<std::uint64_t> witnesses,
                        std::string explanation) {
  const auto p = static_cast<std::size_t>(property);
  if (!enabled_[p]) return;
  ++report_.properties[p].violation_count;
  if (listed_[p] >= options_.findings_per_property_max) return;
  ++listed_[p];
  std::sort(witnesses.begin(), witnesses.end());
  witnesses.erase(std::unique(witnesses.begin(), witnesses.end()), witnesses.end());
  report_.violations.push_back(
      Finding{property, category, key, group, std::move(witnesses), std::move(explanation)});
}

void Checker::stale_overlap(Property property, const Unit& unit,
                            std::vector<std::uint64_t> witnesses, std::string explanation) {
  if (!enabled(property)) return;
  ++(property == Property::pm_exclusion ? report_.counters.pm_stale_overlaps
                                        : report_.counters.stale_overlaps);
  if (report_.stale_overlaps.size() >= 2 * options_.findings_per_property_max) return;
  std::sort(witnesses.begin(), witnesses.end());
  witnesses.erase(std::unique(witnesses.begin(), witnesses.end()), witnesses.end());
  report_.stale_overlaps.push_back(Finding{property, unit.category, unit.key, unit.group,
                                           std::move(witnesses), std::move(explanation)});
}

void Checker::note(std::string text) {
  if (report_.notes.size() < kNotesMax) {
    report_.notes.push_back(std::move(text));
  } else if (report_.notes.size() == kNotesMax) {
    report_.notes.push_back("(further notes left out)");
  }
}

int Checker::stream_of(const std::string& category, const std::string& key) {
  const int found = find_stream(category, key);
  if (found >= 0) return found;
  auto [it, inserted] = stream_ids_.emplace(with_sep(category, key), streams_.size());
  if (inserted) {
    Stream stream;
    stream.category = category;
    stream.key = key;
    streams_.push_back(std::move(stream));
  }
  return it->second;
}

int Checker::find_stream(const std::string& category, const std::string& key) const {
  if (last_stream_ >= 0 && streams_[last_stream_].key == key &&
      streams_[last_stream_].category == category) {
    return last_stream_;
  }
  auto it = stream_ids_.find(with_sep(category, key));
  if (it == stream_ids_.end()) return -1;
  last_stream_ = it->second;
  return it->second;
}

int Checker::lane_of(const std::string& category, const std::string& key,
                     const std::string& group) {
  auto [it, inserted] =
      lane_ids_.emplace(with_sep(with_sep(category, key), group), static_cast<int>(lanes_.size()));
  if (inserted) {
    Lane lane;
    lane.stream = stream_of(category, key);
    lane.group = group;
    streams_[lane.stream].lanes.push_back(it->second);
    lanes_.push_back(std::move(lane));
    note_group(category, group);
  }
  return it->second;
}

void Checker::note_group(const std::string& category, const std::string& group) {
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

int Checker::unit_of(const HistoryRecord& r) {
  if (cached_record_ == &r) return cached_unit_;
  const bool pm = pm_groups_.count(r.group) > 0;
  if (r.key.empty() || (!pm && r.category.empty())) {
    note(std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
         " names no partition; ignored");
    cached_record_ = &r;
    cached_unit_ = -1;
    return -1;
  }
  const std::string id = pm ? with_sep(with_sep("", r.key), r.group) + "\x1fpm"
                            : with_sep(with_sep(r.category, r.key), r.group);
  auto [it, inserted] = unit_ids_.emplace(id, static_cast<int>(units_.size()));
  if (inserted) {
    Unit unit;
    unit.category = pm ? "" : r.category;
    unit.key = r.key;
    unit.group = r.group;
    unit.pm = pm;
    units_.push_back(std::move(unit));
    if (!pm) note_group(r.category, r.group);
  }
  cached_record_ = &r;
  cached_unit_ = it->second;
  return it->second;
}

std::int64_t Checker::seq_of(const HistoryRecord& r) {
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

bool Checker::resolved(const Lane& lane, std::int64_t seq) const {
  const Stream& stream = streams_[lane.stream];
  if (seq <= static_cast<std::int64_t>(stream.resolved_all.size()) &&
      stream.resolved_all[seq - 1]) {
    return true;
  }
  return seq <= static_cast<std::int64_t>(lane.resolved.size()) && lane.resolved[seq - 1];
}

void Checker::advance(Lane& lane) {
  const std::size_t published = streams_[lane.stream].events.size();
  if (lane.committed.size() < published) {
    lane.committed.resize(published, 0);
    lane.commit_index.resize(published, 0);
    lane.acked.resize(published, 0);
    lane.resolved.resize(published, 0);
  }
  const auto size = static_cast<std::int64_t>(lane.committed.size());
  while (lane.commit_next <= size &&
         (lane.committed[lane.commit_next - 1] || resolved(lane, lane.commit_next))) {
    ++lane.commit_next;
  }
  while (lane.ack_next <= size &&
         (lane.acked[lane.ack_next - 1] || resolved(lane, lane.ack_next))) {
    ++lane.ack_next;
  }
}

std::int64_t Checker::poison_head(const Lane& lane) const {
  for (std::int64_t seq : streams_[lane.stream].poison_seqs) {
    if (!resolved(lane, seq)) return seq;
  }
  return 0;
}

std::optional<std::uint64_t> Checker::stale_point(const Unit& unit,
                                                  std::uint64_t generation) const {
  std::optional<std::uint64_t> point;
  for (const Acquire& acquire : unit.acquires) {
    if (acquire.generation > generation) {
      point = acquire.index;
      break;
    }
  }
  auto released = unit.released.find(generation);
  if (released != unit.released.end() && (!point || released->second < *point)) {
    point = released->second;
  }
  return point;
}

std::string Checker::describe_event(int stream, std::int64_t seq) const {
  const Stream& s = streams_[stream];
  std::string text = "seq " + std::to_string(seq);
  if (seq >= 1 && seq <= static_cast<std::int64_t>(s.events.size())) {
    text += " (event " + s.events[seq - 1].event_id + ")";
  }
  return text;
}

std::string Checker::where(const Unit& unit) const {
  if (unit.pm) return "correlation " + unit.key + " of process manager " + unit.group;
  return unit.category + ":" + unit.key + " (group " + unit.group + ")";
}

}  // namespace detail
}  // namespace seqby::properties
