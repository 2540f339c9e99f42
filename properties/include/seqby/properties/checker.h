// The history checker: judges one history against the properties of DESIGN section 6 and reports
// each violation with its property, partition, the indices of the records that witness it and a
// one-or-two sentence explanation. It reads only the history (no access to Redis or the engine),
// runs in one pass plus an end-of-history sweep (linear in the records), and is deterministic. It
// judges what the history proves: a lease that expired silently is seen only through the next
// acquire.
//
// What the checker assumes of a history (the engine, broker, effect sink and drivers emit this):
// - Records stand in the order in which the broker or effect sink DECIDED them (a fenced read,
//   ack, commit or acquire is placed where Redis/the sink ran it, not where a late reply arrived);
//   a publish record precedes every record about its event.
// - publish: node "" or the publisher, category, key, event (stream entry id), seq = 1, 2, 3, ...
//   in publish order per category+key; detail token "poison" marks an event its handler always
//   fails on.
// - acquire/renew/lose/release: node = owner id, category, key, group, generation.
// - read/read_fenced/enter/exit/ack/ack_fenced/commit/commit_fenced/commit_rejected: node,
//   category, key, group, generation (the lease generation the step was taken under), event;
//   commits carry seq (or an event the checker maps to its seq). exit detail "ok" or "failed: ...".
// - commit = the effect sink accepted it (only the key's next seq, only under the current lease);
//   commit_fenced / commit_rejected = refused (stale lease / out of order or duplicate).
// - halt: the group's partition halted on its head (event). dlq: an entry moved to C:K:dlq, detail
//   says who ("operator ..." or "engine ..."). skip: an operator acknowledged the head. Group "" on
//   dlq/skip means every group of the partition.
// - Process managers are declared in a run header (markers.h: "run pm=NAME" or, naming the
//   categories it subscribes, "run pm=NAME:order+payment"); their records carry the correlation
//   value in `key` and the event's category in `category`; one lease (acquire category ignored)
//   spans all of the PM's categories for one correlation value.
// - A lossy failover (markers.h: a replica_lag record, then a lossy_failover record of the same
//   shard) undoes every write to its keys made between the two: the checker judges what the
//   surviving state tells. A publish undone is lost: it needs no ack, and no_loss owes its lane
//   nothing from that seq on unless it was committed all the same (an owner that had read it
//   before the failover may still commit it); else a numbered sink accepts no later seq, and order
//   lets nothing after it commit. A commit or
//   ack undone is as if never made (it may be made again). An ack of an event whose commit was
//   undone, made before it is committed again (a retry after a lost reply, or an ack in flight
//   across the failover), is not judged for ack order, and it took the entry the failover had put
//   back: that event is lost as a lost publish is. An acquire undone ends its
//   tenure at the failover, ends no other tenure, and its generation may be acquired again; a
//   release undone is as if never made. Executions are not undone: they happened, and exclusion
//   judges them with those tenures (a holder whose lease the failover took is stale from there on).
//
// A partition of a handler group ("lane") is category+key+group; a lease unit is a lane, or for a
// process manager group+key. Properties:
// - order: per lane, accepted commits take seqs in publish order, each at most once, no gap (seq k
//   only after k-1 was committed or skipped/dlq'd by an operator). An accepted ack of seq k while
//   an earlier seq was neither acked nor operator-resolved is a violation; a repeated ack is not
//   (XACK is idempotent, and a retried ack after a lost reply is accepted again).
// - fence: every accepted read/renew/ack/commit is under generation g acquired by that node on its
//   unit, with no later generation acquired and g not released before it; generations of a unit
//   strictly increase across acquires. Generation 0 means no lease.
// - exclusion: executions (enter..exit of one node and event; a crash fault of the node ends them)
//   of different events of one lane never overlap while both are under a valid lease. If one was
//   stale (a later generation was acquired or its generation released before the overlap), the
//   overlap is a stale_overlap, reported apart, unless that stale execution then gets an accepted
//   commit. An execution under generation 0 (no lease) is never excused as stale. Independently,
//   a node under a stale generation may enter only one event after it went stale: the later of
//   the one it had in flight (entered, not acked) and the one it last read while the generation
//   was current (the read is the lease check; a stall may fall between it and the enter, and a
//   process manager whose event failed on one stream reads its next event on another), or with
//   neither recorded the first it enters; entering any other is a violation.
// - pm_exclusion: the same, for process managers' units (correlation value across categories).
// - no_loss: at the end, each lane's accepted commits are exactly seqs 1..n in order, where n stops
//   before the lowest unresolved poison event, leaving out events an operator skipped or dlq'd.
//   Lanes are the groups seen on a category plus each process manager on the categories its
//   header names (so a stream the PM never touched is judged too); a category with events but no
//   group is a violation.
// - poison_halt: no accepted commit of a seq after an unresolved poison event of its key; dlq only
//   by an operator. When asked (CheckOptions::require_halt_record or "require=halt" in the run
//   header), a lane that reached its poison head must have recorded a halt on it: not by default,
//   because a run may end while the engine is still spending its retries on the head.
// - parallel: if two or more nodes acquired leases and two or more keys had executions, some
//   executions of different keys overlap. For a process manager a key is a correlation value
//   (its category streams of one value never overlap).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/properties/reached.h"

