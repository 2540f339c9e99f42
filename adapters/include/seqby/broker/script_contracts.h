// The calling contract of every embedded Lua script (scripts.h, adapters/lua/*.lua), declared
// once: its KEYS and ARGV as a typed Args struct whose field tables `keys` and `argv` give their
// order, and its reply as a typed decode. encode<S>() turns Args into KEYS/ARGV, decode_args<S>()
// reads them back (from an EVAL/EVALSHA command too), S::decode_reply() reads the reply. The
// broker, `seqby admin` and the simulator's history stamping all go through these, so no caller
// indexes a script's KEYS or ARGV by position. The generated unfenced_read/ack/commit
// (cmake/embed_scripts.cmake: the fenced script minus its lease check) share their fenced
// script's contract: S::unfenced_name. The Lua text is the source of truth for each line here.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/broker.h"
#include "seqby/core/result.h"

namespace seqby::redis {

// One script call's KEYS and ARGV, in order.
struct ScriptCall {
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

// {verb, body, numkeys, KEYS..., ARGV...}: "EVAL" with the script text, or "EVALSHA" with its sha.
Command eval_command(std::string_view verb, std::string_view body, const ScriptCall& call);
// A view of one call's KEYS and ARGV, e.g. inside the EVAL command that carries them.
struct ScriptCallView {
  std::span<const std::string> keys;
  std::span<const std::string> args;
};

// The KEYS and ARGV of an EVAL or EVALSHA command (views into it); nullopt for another command
// or a bad numkeys.
std::optional<ScriptCallView> script_call_of(const Command& command);
// Whether `command` runs the script whose sha is `sha` (EVALSHA) or whose text is `source` (EVAL).
bool runs_script(const Command& command, std::string_view sha, std::string_view source);

namespace script {

// The decision journal's part of a call (adapters/lua/lib/journal.lua, docs/ARCHITECTURE.md "The
// decision journal"): the journal stream of the lease unit, appended after the script's own KEYS,
// and the record's fields the script cannot know, appended after its own ARGV. A journaled
// script (S::journaled) with an empty `stream` journals nothing, and its call is exactly the
// call without a journal.
struct JournalTail {
  std::string stream;            // KEYS[n+1] UNIT:__journal__
  std::uint64_t maxlen = 0;      // ARGV[m+1] MAXLEN ~ of the stream (>= 1 when journaling)
  std::string node;              // ARGV[m+2] owner id ("" for a publisher or an operator)
  std::string category;          // ARGV[m+3]
  std::string key;               // ARGV[m+4] partition key or correlation value
  std::string group;             // ARGV[m+5]
  std::uint64_t generation = 0;  // ARGV[m+6] the lease's (acquire journals its new one)
  std::int64_t seq = -1;         // ARGV[m+7] the publisher's per-key seq, -1 unknown
  std::string detail;            // ARGV[m+8] the caller's detail (publish: e.g. "poison")

