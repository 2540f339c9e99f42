// The settings of one ownership-engine instance, every limit named with its unit. The defaults
// suit a test or a small deployment; validate_engine_options() says what must hold between them.
// The numeric limits are declared once, in kEngineLimitFields (name, unit, member, default, help
// and where each applies); a case file's "engine" object, the `seqby worker` flags and the
// scenario driver's worker arguments are all derived from that table. It is plain data: the JSON
// and command-line glue live above core (scenarios/, apps/).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/result.h"

namespace seqby {

// The numeric limits of an engine. Every member starts at its kEngineLimitFields default (the
// constructor applies the table; the members have no initializer of their own, so the default
// is stated in one place).
struct EngineLimits {
  EngineLimits();

  std::uint64_t lease_ttl_ms;
  std::uint64_t heartbeat_interval_ms;  // at most lease_ttl_ms / 2
  std::uint64_t discovery_interval_ms;
  std::uint64_t poll_interval_ms;  // idle backoff between reads that found nothing (polling only)
  std::uint64_t idle_recheck_ms;   // a woken idle unit reads again at least this often
  // Streams one blocking wake read watches at most; past it the idle units spread over more of
  // the broker's wake channels (each a connection), so a wake-up re-sends a bounded read.
  std::uint32_t wake_read_partitions_max;
  // New entries one fenced read delivers at most; each is still entered only after a lease
  // check of its own (PartitionWorker: the held entries).
  std::uint32_t read_batch_max;
  // Steps of different partitions one script carries at most (Broker::fenced_steps): the
  // instance's workers that step at once share a round trip and a script call. 1: one script per
  // step. Each step keeps its own lease check; a broker that cannot carry many takes them singly.
  std::uint32_t step_batch_max;

  std::uint32_t retry_count_max;            // handler retries after the first failure, then halt
  std::uint64_t retry_backoff_ms;           // first retry delay; doubles per retry
  std::uint64_t retry_backoff_max_ms;       // cap of the doubling (handler and transport)
  std::uint32_t transport_retry_count_max;  // per broker call, then the worker gives up

  std::uint64_t stop_wait_max_ms;  // stop() waits this long for tasks to end
  // Reap an owned partition once it is empty (everything delivered and acked by every group)
  // and nothing was appended for this long (0: never). Needs lease_per_group off: the reaper
  // deletes the one lease of the partition.
  std::uint64_t reap_idle_ms;
  std::uint32_t partitions_warn_threshold;  // record `warn` when the index passes it (0: off)
  std::uint32_t partitions_max;             // leases held at most (0: only fair share)

  friend bool operator==(const EngineLimits&, const EngineLimits&) = default;
};

// Whether a case file's "engine" object holds a limit.
enum class CaseFileField : std::uint8_t {
  absent,    // not in case files (the case takes the default)
  required,  // written always; reading fails when it is missing
  optional,  // written always; older case files leave it off (reading keeps the default)
};

// One limit of EngineLimits: exactly one of `u64`, `u32` points at its member.
struct EngineLimitField {
  constexpr EngineLimitField(std::string_view name_, std::string_view unit_,
                             std::uint64_t EngineLimits::*member, std::uint64_t default_,
                             CaseFileField case_file_, bool worker_flag_, std::string_view help_)
      : name(name_),
        unit(unit_),
        u64(member),
        default_value(default_),
        case_file(case_file_),
        worker_flag(worker_flag_),
        help(help_) {}
  constexpr EngineLimitField(std::string_view name_, std::string_view unit_,
                             std::uint32_t EngineLimits::*member, std::uint32_t default_,
                             CaseFileField case_file_, bool worker_flag_, std::string_view help_)
      : name(name_),
        unit(unit_),
        u32(member),
        default_value(default_),
        case_file(case_file_),
        worker_flag(worker_flag_),
        help(help_) {}

  std::string_view name;  // the member's name, the case file's key; the flag is flag_name()
  std::string_view unit;  // "ms" (the name ends with _ms), "retries", "partitions", "entries" or
                          // "steps"
  std::uint64_t EngineLimits::*u64 = nullptr;
  std::uint32_t EngineLimits::*u32 = nullptr;
  std::uint64_t default_value;
  CaseFileField case_file;
  bool worker_flag;       // `seqby worker` takes it as flag_name() N
  std::string_view help;  // one line; the worker flag's help text

