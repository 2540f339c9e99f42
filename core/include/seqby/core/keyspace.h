// The keyspace: every Redis key name seqby builds, built here and nowhere else (DESIGN.md section
// 3, docs/ARCHITECTURE.md "Redis keys beyond DESIGN.md section 3"). Composition is total for
// valid parts and validates nothing: callers compose from validated categories, keys and groups
// (keys.h). The two reverse parses here are the ones the simulator's history stamping needs;
// the general parse of a stream name is in naming.h.
//
// For category C, key K, backfill suffix S, group G, owner id O:
//   C:K                 partition stream       C:K:S                the partition's backfill lane
//   C:K:dlq             the partition's DLQ    C:__partitions__     the category's partition index
//   C:K:__lease__       the partition's lease  C:K:__lease__:G      its lease for G alone
//   C:K:__fence__       the generation counter (one per partition, never expires)
//   C:__subscribers__   the consumer groups that consume C (the reaper waits for each)
//   C:__members__:G     live instances of (C, G)   C:__member__:G:O  O is live (PX ttl)
//   C:K:__sink__:G      the fenced effect sink C:K:__effects__:G    its committed effects
//   C:K:__halt__:G      the halt record        C:K:__inprogress__:G the record handler's marker
//   C                   the category stream    C:S, C:dlq           the category's lane and DLQ
//   C:K:__journal__     the partition's decision journal (docs/ARCHITECTURE.md "The decision
//                       journal")                C:__journal__ the category's (run notes)
// for process manager P, correlation value X (ADR decision 2), the unit {__pm__:P, X}:
//   __pm__:P:X:__lease__  the lease of X       __pm__:P:X:__fence__  X's generation counter
//   __pm__:P:X:__journal__ the decision journal of X (every PM step on any of X's streams)
// (the lease namespace __pm__:P is a reserved category: validate_category_name refuses it),
// and for a real-Redis run's history (RedisHistorySink): seqby:history, seqby:history:C.
//
// The cluster key layout (KeyLayout::cluster, docs/ARCHITECTURE.md "The cluster key layout")
// spells the unit part of every per-unit name with a hash tag, C:{K} and __pm__:P:{X}, so that
// every key one fenced script touches shares one Redis Cluster hash slot; the category-wide keys
// keep their names (the index C:__partitions__ among them), and the reap's keys beside the index
// take the index's whole name as their tag. The default, KeyLayout::flat, is the ADR's names.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "seqby/core/keys.h"

namespace seqby {

inline constexpr std::string_view kLeaseToken = "__lease__";
inline constexpr std::string_view kFenceToken = "__fence__";
inline constexpr std::string_view kPartitionIndexToken = "__partitions__";
inline constexpr std::string_view kSubscribersToken = "__subscribers__";
inline constexpr std::string_view kProcessManagerToken = "__pm__";
inline constexpr std::string_view kMembersToken = "__members__";
inline constexpr std::string_view kMemberToken = "__member__";
inline constexpr std::string_view kSinkToken = "__sink__";
inline constexpr std::string_view kEffectsToken = "__effects__";
inline constexpr std::string_view kHaltToken = "__halt__";
inline constexpr std::string_view kInprogressToken = "__inprogress__";
inline constexpr std::string_view kJournalToken = "__journal__";
// The default history stream of a real-Redis run.
inline constexpr std::string_view kHistoryStreamName = "seqby:history";
inline constexpr std::string_view kReapingToken = "__reaping__";
inline constexpr std::string_view kPublishingToken = "__publishing__";

// How per-unit names are spelled: `flat` (the ADR's C:K, the default) or `cluster` (C:{K}: every
// key of one lease unit in one Redis Cluster hash slot).
enum class KeyLayout : std::uint8_t { flat, cluster };

// "flat" or "cluster".
const char* key_layout_name(KeyLayout layout);
// The layout named `name` ("flat", "cluster"); nullopt for any other name.
std::optional<KeyLayout> parse_key_layout(std::string_view name);

// The Redis Cluster hash slot of `key` (CRC16-CCITT of the key, or of its hash tag: the bytes
// between the first '{' and the first '}' after it, when there are any), 0..16383.
std::uint16_t key_hash_slot(std::string_view key);
inline constexpr std::uint16_t kHashSlotCount = 16384;

// "C:K" (flat) or "C:{K}" (cluster): the partition stream, and the stem of every per-unit name.
std::string partition_stream_name(std::string_view category, std::string_view key,
                                  KeyLayout layout = KeyLayout::flat);
std::string backfill_lane_name(std::string_view category, std::string_view key,
                               std::string_view backfill_suffix = kDefaultBackfillSuffix,
                               KeyLayout layout = KeyLayout::flat);
std::string dlq_stream_name(std::string_view category, std::string_view key,
                            KeyLayout layout = KeyLayout::flat);
std::string lease_key_name(std::string_view category, std::string_view key);
// "C:K:__lease__" when `scope` is empty, else "C:K:__lease__:scope" (a group's own lease).
std::string lease_key_name(std::string_view category, std::string_view key, std::string_view scope,
                           KeyLayout layout = KeyLayout::flat);
std::string fence_key_name(std::string_view category, std::string_view key,
                           KeyLayout layout = KeyLayout::flat);
std::string partition_index_name(std::string_view category);
// The cluster layout's reap protocol keys, in the index's hash slot (their tag is the index's
// whole name): "{C:__partitions__}:__reaping__", the set of keys a reaper took out of the index
// (discovery reads it too), and "{C:__partitions__}:__publishing__", the hash of open publish
// intents (key -> count of publishes between their first and last step).
std::string reaping_set_name(std::string_view category);
std::string publishing_hash_name(std::string_view category);
// "C:__subscribers__": the set of consumer groups subscribed to category C (Broker::subscribe).
std::string subscribers_set_name(std::string_view category);
// "__pm__:P": the namespace of process manager P's leases and membership; its leases are
// lease_key_name(pm_lease_category(P), X) and fence_key_name(pm_lease_category(P), X).
std::string pm_lease_category(std::string_view process_manager);
// "C:__members__:G" and "C:__member__:G:O": fair-share membership of (C, G); with the cluster
// layout "C:__members__:{G}" and "C:__member__:{G}:O", one slot for the scripts that read both.
std::string members_set_name(std::string_view category, std::string_view group,
                             KeyLayout layout = KeyLayout::flat);
std::string member_key_name(std::string_view category, std::string_view group,
                            std::string_view owner_id, KeyLayout layout = KeyLayout::flat);
// "seqby:history:C": the history stream of a run over category C.
std::string history_stream_name(std::string_view category);

// One partition: a category and a (valid) key, and how its names are spelled.
struct PartitionRef {
  std::string category;
  std::string key;
  KeyLayout layout = KeyLayout::flat;

