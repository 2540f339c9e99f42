// Records that describe a run rather than a step of it, and how the checker recognises them. All
// are optional: a history without them (a real-Redis run) is checked with the defaults. Markers
// are `fault` records with node "" whose detail starts with a reserved word; they are not counted
// as injected faults.
//
//   run header     {"op":"fault","detail":"run pm=billing_pm,ship_pm skip=parallel seed=7 ..."}
//                  Space-separated tokens after "run". `pm=` lists the groups that are process
//                  managers (their records carry the correlation value in `key`, and one lease
//                  spans all of the PM's categories), each as NAME or NAME:CAT+CAT+... naming the
//                  categories it subscribes ("pm=fulfil:order+payment"): a PM's streams on those
//                  categories are judged (no_loss) even where it never worked. A group name has
//                  no colon, so the first colon ends it. `skip=` lists properties that do not apply
//                  to the run (e.g. parallel for a single-key scenario). `require=halt` asks that
//                  a lane that reached its poison head recorded a halt on it (for runs that
//                  end only after the engine had time to spend its retries). Other name=value
//                  tokens (seed, scenario, variant, instances) are kept for humans and ignored.
//                  Several headers merge; a header may stand anywhere, though first is customary.
//   liveness       {"op":"fault","detail":"liveness_phase_start"}: faults stopped here; no_loss
//                  is judged at the end of the history, and names this marker in its witnesses.
//   replica lag    {"op":"fault","detail":"replica_lag shard=1 keys=k1,k7 begin"}: from here the
//                  replica of the master serving the partition keys k1 and k7 (on a cluster the
//                  key is the hash tag of every key of its lease units: streams, leases, fence
//                  counters, sinks) receives nothing more.
//   lossy failover {"op":"fault","detail":"lossy_failover shard=1 master=ADDR"}: that master died
//                  here and its lagging replica takes over: every write to those keys made
//                  between the two records is undone (docs/ARCHITECTURE.md "What a failover
//                  keeps"). The checker then judges the history the surviving state tells: a
//                  publish undone is lost (its lane owes nothing from it on unless an owner that
//                  had read it commits it all the same), a commit or ack undone may be made again,
//                  and a lease acquired in between ends here (its generation may be given again).
// One convention is about injected faults, which do carry a node:
//   crash          {"op":"fault","node":"w1","detail":"crash ..."}: instance w1 died; its open
//                  handler executions end here (they do not run on until the end of the history).
// Publish records mark poison events with the token "poison" in their detail. One warning the
// engine records is recognised here too (the engine in core/ writes it; core cannot see this):
//   partitions     {"op":"warn","node":"w1","detail":"live partitions 5 over threshold 3"}: the
//                  category's live partitions passed EngineOptions::partitions_warn_threshold.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seqby/core/history.h"

namespace seqby::properties {

inline constexpr std::string_view kRunMarker = "run";
inline constexpr std::string_view kLivenessMarker = "liveness_phase_start";
inline constexpr std::string_view kCrashFault = "crash";
inline constexpr std::string_view kPoisonToken = "poison";
inline constexpr std::string_view kOperatorToken = "operator";
inline constexpr std::string_view kPartitionCountWarning = "live partitions";
inline constexpr std::string_view kReplicaLag = "replica_lag";
inline constexpr std::string_view kLossyFailover = "lossy_failover";

struct RunHeader {
  std::vector<std::string> process_managers;  // group names of process managers
  // The categories a process manager subscribes, when the header names them (by group name;
  // every name here is also in process_managers). Categories may not contain '+'.
  std::map<std::string, std::vector<std::string>> pm_categories;
  std::vector<std::string> skip;     // property names that do not apply to this run
  std::vector<std::string> require;  // extra demands; known: "halt"
  // Free name=value tokens for humans (seed, scenario, variant, instances). Neither names nor
  // values may contain spaces; values in lists may not contain commas.
  std::vector<std::pair<std::string, std::string>> extra;
};

// A run header record (op fault, node ""). REQUIRES: no spaces in names or values.
HistoryRecord run_header_record(const RunHeader& header);
// A liveness-phase marker record at `time_ms`.
HistoryRecord liveness_marker_record(std::uint64_t time_ms);

// True when `detail`'s first space-separated token is `word`.
bool detail_starts_with_word(std::string_view detail, std::string_view word);
// True when `token` is one of the space-separated tokens of `detail`.
bool detail_has_token(std::string_view detail, std::string_view token);

bool is_run_header(const HistoryRecord& record);
bool is_liveness_marker(const HistoryRecord& record);
// True for a fault record about a crash of `record.node` (node not empty).
bool is_crash(const HistoryRecord& record);
// True for a fault record about a crash of `node`.
bool is_crash_of(const HistoryRecord& record, std::string_view node);

// A replica lag's start or a lossy failover (markers above): the shard, the keys it serves, and
// the categories whose partition index it serves (their index's slot is on it; the token is left
// off when there is none, so a lag beside no index reads as it always did).
struct FailoverMarker {
  std::uint64_t shard = 0;
  std::vector<std::string> keys;     // replica_lag only
  std::vector<std::string> indexes;  // replica_lag only
  bool lossy_failover = false;       // false: replica_lag
};
HistoryRecord replica_lag_record(std::uint64_t shard, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& indexes = {});
HistoryRecord lossy_failover_record(std::uint64_t shard, std::string_view master);
// nullopt for any other record.
std::optional<FailoverMarker> parse_failover_marker(const HistoryRecord& record);

// A partition-count warning: how many live partitions the engine saw, over which threshold.
struct PartitionCountWarning {
  std::uint64_t partitions = 0;
  std::uint64_t threshold = 0;
};
// The warning a warn record carries ("live partitions N over threshold T"); nullopt for any
// other record.
std::optional<PartitionCountWarning> parse_partition_count_warning(const HistoryRecord& record);
// Parses a run header's tokens. REQUIRES: is_run_header(record).
RunHeader parse_run_header(const HistoryRecord& record);

}  // namespace seqby::properties
