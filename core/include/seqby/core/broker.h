// Broker: what the ownership engine needs from a partitioned message store, and nothing more.
// RedisBroker implements it over Redis commands and Lua scripts; the engine never learns which
// broker it talks to. Every call that acts for a partition under ownership takes the Lease it
// acts under and is fenced: it fails with Errc::fenced when that lease is no longer held.
//
// Errors are values: Errc::timeout / Errc::closed (the call may or may not have happened),
// Errc::fenced, Errc::no_group, Errc::protocol. REQUIRES for every call: the arguments outlive the
// returned Task (await it at once, as engine code does).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/capabilities.h"
#include "seqby/core/lease.h"
#include "seqby/core/naming.h"
#include "seqby/core/result.h"
#include "seqby/core/task.h"

namespace seqby {

// One stream entry handed to this consumer.
struct StreamEntry {
  std::string id;                    // stream entry id, e.g. "1700000000000-0"
  std::string type;                  // the entry's `type` field
  std::string data;                  // the entry's `data` field (JSON text)
  std::uint64_t delivery_count = 0;  // reads of this entry by the group so far, this one included
};

// Where a fenced read looks.
enum class ReadFrom : std::uint8_t {
  pending,      // this consumer's own pending entries, oldest first (id 0)
  new_entries,  // the next entry never delivered to the group ('>')
};

// The outcome of an effect commit to the fenced Redis effect sink (optimistic on a per-key seq).
enum class CommitOutcome : std::uint8_t {
  accepted,      // seq == last + 1 under the current lease: applied
  duplicate,     // seq <= last: already applied (by someone), nothing changed
  out_of_order,  // seq > last + 1: a gap, nothing changed
  fenced,        // the lease is not ours: nothing changed
};

const char* commit_outcome_name(CommitOutcome outcome);

struct CommitReply {
  CommitOutcome outcome = CommitOutcome::fenced;
  std::int64_t last_seq = 0;  // the sink's last committed seq after the call (0: none yet)
  std::string committed_by;   // for accepted, and for duplicate of seq == last: the token O:N
                              // that committed last_seq ("" otherwise)
};

// An effect to commit to the fenced effect sink (Broker::fenced_commit's contract): the key's
// commit number `seq` (1, 2, 3, ...) and the effect, opaque text stored verbatim.
struct EffectCommit {
  std::int64_t seq = 0;
  std::string effect;
};

// What the one fenced step between two events asks besides its ack (Broker::fenced_next).
struct NextAsk {
  // New entries ('>') one read may deliver at most. The first is entered now; the rest come back
  // held (NextReply::held) and each is entered only after a later step that names it.
  std::uint32_t count = 1;
  // An entry an earlier read delivered and held: instead of reading, this step is the lease
  // check before entering it ("" reads).
  std::string_view held_id;
  // The effect of the entry this step acknowledges, committed first under the same lease check
  // (a handler's HandlerResult::commit_with_step); null: none. An out-of-order commit
  // acknowledges and reads nothing (NextReply::commit says so).
  const EffectCommit* commit = nullptr;
};

// What the one fenced step between two events answered (Broker::fenced_next).
struct NextReply {
  bool ack_asked = false;            // an entry was to be acknowledged first
  bool acked = false;                // it was acknowledged now (false: it was already, or none)
  std::optional<StreamEntry> entry;  // the next entry; nullopt when there is none
  // With no entry from a read of new entries: the stream's last entry id ("0-0" when empty),
  // after which an idle worker waits for new ones; "" when the broker does not say.
  std::string last_id;
  // Asked about a held entry (NextAsk::held_id): the lease was ours, enter it now.
  bool held_checked = false;
  // A read of new entries that delivered more than one: the entries after `entry`, in id order,
  // delivered to this consumer (pending), not yet entered.
  std::vector<StreamEntry> held;
  // Asked to commit (NextAsk::commit): the sink's answer, accepted or duplicate (then the rest of
  // the step was done) or out_of_order (then nothing was acknowledged or read, ack_asked false).
  std::optional<CommitReply> commit;
  // With `commit` accepted or duplicate: the rest of the step failed after the commit stood
  // (no_group, say, when a failover took the consumer group back): nothing was read, and the
  // entry's ack is for the next step to send (ack_asked false). nullopt: the step was done.
  std::optional<Error> step_failed;
};

// One partition's step in Broker::fenced_steps: fenced_next's arguments (the views and the
// commit pointed to outlive the call).
struct StepCall {
  const Lease* lease = nullptr;
  std::string_view group;
  ReadFrom from = ReadFrom::pending;
  std::string_view ack_id;
  NextAsk ask;
};

// A stream an idle worker waits on (Broker::wait_for_entries): any entry after `after_id`.
struct WatchedStream {
  PartitionRef partition;
  std::string after_id;
};

// The longest an engine's wait_for_entries blocks: a link that carries those waits must allow a
// command this long plus its own round-trip timeout. A wake-up ends a read at once (an entry, a
// ring of its doorbell); this bounds how often an idle instance re-sends each read (10 s keeps
// 10,000 idle partitions, 40 channels, at 4 reads a second) and how long a read lost on a live
// connection holds back its channel's wake-ups (this plus that timeout).
inline constexpr std::uint64_t kWakeBlockMsMax = 10'000;

class Broker {
 public:
  virtual ~Broker() = default;
  Broker() = default;
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // What this broker supports (RedisBroker: STREAM_PARTITIONING among others).
  virtual CapabilitySet capabilities() const = 0;

