// Admin: the operator's view of a live category and the two ways past a halted head (ADR
// decision 6; DESIGN.md section 3), over one BlockingRedis connection or, on a Redis Cluster, a
// routing link (ClusterLink: each command to its slot's master, MOVED and ASK followed, a command
// whose keys span slots refused unsent). Every per-unit name is spelled in the Admin's key layout
// (PartitionRef); each command and script names keys of one slot under the cluster layout
// (dlq-replay, which also indexes K, then goes in three steps as a publish does). The reads
// (partitions, inspect) take several commands and so are a snapshot of moments close together, not
// of one instant; skip and dlq are each one script that acts only while ID is still the head of the
// group (its lowest pending id) and changes nothing when it refuses. It never takes a lease: the
// halted owner notices the head is gone and goes on with the next event.
//
// Errors: Errc::invalid for bad input (a key, group or id that breaks its rules, an unknown
// group, a group left to choose among several), Errc::not_found for an unknown category, key or
// entry id, Errc::refused when ID is not the head (the message names the head), Errc::closed or
// Errc::timeout when Redis is unreachable, Errc::protocol for a reply of an unexpected shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seqby/broker/script_contracts.h"
#include "seqby/core/keyspace.h"
#include "seqby/core/result.h"
#include "seqby/hiredis/blocking_redis.h"

namespace seqby::redis {

class RealRuntime;
class RedisLink;

// The retention an operator's journaled action asks for (MAXLEN ~): large, so that it never trims
// more than the engines' own setting does.
inline constexpr std::uint64_t kOperatorJournalMaxlen = 1000000;

// A lease value `O:N` read from `C:K:__lease__` (or `C:K:__lease__:G`).
struct LeaseView {
  std::string owner;             // O
  std::uint64_t generation = 0;  // N
  std::int64_t ttl_ms = -1;      // PTTL: time left; -1 when the key has no expiry
};

// The halt record `C:K:__halt__:G` (halt_key_name in seqby/core/keyspace.h), as the owner wrote it.
struct HaltView {
  std::string id;             // the head entry the partition halted on
  std::string reason;         // the handler's last error
  std::int64_t since_ms = 0;  // server time of the halt, ms since the epoch
  std::string owner;          // O:N of the owner that halted
  std::uint64_t delivery_count = 0;
};

// The lowest pending entry of a group.
struct HeadView {
  std::string id;
  std::string consumer;  // the consumer holding it, `O:N`
  std::int64_t idle_ms = 0;
  std::uint64_t delivery_count = 0;
};

struct GroupView {
  std::string name;
  std::uint64_t pending = 0;
  std::optional<std::int64_t> lag;  // entries not yet delivered; nullopt when Redis cannot tell
  // The group's own lease when there is one: `C:K:__lease__:G`, or for a process manager G its
  // lease for correlation value K, `__pm__:G:K:__lease__`.
  std::optional<LeaseView> lease;
  std::optional<HeadView> head;  // nullopt when nothing is pending
  std::optional<HaltView> halt;  // nullopt when the partition is not halted for this group
};

struct PartitionView {
  std::string key;
  std::optional<LeaseView> lease;  // `C:K:__lease__`; nullopt when no instance holds it
  std::uint64_t length = 0;        // XLEN
  bool stream_exists = false;      // false when the index names a key whose stream is gone
  std::vector<GroupView> groups;   // sorted by name
};

struct CategoryView {
  std::string category;
  std::int64_t server_time_ms = 0;        // TIME when the listing started
  std::vector<PartitionView> partitions;  // sorted by key
};

// The head event of a partition for one group, with everything an operator needs to decide.
struct InspectView {
  std::string category;
  std::string key;
  std::string group;
  std::int64_t server_time_ms = 0;
  std::uint64_t length = 0;
  std::optional<LeaseView> lease;  // the lease governing the group (per-group first)
  GroupView status;                // pending, lag, head, halt
  // The head entry's fields in stream order (type, data, ...); empty with `head_deleted` when
  // the entry is still pending but no longer in the stream.
  std::vector<std::pair<std::string, std::string>> fields;
  bool head_deleted = false;
};

struct SkipOutcome {
  std::string group;
  std::string id;       // the head acknowledged
  bool halted = false;  // a halt record was deleted with it
};

struct DlqOutcome {
  std::string group;
  std::string id;       // the head moved and acknowledged
  std::string dlq;      // C:K:dlq
  std::string dlq_id;   // the new DLQ entry
  bool halted = false;  // a halt record was deleted with it
};

// One entry of a partition's DLQ `C:K:dlq`: the head's fields as admin_dlq copied them, then
// source_id, group, reason and delivery_count (admin_dlq.lua).
struct DlqEntryView {
  std::string id;
  std::vector<std::pair<std::string, std::string>> fields;  // in stream order
};

struct DlqListView {
  std::string dlq;                    // C:K:dlq
  std::uint64_t length = 0;           // XLEN (0 when there is no DLQ)
  std::vector<DlqEntryView> entries;  // oldest first, at most the count asked for
};

struct DlqPurgeOutcome {
  std::string dlq;           // C:K:dlq
  std::uint64_t purged = 0;  // entries deleted
  std::uint64_t left = 0;    // entries still there
};

struct DlqReplayOutcome {
  std::string dlq_id;     // the DLQ entry replayed (and deleted from the DLQ)
  std::string stream;     // C:K
  std::string stream_id;  // the new entry at the tail of C:K, after every later event
};

// True when `id` has the full stream id form `MS-SEQ`, both decimal.
bool is_stream_entry_id(std::string_view id);

class Admin {
 public:
  // Over one connection, names spelled in `layout`. REQUIRES: `redis` outlives this object.
  explicit Admin(BlockingRedis& redis, KeyLayout layout = KeyLayout::flat)
      : redis_(&redis), layout_(layout) {}
  // Over a Redis Cluster: every command through `cluster` (a ClusterLink), run to its end on
  // `runtime`; names spelled in `layout`. REQUIRES: both outlive this object; no loop is running
  // on `runtime` while a call is.
  Admin(RealRuntime& runtime, RedisLink& cluster, KeyLayout layout = KeyLayout::cluster)
      : runtime_(&runtime), cluster_(&cluster), layout_(layout) {}

