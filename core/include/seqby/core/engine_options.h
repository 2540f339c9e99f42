// The settings of one ownership-engine instance, every limit named with its unit. The defaults
// suit a test or a small deployment; validate_engine_options() says what must hold between them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seqby/core/result.h"
#include "seqby/core/variant.h"

namespace seqby {

struct EngineOptions {
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

  std::uint64_t lease_ttl_ms = 3000;
  std::uint64_t heartbeat_interval_ms = 1000;  // at most lease_ttl_ms / 2
  std::uint64_t discovery_interval_ms = 1000;
  std::uint64_t poll_interval_ms = 50;  // idle backoff between reads that found nothing

  std::uint32_t retry_count_max = 3;          // handler retries after the first failure, then halt
  std::uint64_t retry_backoff_ms = 100;       // first retry delay; doubles per retry
  std::uint64_t retry_backoff_max_ms = 2000;  // cap of the doubling (handler and transport)

  std::uint32_t transport_retry_count_max = 20;  // per broker call, then the worker gives up
  std::uint32_t partitions_max = 0;              // leases held at most (0: only fair share)
  std::uint32_t partitions_warn_threshold = 0;   // record `warn` when the index passes it (0: off)
  std::uint64_t stop_wait_max_ms = 60000;        // stop() waits this long for tasks to end
  // Reap an owned partition once it is empty (everything delivered and acked by every group)
  // and nothing was appended for this long (0: never). Needs lease_per_group off: the reaper
  // deletes the one lease of the partition.
  std::uint64_t reap_idle_ms = 0;

  // A known-broken variant for the simulator (variant.h); never anything but `correct` in use.
  Variant variant = Variant::correct;
};

// Ok when the options are usable; Errc::invalid naming the offending field otherwise.
Status validate_engine_options(const EngineOptions& options);

// min(base_ms * 2^(attempt-1), max_ms) for attempt >= 1.
std::uint64_t backoff_ms(std::uint64_t base_ms, std::uint64_t max_ms, std::uint32_t attempt);

}  // namespace seqby