  std::string stream() const { return partition_stream_name(category, key, layout); }
  std::string backfill_lane(std::string_view backfill_suffix = kDefaultBackfillSuffix) const {
    return backfill_lane_name(category, key, backfill_suffix, layout);
  }
  std::string dlq() const { return dlq_stream_name(category, key, layout); }
  std::string lease() const { return lease_key_name(category, key, "", layout); }
  std::string fence() const { return fence_key_name(category, key, layout); }
  std::string index() const { return partition_index_name(category); }
  std::string subscribers() const { return subscribers_set_name(category); }

  friend bool operator==(const PartitionRef&, const PartitionRef&) = default;
  friend auto operator<=>(const PartitionRef&, const PartitionRef&) = default;
};

// Per (partition, group) keys: "C:K:__sink__:G", "C:K:__effects__:G", "C:K:__halt__:G". The
// first two are the fenced Redis effect sink (Broker::fenced_commit): an OCC sink on the key's
// seq that a handler may commit through, a production path, not a test fixture.
std::string sink_key_name(const PartitionRef& partition, std::string_view group);
std::string effects_hash_name(const PartitionRef& partition, std::string_view group);
std::string halt_key_name(const PartitionRef& partition, std::string_view group);
// "UNIT:__inprogress__:G" for a lease unit (HandlerContext::unit()): C:K:__inprogress__:G for a
// partition, __pm__:G:X:__inprogress__:G for a process manager's correlation value.
std::string inprogress_key_name(const PartitionRef& unit, std::string_view group);

// "UNIT:__journal__": the decision journal of a lease unit (Lease::unit()): C:K:__journal__ for a
// partition (its publishes, operator resolutions and every step of every group on it), and
// __pm__:P:X:__journal__ for a process manager's correlation value. One stream per unit, so
// that on a Redis Cluster it can share the unit's hash slot.
std::string journal_stream_name(const PartitionRef& unit);
// "C:__journal__": the category's journal of records no script decides about one unit (a run
// header, a driver's fault, the engine's partition-count warning).
std::string category_journal_name(std::string_view category);

// "UNIT_CATEGORY:__wake__:O": engine instance O's doorbell (docs/ARCHITECTURE.md "Idle
// partitions are woken"), a stream its blocking read over its idle partitions also watches, so
// that a ring ends the read. UNIT_CATEGORY is the category, or a process manager's __pm__:G.
// The doorbell of the instance's wake channel N > 0 (Broker::wake_channels) is "...:O#N".
std::string wake_stream_name(std::string_view unit_category, std::string_view owner_id,
                             std::size_t channel = 0);

// The partition of stream name "C:K", split at the LAST colon (keys never hold one); nullopt
// when `stream` has no colon. With the cluster layout the last segment is "{K}" (nullopt
// otherwise) and the partition's layout is cluster.
std::optional<PartitionRef> split_partition_stream(std::string_view stream,
                                                   KeyLayout layout = KeyLayout::flat);

struct PartitionGroup {
  PartitionRef partition;
  std::string group;
};
// The partition and group of a sink key "C:K:__sink__:G"; nullopt for any other shape.
std::optional<PartitionGroup> parse_sink_key_name(std::string_view name,
                                                  KeyLayout layout = KeyLayout::flat);

}  // namespace seqby