  KeyLayout layout() const { return layout_; }
  // The partition C:K in this Admin's layout.
  PartitionRef partition_of(std::string_view category, std::string_view key) const {
    return PartitionRef{std::string(category), std::string(key), layout_};
  }

  // The partitions of `category` listed in `C:__partitions__` (in the cluster layout also those a
  // reaper is taking out of it, its reaping set, as discovery reads them), sorted by key, with each
  // one's lease, length and groups. not_found when the index is empty and there is neither a stream
  // `C` nor a subscribers set `C:__subscribers__` (a category whose partitions were all reaped
  // keeps it: 0 partitions).
  Result<CategoryView> partitions(std::string_view category);

  // The head of `group` on C:K. `group` may be empty when C:K has exactly one group.
  Result<InspectView> inspect(std::string_view category, std::string_view key,
                              std::string_view group);

  // Acknowledges head `id` of `group` on C:K and deletes the halt record (admin_skip.lua).
  Result<SkipOutcome> skip(std::string_view category, std::string_view key, std::string_view group,
                           std::string_view id);

  // Copies head `id` to C:K:dlq, acknowledges it and deletes the halt record (admin_dlq.lua).
  Result<DlqOutcome> dlq(std::string_view category, std::string_view key, std::string_view group,
                         std::string_view id);

  // The DLQ tools (admin_dlq_tools.cpp). None takes a lease or touches C:K's groups.
  // The entries of C:K:dlq, oldest first, at most `count_max` of them (REQUIRES: > 0).
  Result<DlqListView> dlq_list(std::string_view category, std::string_view key,
                               std::uint64_t count_max);
  // Entry `id` of C:K:dlq; not_found when it holds no such entry.
  Result<DlqEntryView> dlq_show(std::string_view category, std::string_view key,
                                std::string_view id);
  // Deletes every entry of C:K:dlq, or with `before_id` those whose id is lower (XTRIM, one
  // command: an entry added meanwhile is kept or counted, never lost uncounted).
  Result<DlqPurgeOutcome> dlq_purge(std::string_view category, std::string_view key,
                                    std::optional<std::string_view> before_id);
  // Appends a copy of DLQ entry `id` (its original fields, without the ones admin_dlq added) to
  // the tail of C:K, after every event published since, indexes K and deletes the DLQ entry, in
  // one script (admin_dlq_replay.lua). Under the cluster layout, where the index is in another
  // slot, that script without the index runs between a publish's intent steps (publish_intent,
  // publish_done), so a reap still runs wholly before or after the copy. not_found when the DLQ
  // holds no such entry.
  Result<DlqReplayOutcome> dlq_replay(std::string_view category, std::string_view key,
                                      std::string_view id);

  // The group an action on C:K acts for: `group` when C:K has it, the only group when `group` is
  // empty and there is exactly one; invalid otherwise, naming the groups there are.
  Result<std::string> choose_group(std::string_view category, std::string_view key,
                                   std::string_view group);

 private:
  struct StreamCounts {
    std::uint64_t length = 0;         // XLEN
    std::uint64_t entries_added = 0;  // XINFO STREAM entries-added
  };

  // `command` sent, the one way every command goes: on the connection, or through the cluster
  // link to its slot's master. An error reply is a successful Result.
  Result<Reply> execute(const Command& command);
  // `command`'s reply, an error reply mapped to Errc (WRONGTYPE: invalid, else protocol).
  Result<Reply> run(const Command& command);
  // `command`'s reply read as T (decode<T>, reply.h).
  template <typename T>
  Result<T> read(const Command& command);
  Result<std::int64_t> server_time_ms();
  Result<StreamCounts> stream_counts(const std::string& stream);
  script::JournalTail operator_journal(const PartitionRef& partition, const std::string& group,
                                       std::string_view action);
  Status check_partition(std::string_view category, std::string_view key);
  Result<std::vector<GroupView>> groups_of(std::string_view category, std::string_view key,
                                           std::uint64_t entries_added);
  Result<std::optional<LeaseView>> lease_at(const std::string& lease_key);
  Result<std::optional<HeadView>> head_of(const std::string& stream, const std::string& group);
  Result<std::optional<HaltView>> halt_of(const std::string& halt_key);

  BlockingRedis* redis_ = nullptr;  // one connection, or
  RealRuntime* runtime_ = nullptr;  // a cluster link run on this runtime
  RedisLink* cluster_ = nullptr;
  KeyLayout layout_ = KeyLayout::flat;
};

}  // namespace seqby::redis