  // Appends an entry {type, data} to the partition stream and adds the key to the category's
  // partition index, atomically. Returns the new entry id.
  virtual Task<Result<std::string>> publish(const PartitionRef& partition, std::string_view type,
                                            std::string_view data_json) = 0;

  // The keys in the category's partition index, sorted.
  virtual Task<Result<std::vector<std::string>>> partitions(std::string_view category) = 0;
  // How many keys the category's partition index holds (SCARD, where partitions() reads every
  // member): the read a discovery cycle makes first, to learn whether the index changed before
  // it reads ten thousand keys again (Membership: the index count's gate). Default:
  // Errc::unsupported, and discovery reads the whole index every cycle.
  virtual Task<Result<std::uint64_t>> partition_count(std::string_view category);

  // Membership of the engine instances serving (category, group), for fair sharing. announce
  // marks `owner_id` live for `ttl_ms`; live_members lists live owners, sorted; leave removes one.
  virtual Task<Status> announce_member(std::string_view category, std::string_view group,
                                       std::string_view owner_id, std::uint64_t ttl_ms) = 0;
  virtual Task<Result<std::vector<std::string>>> live_members(std::string_view category,
                                                              std::string_view group) = 0;
  virtual Task<Status> leave_members(std::string_view category, std::string_view group,
                                     std::string_view owner_id) = 0;

  // Adds `group` to the category's subscriber set C:__subscribers__ (idempotent): from then on
  // no partition C:K is reaped while `group` has no consumer group on it, so a group that has
  // not joined a partition yet (down, not started, its slots full) never loses its events.
  virtual Task<Status> subscribe(std::string_view category, std::string_view group) = 0;

  // Takes the lease of `partition` for `scope` at a fresh generation, for `ttl_ms`. nullopt when
  // another owner holds it. A lease this owner still holds (an earlier reply was lost) is
  // replaced at a fresh generation. REQUIRES: owner_id has no colon.
  virtual Task<Result<std::optional<Lease>>> acquire(const PartitionRef& partition,
                                                     std::string_view scope,
                                                     std::string_view owner_id,
                                                     std::uint64_t ttl_ms) = 0;
  // Extends the lease to `ttl_ms` from now if it is still exactly ours; else Errc::fenced.
  virtual Task<Status> renew(const Lease& lease, std::uint64_t ttl_ms) = 0;
  // Deletes the lease if it is still ours. Returns whether it was.
  virtual Task<Result<bool>> release(const Lease& lease) = 0;
  // A fenced no-op: ok while the lease is ours.
  virtual Task<Status> check_lease(const Lease& lease) = 0;