namespace seqby::properties {

enum class Property : std::uint8_t {
  order,
  fence,
  exclusion,
  no_loss,
  poison_halt,
  parallel,
  pm_exclusion,
};
inline constexpr std::size_t kPropertyCount = 7;

const char* property_name(Property property);
// Returns false when `name` names no property.
bool parse_property(std::string_view name, Property* out);

struct CheckOptions {
  // Properties not to judge (e.g. parallel for a single-key run, no_loss for a cut-short run).
  std::vector<Property> skip;
  // Whether `skip=` in the history's run header also applies.
  bool honor_header_skip = true;
  // Whether a lane that reached its poison head must have recorded a halt (poison_halt).
  bool require_halt_record = false;
  // At most this many findings are listed per property (all are counted).
  std::size_t findings_per_property_max = 20;
  // When given, also what the run reached (count_reached), counted in the same pass over the
  // checker's own history index: a campaign builds one index per run instead of two.
  ReachedCounts* reached = nullptr;
};

// A violation or a stale overlap.
struct Finding {
  Property property = Property::order;
  std::string category;  // "" for a process manager unit or a finding about the whole run
  std::string key;
  std::string group;
  std::vector<std::uint64_t> witnesses;  // record indices, ascending, no duplicates
  std::string explanation;
};

struct PropertyStatus {
  bool checked = false;  // judged (not skipped, and applicable to this history)
  std::uint64_t violation_count = 0;
  std::string note;  // why not checked, when it was not
  bool violated() const { return violation_count > 0; }
};

struct CheckCounters {
  std::uint64_t records = 0;
  std::uint64_t events_published = 0;
  std::uint64_t events_poison = 0;
  std::uint64_t events_committed = 0;  // accepted commit records
  std::uint64_t commits_fenced = 0;
  std::uint64_t commits_rejected = 0;
  std::uint64_t executions = 0;  // enter records
  std::uint64_t acquires = 0;
  std::uint64_t nodes_with_lease = 0;
  std::uint64_t stale_overlaps = 0;     // exclusion's admitted residue
  std::uint64_t pm_stale_overlaps = 0;  // the same for process managers
  std::uint64_t halts = 0;
  std::uint64_t dlqs = 0;
  std::uint64_t skips = 0;
  std::uint64_t faults = 0;  // fault records that are not markers
  bool liveness_marker = false;
  std::uint64_t liveness_marker_index = 0;
  // Lossy failovers (markers.h), the records they undid, and the publishes among them.
  std::uint64_t lossy_failovers = 0;
  std::uint64_t records_undone = 0;
  std::uint64_t publishes_lost = 0;
  // Events whose commit a lossy failover undid and whose entry an ack then took: never
  // committed again.
  std::uint64_t commits_lost = 0;
  // Keys a lossy failover of their category index's shard took out of the index again (their
  // publish inside the lag had indexed them anew; IndexedStream::unindexed_at): what they held
  // uncommitted is owed nothing.
  std::uint64_t keys_unindexed = 0;
  // Units their holder put back into an index that had lost them (Broker::reindex), whatever
  // took them out.
  std::uint64_t keys_put_back = 0;
};

struct CheckReport {
  std::array<PropertyStatus, kPropertyCount> properties{};
  std::vector<Finding> violations;      // sorted by property, then first witness
  std::vector<Finding> stale_overlaps;  // sorted by first witness
  CheckCounters counters;
  std::vector<std::string> notes;  // oddities of the history that are not violations

  const PropertyStatus& status(Property property) const {
    return properties[static_cast<std::size_t>(property)];
  }
  bool ok() const;  // no property violated
};

CheckReport check_history(const std::vector<HistoryRecord>& history, const CheckOptions& options);

// Human text: a summary line, one line per property, then each violation with its witnesses. When
// `history` is given, each witness record is printed as its JSON line under the violation.
std::string render_report_text(const CheckReport& report,
                               const std::vector<HistoryRecord>* history = nullptr);
// One JSON object: ok, properties{name:{checked,violated,violations,note}}, violations[],
// stale_overlaps[], counters{}, notes[]. Each finding: property, category, key, group, witnesses,
// explanation.
std::string render_report_json(const CheckReport& report);

}  // namespace seqby::properties