  bool on() const { return !stream.empty(); }
};
inline constexpr std::size_t kJournalTailArgs = 8;

namespace detail {
// One KEYS or ARGV value: text as it is, integers in decimal, ReadFrom as "0" (pending) or ">"
// (new entries); a std::vector<std::string> field takes every value left (the last field only).
void put(std::vector<std::string>* out, const std::string& value);
void put(std::vector<std::string>* out, std::int64_t value);
void put(std::vector<std::string>* out, std::uint64_t value);
void put(std::vector<std::string>* out, ReadFrom value);
void put(std::vector<std::string>* out, const std::vector<std::string>& values);
void put(std::vector<std::string>* out, std::string&& value);
void put(std::vector<std::string>* out, std::vector<std::string>&& values);
bool take(std::span<const std::string> in, std::size_t* at, std::string* value);
bool take(std::span<const std::string> in, std::size_t* at, std::int64_t* value);
bool take(std::span<const std::string> in, std::size_t* at, std::uint64_t* value);
bool take(std::span<const std::string> in, std::size_t* at, ReadFrom* value);
bool take(std::span<const std::string> in, std::size_t* at, std::vector<std::string>* values);

template <typename Args, typename Table>
void put_all(std::vector<std::string>* out, const Args& args, const Table& table) {
  out->reserve(std::tuple_size_v<Table>);
  std::apply([&](auto... member) { (put(out, args.*member), ...); }, table);
}

template <typename Args, typename Table>
void move_all(std::vector<std::string>* out, Args& args, const Table& table) {
  out->reserve(std::tuple_size_v<Table>);
  std::apply([&](auto... member) { (put(out, std::move(args.*member)), ...); }, table);
}

template <typename Args, typename Table>
bool take_all(std::span<const std::string> in, Args* args, const Table& table) {
  std::size_t at = 0;
  const bool read =
      std::apply([&](auto... member) { return (take(in, &at, &(args->*member)) && ...); }, table);
  return read && at == in.size();
}
}  // namespace detail

// Whether S's script journals its decision (its Args has a JournalTail `journal`).
template <typename S>
concept Journaled = requires(typename S::Args args) {
  { args.journal } -> std::convertible_to<JournalTail>;
};

namespace detail {
void put_journal(ScriptCall* call, const JournalTail& tail);
bool take_journal(const ScriptCallView& tail, JournalTail* out);
}  // namespace detail

// KEYS and ARGV of `args`, in the order of S::keys and S::argv (then the journal tail, if on).
template <typename S>
ScriptCall encode(const typename S::Args& args) {
  ScriptCall call;
  detail::put_all(&call.keys, args, S::keys);
  detail::put_all(&call.args, args, S::argv);
  if constexpr (Journaled<S>) {
    if (args.journal.on()) detail::put_journal(&call, args.journal);
  }
  return call;
}

// The same, moving the values out of `args`.
template <typename S>
ScriptCall encode(typename S::Args&& args) {
  ScriptCall call;
  detail::move_all(&call.keys, args, S::keys);
  detail::move_all(&call.args, args, S::argv);
  if constexpr (Journaled<S>) {
    if (args.journal.on()) detail::put_journal(&call, args.journal);
  }
  return call;
}

// The Args of a call of S; nullopt when the counts or a value's form do not fit S's contract.
template <typename S>
std::optional<typename S::Args> decode_args(const ScriptCallView& call) {
  typename S::Args args{};
  ScriptCallView own = call;
  if constexpr (Journaled<S>) {
    constexpr std::size_t keys = std::tuple_size_v<std::decay_t<decltype(S::keys)>>;
    constexpr std::size_t argv = std::tuple_size_v<std::decay_t<decltype(S::argv)>>;
    if (call.keys.size() == keys + 1 && call.args.size() == argv + kJournalTailArgs) {
      own = ScriptCallView{call.keys.first(keys), call.args.first(argv)};
      if (!detail::take_journal(ScriptCallView{call.keys.subspan(keys), call.args.subspan(argv)},
                                &args.journal)) {
        return std::nullopt;
      }
    }
  }
  if (!detail::take_all(own.keys, &args, S::keys) || !detail::take_all(own.args, &args, S::argv)) {
    return std::nullopt;
  }
  return args;
}

template <typename S>
std::optional<typename S::Args> decode_args(const ScriptCall& call) {
  return decode_args<S>(ScriptCallView{call.keys, call.args});
}

// The same for an EVAL/EVALSHA command (the caller knows it runs S: by its sha or text).
template <typename S>
std::optional<typename S::Args> decode_args(const Command& command) {
  std::optional<ScriptCallView> call = script_call_of(command);
  if (!call.has_value()) return std::nullopt;
  return decode_args<S>(*call);
}

// S::decode_reply of a transport result: a transport error is passed on as it is.
template <typename S>
Result<typename S::Out> decode_reply(const Result<Reply>& reply) {
  if (!reply.ok()) return reply.error();
  return S::decode_reply(reply.value());
}

// --- the contracts, one per script (KEYS[i] / ARGV[i] as the script's header names them) -----

struct Publish {
  static constexpr std::string_view name = "publish";
  struct Args {
    std::string stream;        // KEYS[1] C:K
    std::string index;         // KEYS[2] C:__partitions__
    std::string key;           // ARGV[1] K
    std::string type;          // ARGV[2] event type
    std::string data;          // ARGV[3] event data (JSON)
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::stream, &Args::index};
  static constexpr auto argv = std::tuple{&Args::key, &Args::type, &Args::data};
  using Out = std::string;  // the new entry id
  static Result<Out> decode_reply(const Reply& reply);
};

struct AnnounceMember {
  static constexpr std::string_view name = "announce_member";
  struct Args {
    std::string member;        // KEYS[1] C:__member__:G:O
    std::string members;       // KEYS[2] C:__members__:G
    std::string owner_id;      // ARGV[1]
    std::uint64_t ttl_ms = 0;  // ARGV[2]
  };
  static constexpr auto keys = std::tuple{&Args::member, &Args::members};
  static constexpr auto argv = std::tuple{&Args::owner_id, &Args::ttl_ms};
  using Out = std::int64_t;  // 1
  static Result<Out> decode_reply(const Reply& reply);
};

struct LiveMembers {
  static constexpr std::string_view name = "live_members";
  struct Args {
    std::string members;                   // KEYS[1] C:__members__:G
    std::vector<std::string> member_keys;  // KEYS[2..n] C:__member__:G:O of each owner
    std::vector<std::string> owners;       // ARGV[1..n-1], aligned with KEYS[2..n]
  };
  static constexpr auto keys = std::tuple{&Args::members, &Args::member_keys};
  static constexpr auto argv = std::tuple{&Args::owners};
  using Out = std::vector<std::string>;  // the live owner ids, in argument order
  static Result<Out> decode_reply(const Reply& reply);
};

struct Acquire {
  static constexpr std::string_view name = "acquire";
  struct Args {
    std::string lease;         // KEYS[1] the lease key
    std::string fence;         // KEYS[2] C:K:__fence__
    std::string owner_id;      // ARGV[1] (no colon)
    std::uint64_t ttl_ms = 0;  // ARGV[2]
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::fence};
  static constexpr auto argv = std::tuple{&Args::owner_id, &Args::ttl_ms};
  using Out = std::optional<std::uint64_t>;  // the new generation (>= 1), nullopt: held by another
  static Result<Out> decode_reply(const Reply& reply);
};

struct Renew {
  static constexpr std::string_view name = "renew";
  struct Args {
    std::string lease;         // KEYS[1]
    std::string token;         // ARGV[1] O:N
    std::uint64_t ttl_ms = 0;  // ARGV[2]
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease};
  static constexpr auto argv = std::tuple{&Args::token, &Args::ttl_ms};
  using Out = std::int64_t;  // 1, or FENCED
  static Result<Out> decode_reply(const Reply& reply);
};

struct Release {
  static constexpr std::string_view name = "release";
  struct Args {
    std::string lease;         // KEYS[1]
    std::string token;         // ARGV[1] O:N
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease};
  static constexpr auto argv = std::tuple{&Args::token};
  using Out = bool;  // the lease was ours and is deleted
  static Result<Out> decode_reply(const Reply& reply);
};

struct CheckLease {
  static constexpr std::string_view name = "check_lease";
  struct Args {
    std::string lease;  // KEYS[1]
    std::string token;  // ARGV[1] O:N
  };
  static constexpr auto keys = std::tuple{&Args::lease};
  static constexpr auto argv = std::tuple{&Args::token};
  using Out = std::int64_t;  // 1, or FENCED
  static Result<Out> decode_reply(const Reply& reply);
};

// The holder's repair of a unit the index lost (reindex.lua): which of its streams exist, each
// stream's key put back into its category's index when the indexes are given (one server).
struct Reindex {
  static constexpr std::string_view name = "reindex";
  struct Args {
    std::string lease;                 // KEYS[1]
    std::vector<std::string> streams;  // KEYS[2..1+n]
    std::vector<std::string> indexes;  // KEYS[2+n..1+2n]: one per stream, or none (cluster)
    std::string token;                 // ARGV[1] O:N
    std::uint64_t count = 0;           // ARGV[2] n
    std::string key;                   // ARGV[3] the unit's key
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::streams, &Args::indexes};
  static constexpr auto argv = std::tuple{&Args::token, &Args::count, &Args::key};
  using Out = std::vector<bool>;  // per stream: it exists (a '1' or '0' each), or FENCED
  static Result<Out> decode_reply(const Reply& reply);
};

struct Reclaim {
  static constexpr std::string_view name = "reclaim";
  struct Args {
    std::string lease;                 // KEYS[1]
    std::string stream;                // KEYS[2] C:K
    std::string token;                 // ARGV[1] O:N (the consumer claiming)
    std::string group;                 // ARGV[2]
    std::uint64_t count_per_call = 0;  // ARGV[3] XAUTOCLAIM COUNT
    std::uint64_t calls_max = 0;       // ARGV[4] XAUTOCLAIM calls at most
    std::string cursor;                // ARGV[5] start cursor, "0-0" to start
    JournalTail journal = {};          // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream};
  static constexpr auto argv = std::tuple{&Args::token, &Args::group, &Args::count_per_call,
                                          &Args::calls_max, &Args::cursor};
  struct Out {
    std::uint64_t claimed = 0;
    std::string cursor;  // "0-0" when the pending list has been scanned
  };
  static Result<Out> decode_reply(const Reply& reply);
};

struct DropStaleConsumers {
  static constexpr std::string_view name = "drop_stale_consumers";
  struct Args {
    std::string lease;             // KEYS[1]
    std::string stream;            // KEYS[2] C:K
    std::string token;             // ARGV[1] O:N
    std::string group;             // ARGV[2]
    std::uint64_t generation = 0;  // ARGV[3] N
    JournalTail journal = {};      // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream};
  static constexpr auto argv = std::tuple{&Args::token, &Args::group, &Args::generation};
  using Out = std::uint64_t;  // consumers deleted
  static Result<Out> decode_reply(const Reply& reply);
};

struct FencedRead {
  static constexpr std::string_view name = "fenced_read";
  static constexpr std::string_view unfenced_name = "unfenced_read";
  struct Args {
    std::string lease;                  // KEYS[1]
    std::string stream;                 // KEYS[2] C:K
    std::string token;                  // ARGV[1] O:N, also the consumer name
    std::string group;                  // ARGV[2]
    ReadFrom from = ReadFrom::pending;  // ARGV[3] "0" or ">"
    JournalTail journal = {};           // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream};
  static constexpr auto argv = std::tuple{&Args::token, &Args::group, &Args::from};
  using Out = std::optional<StreamEntry>;  // nullopt: nothing to read
  static Result<Out> decode_reply(const Reply& reply);
};

struct FencedAck {
  static constexpr std::string_view name = "fenced_ack";
  static constexpr std::string_view unfenced_name = "unfenced_ack";
  struct Args {
    std::string lease;         // KEYS[1]
    std::string stream;        // KEYS[2] C:K
    std::string token;         // ARGV[1] O:N
    std::string group;         // ARGV[2]
    std::string entry_id;      // ARGV[3]
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream};
  static constexpr auto argv = std::tuple{&Args::token, &Args::group, &Args::entry_id};
  using Out = std::int64_t;  // entries acknowledged, 0 or 1
  static Result<Out> decode_reply(const Reply& reply);
};

// What a step asked, as much as its reply needs to be read (fenced_next, fenced_commit_next, and
// each step of fenced_steps). A step in the steady state (an ack and a held entry asked; with a
// commit, the commit accepted) is answered by its ack's count alone, 0 or 1 (lib/next_step.lua
// enter_held, lib/commit_next.lua steady_step), which stands for fenced_commit_next's
// [accepted, seq, token, count, "", held] or fenced_next's [count, "", held].
struct StepAsked {
  bool with_commit = false;
  bool ack_and_held = false;  // an entry to acknowledge and a held entry to enter
  std::int64_t seq = 0;       // with_commit
  std::string token;          // with_commit: O:N, the committer an accepted commit names
};

// The engine's one script per event (docs/ARCHITECTURE.md "One script per event").
struct FencedNext {
  static constexpr std::string_view name = "fenced_next";
  static constexpr std::string_view unfenced_name = "unfenced_next";
  struct Args {
    std::string lease;                  // KEYS[1]
    std::string stream;                 // KEYS[2] C:K
    std::string token;                  // ARGV[1] O:N, also the consumer name
    std::string group;                  // ARGV[2]
    ReadFrom from = ReadFrom::pending;  // ARGV[3] "0" or ">"
    std::string ack_id;                 // ARGV[4] the entry to acknowledge first ("" none)
    std::uint64_t count = 1;            // ARGV[5] new entries one read delivers at most
    std::string held_id;                // ARGV[6] a held entry to check for, not read ("" none)
    JournalTail journal = {};           // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream};
  static constexpr auto argv = std::tuple{&Args::token,  &Args::group, &Args::from,
                                          &Args::ack_id, &Args::count, &Args::held_id};
  using Out = NextReply;
  static Result<Out> decode_reply(const Reply& reply);  // a reply in full
  // What `args` asks, and its reply, in full or in short, read as `asked` says.
  static StepAsked asked(const Args& args);
  static Result<Out> decode_reply(const Reply& reply, const StepAsked& asked);
};

// The heartbeat's renew of many leases (renew_many.lua): not a JournalTail script, its journal
// fields ride per lease.
struct RenewMany {
  static constexpr std::string_view name = "renew_many";
  struct Args {
    std::vector<std::string> keys;     // KEYS: the lease keys, then (journaling) their journals
    std::uint64_t ttl_ms = 0;          // ARGV[1]
    std::uint64_t journal_maxlen = 0;  // ARGV[2] 0: no journal
    std::string node;                  // ARGV[3] owner id
    std::string group;                 // ARGV[4]
    std::vector<std::string> leases;   // ARGV[5..] per lease: token (journaling: category, key,
                                       // generation too)
  };
  static constexpr auto keys = std::tuple{&Args::keys};
  static constexpr auto argv =
      std::tuple{&Args::ttl_ms, &Args::journal_maxlen, &Args::node, &Args::group, &Args::leases};
  using Out = std::vector<bool>;  // per lease: renewed (the reply: a '1' or '0' per lease)
  static Result<Out> decode_reply(const Reply& reply);
};

// Discovery's acquire of many leases (acquire_many.lua).
struct AcquireMany {
  static constexpr std::string_view name = "acquire_many";
  struct Args {
    // KEYS: lease keys, fence counters, (journaling) journals, then streams_per_unit streams of
    // each unit (C:K, or a process manager's C:X of each category), unit by unit
    std::vector<std::string> keys;
    std::string owner_id;                // ARGV[1]
    std::uint64_t ttl_ms = 0;            // ARGV[2]
    std::uint64_t want = 0;              // ARGV[3] >= 1
    std::uint64_t journal_maxlen = 0;    // ARGV[4] 0: no journal
    std::string group;                   // ARGV[5]
    std::uint64_t streams_per_unit = 0;  // ARGV[6] 0: the units' streams are not looked at
    std::vector<std::string> units;      // ARGV[7..] journaling: per partition category, key
  };
  static constexpr auto keys = std::tuple{&Args::keys};
  static constexpr auto argv =
      std::tuple{&Args::owner_id, &Args::ttl_ms,           &Args::want, &Args::journal_maxlen,
                 &Args::group,    &Args::streams_per_unit, &Args::units};
  // Per partition tried: its new generation (> 0); 0 with `no_partition` empty when another
  // owner holds the lease; else why the unit is no partition ("no stream C:K", "C:K is a
  // string, not a stream") and its lease was not taken.
  struct Tried {
    std::uint64_t generation = 0;
    std::string no_partition;
  };
  using Out = std::vector<Tried>;
  static Result<Out> decode_reply(const Reply& reply);
};

// An instance's doorbell (ring_wake.lua): interrupts its blocking read over its idle streams.
struct RingWake {
  static constexpr std::string_view name = "ring_wake";
  struct Args {
    std::string doorbell;      // KEYS[1] UNIT_CATEGORY:__wake__:O
    std::uint64_t ttl_ms = 0;  // ARGV[1]
  };
  static constexpr auto keys = std::tuple{&Args::doorbell};
  static constexpr auto argv = std::tuple{&Args::ttl_ms};
  using Out = std::string;  // the ring's entry id
  static Result<Out> decode_reply(const Reply& reply);
};

struct FencedCommit {
  static constexpr std::string_view name = "fenced_commit";
  static constexpr std::string_view unfenced_name = "unfenced_commit";
  struct Args {
    std::string lease;         // KEYS[1]
    std::string sink;          // KEYS[2] C:K:__sink__:G (last_seq, last_token)
    std::string effects;       // KEYS[3] C:K:__effects__:G (seq -> effect)
    std::string token;         // ARGV[1] O:N
    std::int64_t seq = 0;      // ARGV[2]
    std::string effect;        // ARGV[3] stored verbatim
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::sink, &Args::effects};
  static constexpr auto argv = std::tuple{&Args::token, &Args::seq, &Args::effect};
  using Out = CommitReply;  // a FENCED reply is CommitOutcome::fenced, not an error
  static Result<Out> decode_reply(const Reply& reply);
};

// The one fenced script per event where the handler commits through the fenced effect sink
// (fenced_commit_next.lua): fenced_commit's commit, then fenced_next's step, under one lease check.
struct FencedCommitNext {
  static constexpr std::string_view name = "fenced_commit_next";
  static constexpr std::string_view unfenced_name = "unfenced_commit_next";
  struct Args {
    std::string lease;                  // KEYS[1]
    std::string stream;                 // KEYS[2] C:K
    std::string sink;                   // KEYS[3] C:K:__sink__:G (last_seq, last_token)
    std::string effects;                // KEYS[4] C:K:__effects__:G (seq -> effect)
    std::string token;                  // ARGV[1] O:N, also the consumer name
    std::string group;                  // ARGV[2]
    ReadFrom from = ReadFrom::pending;  // ARGV[3] "0" or ">"
    std::string ack_id;                 // ARGV[4] the entry whose effect this is, acknowledged
    std::uint64_t count = 1;            // ARGV[5] new entries one read delivers at most
    std::string held_id;                // ARGV[6] a held entry to check for, not read ("" none)
    std::int64_t seq = 0;               // ARGV[7]
    std::string effect;                 // ARGV[8] stored verbatim
    JournalTail journal = {};           // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream, &Args::sink, &Args::effects};
  static constexpr auto argv = std::tuple{&Args::token, &Args::group,   &Args::from, &Args::ack_id,
                                          &Args::count, &Args::held_id, &Args::seq,  &Args::effect};
  // With `commit` set; FENCED is Errc::fenced; a step that failed after its commit stood (the
  // script's reply [outcome, last, by, error]) is NextReply::step_failed.
  using Out = NextReply;
  static Result<Out> decode_reply(const Reply& reply);  // a reply in full
  // What `args` asks (with a commit), and its reply, in full or in short, read as `asked` says.
  static StepAsked asked(const Args& args);
  static Result<Out> decode_reply(const Reply& reply, const StepAsked& asked);
};

// The steps of many partitions in one script (fenced_steps.lua): per step, the KEYS and ARGV of
// fenced_commit_next with its journal tail when journaling, where a step without a commit has seq
// "" (it is then fenced_next's step, and its sink and effects keys are not touched). Every step
// of a call journals, or none does. One reply per step.
struct FencedSteps {
  static constexpr std::string_view name = "fenced_steps";
  static constexpr std::size_t kKeysPerStep = 4;  // without the journal's
  static constexpr std::size_t kArgsPerStep = 8;
  static constexpr std::size_t keys_per_step(bool journaled) { return kKeysPerStep + journaled; }
  static constexpr std::size_t args_per_step(bool journaled) {
    return kArgsPerStep + (journaled ? kJournalTailArgs : 0);
  }
  struct Args {
    std::vector<std::string> keys;   // KEYS: keys_per_step per step
    std::vector<std::string> steps;  // ARGV: args_per_step per step
  };
  static constexpr auto keys = std::tuple{&Args::keys};
  static constexpr auto argv = std::tuple{&Args::steps};
  // One step's call: `step` (its journal tail too, when on), its commit when `with_commit`.
  // Returns what the step asked, to read its reply by.
  static StepAsked add(Args* args, FencedCommitNext::Args step, bool with_commit);
  // The steps of a call, in order: fenced_commit_next's Args for a step with a commit (seq set),
  // else fenced_next's (and `with_commit` false); nullopt when the call does not fit.
  struct Step {
    bool with_commit = false;
    FencedCommitNext::Args commit_next;  // with_commit
    FencedNext::Args next;               // !with_commit
  };
  static std::optional<std::vector<Step>> steps_of(const ScriptCallView& call);
  using Asked = StepAsked;
  static Asked asked(const Step& step);  // of a call read back (steps_of)
  // Per step, fenced_commit_next's reply decoded (`asked[i].with_commit`) or fenced_next's, or
  // the steady state's count; an error reply of the whole script (or a reply of another length)
  // is that error for every step.
  using Out = std::vector<Result<NextReply>>;
  static Out decode_reply(const Result<Reply>& reply, const std::vector<Asked>& asked);
};

struct RecordHalt {
  static constexpr std::string_view name = "record_halt";
  struct Args {
    std::string lease;                 // KEYS[1]
    std::string halt;                  // KEYS[2] C:K:__halt__:G
    std::string token;                 // ARGV[1] O:N
    std::string entry_id;              // ARGV[2] the head
    std::string reason;                // ARGV[3] the handler's last error
    std::uint64_t delivery_count = 0;  // ARGV[4]
    JournalTail journal = {};          // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::halt};
  static constexpr auto argv =
      std::tuple{&Args::token, &Args::entry_id, &Args::reason, &Args::delivery_count};
  using Out = std::int64_t;  // since_ms, the server time recorded
  static Result<Out> decode_reply(const Reply& reply);
};

struct Reap {
  static constexpr std::string_view name = "reap";
  struct Args {
    std::string lease;          // KEYS[1]
    std::string stream;         // KEYS[2] C:K
    std::string index;          // KEYS[3] C:__partitions__
    std::string subscribers;    // KEYS[4] C:__subscribers__
    std::string token;          // ARGV[1] O:N
    std::string key;            // ARGV[2] K
    std::uint64_t idle_ms = 0;  // ARGV[3]
    JournalTail journal = {};   // the decision journal (empty: none)
  };
  static constexpr auto keys =
      std::tuple{&Args::lease, &Args::stream, &Args::index, &Args::subscribers};
  static constexpr auto argv = std::tuple{&Args::token, &Args::key, &Args::idle_ms};
  using Out = bool;  // reaped (false: not cold)
  static Result<Out> decode_reply(const Reply& reply);
};

// The operator's scripts refuse with NOENTRY (an unknown id: Errc::not_found) or NOTHEAD (ID is
// not the head: Errc::refused), the message without its code word.
struct AdminSkip {
  static constexpr std::string_view name = "admin_skip";
  struct Args {
    std::string stream;        // KEYS[1] C:K
    std::string halt;          // KEYS[2] C:K:__halt__:G
    std::string group;         // ARGV[1]
    std::string entry_id;      // ARGV[2]
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::stream, &Args::halt};
  static constexpr auto argv = std::tuple{&Args::group, &Args::entry_id};
  using Out = bool;  // a halt record was deleted
  static Result<Out> decode_reply(const Reply& reply);
};

struct AdminDlq {
  static constexpr std::string_view name = "admin_dlq";
  struct Args {
    std::string stream;        // KEYS[1] C:K
    std::string halt;          // KEYS[2] C:K:__halt__:G
    std::string dlq;           // KEYS[3] C:K:dlq
    std::string group;         // ARGV[1]
    std::string entry_id;      // ARGV[2]
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::stream, &Args::halt, &Args::dlq};
  static constexpr auto argv = std::tuple{&Args::group, &Args::entry_id};
  struct Out {
    std::string dlq_id;   // the new DLQ entry
    bool halted = false;  // a halt record was deleted
  };
  static Result<Out> decode_reply(const Reply& reply);
};

// The operator's explicit replay of a DLQ entry to the tail of its partition (after later events).
struct AdminDlqReplay {
  static constexpr std::string_view name = "admin_dlq_replay";
  struct Args {
    std::string dlq;     // KEYS[1] C:K:dlq
    std::string stream;  // KEYS[2] C:K
    // KEYS[3] C:__partitions__ when the script indexes K itself (one server); none under the
    // cluster layout, where the index is in another slot and publish_intent indexed K before.
    std::vector<std::string> index;
    std::string entry_id;  // ARGV[1] the DLQ entry
    std::string key;       // ARGV[2] K
  };
  static constexpr auto keys = std::tuple{&Args::dlq, &Args::stream, &Args::index};
  static constexpr auto argv = std::tuple{&Args::entry_id, &Args::key};
  using Out = std::string;  // the new entry id on C:K
  static Result<Out> decode_reply(const Reply& reply);
};

// The `record` test handler's in-progress marker (seqby::testing RecordHandler), a script so
// that its enter and exit are journaled exactly.
struct HandlerEnter {
  static constexpr std::string_view name = "handler_enter";
  struct Args {
    std::string marker;        // KEYS[1] UNIT:__inprogress__:G
    std::string value;         // ARGV[1] owner id:[category:]event id
    std::string owner_id;      // ARGV[2]
    std::uint64_t ttl_ms = 0;  // ARGV[3]
    std::string event_id;      // ARGV[4]
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::marker};
  static constexpr auto argv =
      std::tuple{&Args::value, &Args::owner_id, &Args::ttl_ms, &Args::event_id};
  using Out = std::optional<std::string>;  // another owner's marker (an overlap), or nullopt
  static Result<Out> decode_reply(const Reply& reply);
};

struct HandlerExit {
  static constexpr std::string_view name = "handler_exit";
  struct Args {
    std::string marker;        // KEYS[1] UNIT:__inprogress__:G
    std::string value;         // ARGV[1] this execution's marker value
    std::string event_id;      // ARGV[2]
    std::string outcome;       // ARGV[3] "ok" or "failed: REASON"
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::marker};
  static constexpr auto argv = std::tuple{&Args::value, &Args::event_id, &Args::outcome};
  using Out = bool;  // the marker was ours and is deleted
  static Result<Out> decode_reply(const Reply& reply);
};

// --- the cluster key layout's publish and reap, step by step (docs/ARCHITECTURE.md "The cluster
// key layout"): P0 publish_intent, P1 publish_append, P2 publish_done; R1 reap_begin,
// R2 reap_stream, R3 reap_end. P0, P2, R1 and R3 run in the index's slot, P1 and R2 in the
// partition's.

struct PublishIntent {
  static constexpr std::string_view name = "publish_intent";
  struct Args {
    std::string index;       // KEYS[1] C:__partitions__
    std::string publishing;  // KEYS[2] {C:__partitions__}:__publishing__
    std::string key;         // ARGV[1] K
  };
  static constexpr auto keys = std::tuple{&Args::index, &Args::publishing};
  static constexpr auto argv = std::tuple{&Args::key};
  using Out = std::int64_t;  // the key's open intents, this one included
  static Result<Out> decode_reply(const Reply& reply);
};

struct PublishAppend {
  static constexpr std::string_view name = "publish_append";
  struct Args {
    std::string stream;        // KEYS[1] C:{K}
    std::string type;          // ARGV[1] event type
    std::string data;          // ARGV[2] event data (JSON)
    JournalTail journal = {};  // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::stream};
  static constexpr auto argv = std::tuple{&Args::type, &Args::data};
  using Out = std::string;  // the new entry id
  static Result<Out> decode_reply(const Reply& reply);
};

struct PublishDone {
  static constexpr std::string_view name = "publish_done";
  struct Args {
    std::string publishing;  // KEYS[1] {C:__partitions__}:__publishing__
    std::string key;         // ARGV[1] K
  };
  static constexpr auto keys = std::tuple{&Args::publishing};
  static constexpr auto argv = std::tuple{&Args::key};
  using Out = std::int64_t;  // the key's open intents left
  static Result<Out> decode_reply(const Reply& reply);
};

struct ReapBegin {
  static constexpr std::string_view name = "reap_begin";
  struct Args {
    std::string index;       // KEYS[1] C:__partitions__
    std::string reaping;     // KEYS[2] {C:__partitions__}:__reaping__
    std::string publishing;  // KEYS[3] {C:__partitions__}:__publishing__
    std::string key;         // ARGV[1] K
  };
  static constexpr auto keys = std::tuple{&Args::index, &Args::reaping, &Args::publishing};
  static constexpr auto argv = std::tuple{&Args::key};
  using Out = bool;  // the key is in the reaping set: go on (false: a publish is open, or no key)
  static Result<Out> decode_reply(const Reply& reply);
};

struct ReapStream {
  static constexpr std::string_view name = "reap_stream";
  struct Args {
    std::string lease;          // KEYS[1]
    std::string stream;         // KEYS[2] C:{K}
    std::string token;          // ARGV[1] O:N
    std::uint64_t idle_ms = 0;  // ARGV[2]
    std::string subscribers;    // ARGV[3] the subscribed groups, each followed by '\n'
    JournalTail journal = {};   // the decision journal (empty: none)
  };
  static constexpr auto keys = std::tuple{&Args::lease, &Args::stream};
  static constexpr auto argv = std::tuple{&Args::token, &Args::idle_ms, &Args::subscribers};
  using Out = bool;  // reaped (false: not cold)
  static Result<Out> decode_reply(const Reply& reply);
};

struct ReapEnd {
  static constexpr std::string_view name = "reap_end";
  struct Args {
    std::string index;         // KEYS[1] C:__partitions__
    std::string reaping;       // KEYS[2] {C:__partitions__}:__reaping__
    std::string key;           // ARGV[1] K
    std::uint64_t reaped = 0;  // ARGV[2] 1: reap_stream answered that it reaped; else 0
  };
  static constexpr auto keys = std::tuple{&Args::index, &Args::reaping};
  static constexpr auto argv = std::tuple{&Args::key, &Args::reaped};
  using Out = bool;  // the key left the reaping set for good (false: moved back, or not there)
  static Result<Out> decode_reply(const Reply& reply);
};

// The name of every script with a contract above (unfenced_* included): the same set as
// embedded_scripts() (a unit test holds them equal).
std::span<const std::string_view> contract_names();

}  // namespace script
}  // namespace seqby::redis