  // Creates `group` on the partition stream at id 0 (creating the stream); ok if it exists.
  virtual Task<Status> ensure_group(const PartitionRef& partition, std::string_view group) = 0;
  // Fenced: moves every pending entry of the group's other consumers to consumer lease.token(),
  // without counting a delivery. Returns the number of entries now owned through this call.
  virtual Task<Result<std::uint64_t>> reclaim(const Lease& lease, std::string_view group) = 0;
  // Fenced: deletes the group's older-generation consumers whose pending list is empty.
  // Returns how many were deleted.
  virtual Task<Result<std::uint64_t>> drop_stale_consumers(const Lease& lease,
                                                           std::string_view group) = 0;
  // Fenced: reads at most one entry for consumer lease.token(). nullopt when none.
  virtual Task<Result<std::optional<StreamEntry>>> fenced_read(const Lease& lease,
                                                               std::string_view group,
                                                               ReadFrom from) = 0;
  // Fenced: acknowledges `id`. Acknowledging an entry twice is ok.
  virtual Task<Status> fenced_ack(const Lease& lease, std::string_view group,
                                  std::string_view id) = 0;
  // The fenced Redis effect sink, an OCC sink a handler may commit through
  // (HandlerContext::commit): applies `effect` as the key's commit number `seq` (1, 2, 3, ...)
  // for `group` when seq == last + 1, under the current lease. A FENCED refusal is
  // CommitOutcome::fenced, not an error.
  virtual Task<Result<CommitReply>> fenced_commit(const Lease& lease, std::string_view group,
                                                  std::int64_t seq, std::string_view effect) = 0;