  std::uint64_t get(const EngineLimits& limits) const {
    return u64 != nullptr ? limits.*u64 : limits.*u32;
  }
  // REQUIRES: value <= value_max().
  void set(EngineLimits& limits, std::uint64_t value) const;
  // The largest value the member holds.
  std::uint64_t value_max() const;
  // "--lease-ttl-ms" for lease_ttl_ms: the name with '-' for '_'.
  std::string flag_name() const;
};

// Every limit, in case-file order (the order a case file's "engine" object is written in).
inline constexpr std::array<EngineLimitField, 16> kEngineLimitFields{{
    {"lease_ttl_ms", "ms", &EngineLimits::lease_ttl_ms, 3000, CaseFileField::required, true,
     "Lease time to live"},
    {"heartbeat_interval_ms", "ms", &EngineLimits::heartbeat_interval_ms, 1000,
     CaseFileField::required, true, "Lease renew period (at most half the ttl)"},
    {"discovery_interval_ms", "ms", &EngineLimits::discovery_interval_ms, 1000,
     CaseFileField::required, true, "Partition discovery period"},
    {"poll_interval_ms", "ms", &EngineLimits::poll_interval_ms, 50, CaseFileField::required, true,
     "Idle wait between reads that found nothing new, where idle units are polled"},
    {"idle_recheck_ms", "ms", &EngineLimits::idle_recheck_ms, 600000, CaseFileField::optional, true,
     "A woken idle unit's safety-net read interval (its wake-up is exact)"},
    {"wake_read_partitions_max", "partitions", &EngineLimits::wake_read_partitions_max, 256,
     CaseFileField::optional, true,
     "Streams one blocking wake read watches at most (past it: more wake connections)"},
    {"read_batch_max", "entries", &EngineLimits::read_batch_max, 32, CaseFileField::optional, true,
     "New entries one fenced read delivers at most (each entered after its own lease check)"},
    {"step_batch_max", "steps", &EngineLimits::step_batch_max, 1, CaseFileField::optional, true,
     "Steps of different partitions one script carries at most (1: a script per step)"},
    {"retry_count_max", "retries", &EngineLimits::retry_count_max, 3, CaseFileField::required, true,
     "Handler retries before the partition halts"},
    {"retry_backoff_ms", "ms", &EngineLimits::retry_backoff_ms, 100, CaseFileField::required, false,
     "First handler retry delay; doubles per retry"},
    {"retry_backoff_max_ms", "ms", &EngineLimits::retry_backoff_max_ms, 2000,
     CaseFileField::required, false, "Cap of the retry delay doubling (handler and transport)"},
    {"transport_retry_count_max", "retries", &EngineLimits::transport_retry_count_max, 20,
     CaseFileField::required, false, "Retries of one broker call before the worker gives up"},
    {"stop_wait_max_ms", "ms", &EngineLimits::stop_wait_max_ms, 60000, CaseFileField::required,
     false, "How long stop() waits for the engine's tasks to end"},
    {"reap_idle_ms", "ms", &EngineLimits::reap_idle_ms, 0, CaseFileField::optional, true,
     "Reap an owned partition once it is empty, fully acked and idle this long (0: never)"},
    {"partitions_warn_threshold", "partitions", &EngineLimits::partitions_warn_threshold, 0,
     CaseFileField::optional, true,
     "Warn once when the category's live partitions pass N (0: never)"},
    {"partitions_max", "partitions", &EngineLimits::partitions_max, 0, CaseFileField::absent, false,
     "Leases held at most (0: only fair share)"},
}};

// Discovery's index count's gate (docs/ARCHITECTURE.md "Discovery reads a count, then the
// index"). Once the last full read of the index found at least kDiscoveryCountedIndexMin members,
// a discovery cycle first reads the index's count (Broker::partition_count, SCARD). A cycle with
// nothing to do ends there, at most kDiscoveryFullReadEvery - 1 cycles in a row: the same count
// as the cycle before, the same target (the live members counted again) and active workers as
// the last full cycle, and the instance at its fair share, or short of it by less than the live
// members after kDiscoveryEmptyAcquiresMin full cycles in a row whose acquires got nothing
// (ceil(P / N) * N > P: the rest is held by others; a joining instance is short by its whole
// share). Anything else reads the whole index and takes the share as before.
// What a count alone misses, a key added as another left the index (an operator's SREM), or a
// lease another instance gave up while the count and the members stood, waits for the next full
// read. Below kDiscoveryCountedIndexMin an instance reads the whole index every cycle (a thousand
// members cost about what a count's round trip does). Not limits: a case file does not hold them.
inline constexpr std::uint64_t kDiscoveryCountedIndexMin = 1000;
inline constexpr std::uint32_t kDiscoveryFullReadEvery = 10;
inline constexpr std::uint32_t kDiscoveryEmptyAcquiresMin = 3;

struct EngineOptions : EngineLimits {
  std::string owner_id;  // unique per instance incarnation (a restart takes a new one); no colon
  std::string category;  // the stream category served ("" for a process manager)
  std::string group;     // the handler group (consumer group name); a process manager's name

  // A process manager (ADR decision 2): the categories it subscribes, each partitioned by the
  // correlation value (so X's events are on C:X for every C here). Non-empty makes this engine
  // the process manager named `group`: its unit is a correlation value X, one lease
  // __pm__:G:X:__lease__ spans the streams C:X of all these categories, and the owner applies
  // them one event at a time (round robin between the streams, each stream in order). Needs
  // `category` empty, lease_per_group off and reap_idle_ms 0.
  std::vector<std::string> pm_categories;

  // Lease per group (C:K:__lease__:G) instead of DESIGN's per-partition C:K:__lease__. Needed
  // when several partitioned handler groups consume one category.
  bool lease_per_group = false;
};

// Ok when the options are usable; Errc::invalid naming the offending field otherwise.
Status validate_engine_options(const EngineOptions& options);

// min(base_ms * 2^(attempt-1), max_ms) for attempt >= 1.
std::uint64_t backoff_ms(std::uint64_t base_ms, std::uint64_t max_ms, std::uint32_t attempt);

}  // namespace seqby
