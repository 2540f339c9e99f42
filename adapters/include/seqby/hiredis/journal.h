// The decision journal of a real-Redis run or production engine (docs/ARCHITECTURE.md "The
// decision journal"): every deciding Lua script appends its own decision, in the same script, to
// the journal stream of its lease unit (journal_stream_name: C:K:__journal__, or
// __pm__:P:X:__journal__ for a process manager's correlation value), so a kill can never separate
// a decision from its record. Records that no script decides (a run header, a fault a driver
// struck, an engine's warning or resume) are notes (one XADD each: nothing to decide), in the
// unit's journal or the category's (category_journal_name). Entries are history fields
// (seqby/core/history.h kHistoryFields); an entry's time is its id's.
//
// read_journal() merges every journal of a scope into one history for the checker. Within one
// journal the order is the server's exactly (everything about one partition is in one stream);
// across journals entries are merged by their id's server time, and at equal milliseconds the
// category journals come first, then partition journals, then process-manager journals, so that a
// publish or an operator's resolution precedes a process manager's step on it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/broker/script_contracts.h"
#include "seqby/core/history.h"
#include "seqby/core/runtime.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/redis_history.h"

namespace seqby::redis {

// The journal retention every test, scenario and chaos run uses (records per unit journal).
inline constexpr std::uint64_t kTestJournalMaxlen = 1000000;

// What read_journal() reads: the journals of `categories` (C:__journal__ and every
// C:K:__journal__) and of `process_managers` (every __pm__:P:X:__journal__); with a non-empty
// `group`, records naming another group are left out (a record naming none is kept).
struct JournalScope {
  std::vector<std::string> categories;
  std::vector<std::string> process_managers;
  std::string group;
};

// One journal entry as read: its stream, id and record (index 0).
struct JournalEntry {
  std::string stream;
  std::string id;
  HistoryRecord record;
};

// Whether `op` is journaled by the scripts themselves (script_contracts.h Journaled scripts and
// the record handler's enter/exit), so that an engine's own record of it is redundant when the
// journal is on. The others (warn, resume, fault, a variant's dlq) are notes.
bool journaled_by_scripts(HistoryOp op);

// The merged history of per-stream entry lists (each in stream order), indices 0, 1, 2, ...
// `categories` names the categories whose C:__journal__ holds notes (they may hold colons);
// empty: a journal name with one colon before the token is a category's.
std::vector<HistoryRecord> merge_journals(std::vector<std::vector<JournalEntry>> streams,
                                          const std::vector<std::string>& categories = {});

// The entries of one XRANGE reply of journal `stream`, in stream order, each record's time its
// id's milliseconds (index 0). Errc::invalid naming the stream and entry for an entry that is not
// a history record, Errc::protocol for a reply of another shape or an entry id that is not MS-SEQ.
Result<std::vector<JournalEntry>> journal_entries_from_xrange(const Reply& reply,
                                                              const std::string& stream);

// The journal streams of `scope`, found with SCAN, sorted by name.
Result<std::vector<std::string>> journal_streams(BlockingRedis& redis, const JournalScope& scope);

// Every record of the journals of `scope`, merged (merge_journals). Errc::invalid naming the
// stream and entry for an entry that is not a history record.
Result<std::vector<HistoryRecord>> read_journal(BlockingRedis& redis, const JournalScope& scope);

// The masters of the Redis Cluster `seed` is a node of, from its CLUSTER SLOTS (each with the
// seed's settings): Errc::protocol for a reply of another shape (a server not in cluster mode
// answers an error) or a map that serves no slot.
Result<std::vector<RedisConfig>> cluster_masters(BlockingRedis& seed);
// The journals of `scope` on a Redis Cluster (the cluster key layout: each unit's journal is in
// its unit's slot): read on every master cluster_masters(seed) names, then merged as
// read_journal merges them. A master that cannot be read fails the whole read, named.
Result<std::vector<HistoryRecord>> read_cluster_journal(BlockingRedis& seed,
                                                        const JournalScope& scope);

// The XADD appending `record` as a note to `stream` (MAXLEN ~ maxlen; its index and time are not
// written: the entry id is the time).
Command journal_note_command(std::string stream, std::uint64_t maxlen, const HistoryRecord& record);
// Appends `record` as a note to `stream`, waiting for the reply.
Status append_journal_note(BlockingRedis& redis, std::string stream, std::uint64_t maxlen,
                           const HistoryRecord& record);

// Publishes an event through `broker` (RedisBroker::publish_with_journal: publish.lua, or under
// the cluster layout its three steps) journaling the publish, with `node`, the publisher's
// per-key `seq` (-1: none) and `detail` (e.g. "poison"), in the script that appends the entry.
// Returns the entry id. REQUIRES: maxlen >= 1.
Task<Result<std::string>> publish_journaled(RedisBroker& broker, const PartitionRef& partition,
                                            std::string_view type, std::string_view data_json,
                                            std::uint64_t maxlen, std::string_view node,
                                            std::int64_t seq, std::string_view detail);

// The journal a note about `record` goes to: its unit's (a process manager's value when
// `process_manager` is not empty), spelled in `layout`, or its category's when it names no key.
std::string note_stream_for(const HistoryRecord& record, std::string_view process_manager,
                            KeyLayout layout = KeyLayout::flat);

// The history sink of an engine whose broker journals (RedisBrokerOptions::journal_maxlen): an
// engine record of a step the scripts journal is dropped (the journal has it, exactly); any other
// record is appended as a note (note_stream_for) without blocking the caller, in record() order
// (AppendQueue). What could not be written is counted: failed() (the append failed), dropped()
// (the queue was full), and at stop unwritten() (still queued when flush() gave up).
class JournalNoteSink final : public HistorySink {
 public:
  // REQUIRES: `runtime` and `link` outlive the sink; record() on the runtime's loop.
  JournalNoteSink(Runtime& runtime, RedisLink& link, std::uint64_t maxlen,
                  std::string process_manager, KeyLayout layout = KeyLayout::flat,
                  std::size_t queue_max = 1u << 16);

  void record(HistoryRecord record) override;
  Task<void> flush(std::uint64_t wait_max_ms) { return appends_.flush(wait_max_ms); }

  std::uint64_t written() const { return appends_.written(); }
  std::uint64_t failed() const { return appends_.failed(); }
  std::uint64_t dropped() const { return appends_.dropped(); }
  std::uint64_t unwritten() const { return appends_.unwritten(); }

 private:
  std::uint64_t maxlen_;
  std::string process_manager_;
  KeyLayout layout_;
  AppendQueue appends_;
};

}  // namespace seqby::redis