  // The engine's steps at scale (docs/ARCHITECTURE.md "One script per event", "Idle partitions
  // are woken"). Each has a default built on the single calls above, so a broker without them
  // still serves the engine, one round trip per step.
  //
  // Fenced: acknowledges `ack_id` (unless empty), then, under the same lease check, either reads
  // for consumer lease.token() (at most ask.count new entries, at most one pending entry) or, for
  // ask.held_id, answers held_checked: the ack of one event and the lease check before entering
  // the next in one step. With ask.commit, the commit to the fenced effect sink comes first, under
  // the same check; a FENCED refusal is then Errc::fenced for the whole step (nothing committed).
  // Default: fenced_commit, fenced_ack, then check_lease or fenced_read (one entry).
  virtual Task<Result<NextReply>> fenced_next(const Lease& lease, std::string_view group,
                                              ReadFrom from, std::string_view ack_id, NextAsk ask);
  // The step that reads at most one entry (NextAsk{}).
  Task<Result<NextReply>> fenced_next(const Lease& lease, std::string_view group, ReadFrom from,
                                      std::string_view ack_id) {
    return fenced_next(lease, group, from, ack_id, NextAsk{});
  }
  // The steps of several partitions at once (docs/ARCHITECTURE.md "Steps of many partitions in
  // one script"): each exactly as fenced_next runs it, under a lease check of its own, one result
  // per step in order; one step's refusal or failure is its own. A transport error is every
  // step's (each may or may not have been decided). REQUIRES: the steps are of distinct
  // partitions; steps.size() <= steps_per_call_max(). Default: one fenced_next after the other.
  virtual Task<std::vector<Result<NextReply>>> fenced_steps(const std::vector<StepCall>& steps);
  // How many steps one fenced_steps takes in one round trip (1: it saves nothing). Default 1.
  virtual std::size_t steps_per_call_max() const;
  // Renews every lease of `leases` as renew() does, each independently: per lease, in order, Ok
  // (renewed), Errc::fenced (refused: it is not ours) or the error of the call that carried it
  // (no answer: it may or may not have been renewed). A broker that sends the leases in several
  // calls answers each lease by its own call, so a server that does not answer costs only the
  // leases it serves. REQUIRES: every lease is of one owner. Default: renew one by one; after a
  // renewal that got no answer the rest answer that error unsent.
  virtual Task<std::vector<Status>> renew_many(const std::vector<Lease>& leases,
                                               std::uint64_t ttl_ms);
  // renew_many of `*leases`, a set the caller does not change while it passes the same pointer
  // (the heartbeat's, from one round to the next): a broker may keep what it made of it for the
  // next call. Default: renew_many.
  virtual Task<std::vector<Status>> renew_kept(std::shared_ptr<const std::vector<Lease>> leases,
                                               std::uint64_t ttl_ms);
  // Acquires the leases of `partitions` as acquire() does, in order, until `want` were granted:
  // per partition tried (a prefix of `partitions`), its new lease or nullopt (another owner
  // holds it). An error: no answer, any may or may not have been granted. REQUIRES: want >= 1.
  // Default: acquire one by one.
  virtual Task<Result<std::vector<std::optional<Lease>>>> acquire_many(
      const std::vector<PartitionRef>& partitions, std::string_view scope,
      std::string_view owner_id, std::uint64_t ttl_ms, std::size_t want);
  // How many failovers the broker has seen so far: a server it writes to replaced by a replica,
  // which may lack a suffix of the writes the old one acknowledged (a cluster's slot map naming
  // a new master). Never falls. Default 0 (a broker that cannot tell).
  virtual std::uint64_t failovers_seen() const;
  // `partition` spelled in the broker's key layout, for a unit no acquire laid out (a key read
  // from the index and served without a lease: the known-broken shared-group variants).
  // Default: as given.
  virtual PartitionRef laid_out(const PartitionRef& partition) const;
  // How many wait_for_entries may be in flight at once, on channels 0 .. wake_channels() - 1
  // (each a connection of its own). Default 1 (whose wait is unsupported).
  virtual std::size_t wake_channels() const;
  // A wake-up, not a decision (nothing fenced, nothing changed): waits on `channel` up to
  // `block_ms` until a stream of `streams` holds an entry after its after_id, or
  // ring_wake(unit_category, owner_id, channel) rang. Returns the indexes into `streams` of those
  // that hold one (empty: the time ran out, or the doorbell rang). Errc::unsupported when the
  // broker cannot wait: the engine then polls. REQUIRES: channel < wake_channels(). Default:
  // unsupported.
  virtual Task<Result<std::vector<std::size_t>>> wait_for_entries(
      std::string_view unit_category, std::string_view owner_id, std::size_t channel,
      const std::vector<WatchedStream>& streams, std::uint64_t block_ms);
  // Ends the wait_for_entries of (unit_category, owner_id, channel) now, or the next one at once
  // if none is waiting yet. Default: unsupported.
  virtual Task<Status> ring_wake(std::string_view unit_category, std::string_view owner_id,
                                 std::size_t channel);

  // Operating partitions (ADR decisions 6 and 7).
  // Fenced: records that the partition halted for `group` on head `id` (why, since when, by
  // whom), where operators see it. An operator's skip or dlq of the head clears it.
  virtual Task<Status> record_halt(const Lease& lease, std::string_view group, std::string_view id,
                                   std::string_view reason, std::uint64_t delivery_count) = 0;
  // The lowest pending entry id of `group` on the partition, or nullopt when nothing is pending.
  virtual Task<Result<std::optional<std::string>>> pending_head(const PartitionRef& partition,
                                                                std::string_view group) = 0;
  // Fenced: removes the partition (stream, index entry, lease) when every subscribed group of the
  // category has a consumer group on it, every group has consumed and acknowledged every entry,
  // and nothing was appended for `idle_ms`, atomically with respect to a concurrent publish.
  // Returns whether it did. The generation counter is kept.
  virtual Task<Result<bool>> reap(const Lease& lease, std::uint64_t idle_ms) = 0;
  // Fenced: puts the unit of `lease`, which discovery found in no index, back into the index of
  // each of its categories whose stream holds entries (a failover to a replica that lacked the
  // publish's index entry, an operator's SREM: a reap takes the key out only with its stream).
  // Returns whether any stream holds entries (false: the unit was reaped, release it);
  // Errc::fenced when the lease is not held.
  virtual Task<Result<bool>> reindex(const Lease& lease) = 0;
};

}  // namespace seqby
