// The engine variants of seqby's own harness: `correct` is the design; every other value is a
// design the ADR rejected, kept as a known-broken variant so the harness can prove it catches it
// (DESIGN section 7). Part of seqby::testing, never of the installed library: the production
// engine does not know them. Never select a broken variant outside a simulated run or a test of
// the real-Redis harness (`seqby worker --unsafe-variant`); nothing turns one on by default.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/engine_steps.h"

namespace seqby::testing {

// Each broken variant changes one step of the engine (an EngineSteps or PartitionWorker override
// in testing/src/variant_<name>.cpp, picked by make_engine_steps) or of the broker
// (redis_broker_options_for), and that step says so in a KNOWN-BROKEN comment.
enum class Variant {
  correct,
  // ADR Context ("A Redis consumer group load-balances by message, not by key"): every instance
  // reads every partition through the one shared group, no lease, no fence. Rejected: two
  // events of one key land on two instances and run at the same time.
  shared_group,
  // ADR decision 5 ("We reject a per-message distributed lock") and Alternatives Considered:
  // each instance serves every partition and takes a per-key lock (TTL, never renewed) around
  // each event. Rejected: a handler slower than the lock lets a second instance run the next
  // event of the key while the first still runs the previous one.
  message_lock,
  // ADR Alternatives Considered and decision 5 ("The generation is the fence"): a stale owner
  // whose lease expired during a stall keeps reading, entering handlers, committing and acking.
  no_fence,
  // ADR decision 6: a poison head halts its partition; moving it to the DLQ automatically and
  // continuing was rejected, since the events after it depend on it.
  dlq_continue,
  // ADR decision 5 ("Crash reclaim"): a new owner does not take over the dead owner's pending
  // entries. Rejected: the events in flight at the crash are lost or skipped.
  no_reclaim,
  // ADR decision 5 ("the stale owner never reaches the next event") and DESIGN section 4: one
  // lease check covers a whole batch of reads; the handler is entered for each entry of the
  // batch without checking the lease again. Rejected: a stale owner reaches the next event.
  batch_unfenced,
  // ADR decision 5 ("none are lost or skipped"; DESIGN section 4 creates the group at id 0): the
  // group is created at `$`, so events published before the first owner arrived are skipped.
  group_at_dollar,
};

// Every variant, `correct` first, then the broken ones in DESIGN section 7 order.
std::span<const Variant> all_variants();

// "correct", "shared_group", "message_lock", ...
std::string_view variant_name(Variant variant);

// The Variant named `name`, or nullopt for an unknown name.
std::optional<Variant> parse_variant(std::string_view name);

// The engine steps of `variant`, for the Engine's constructor: the design's (the base
// EngineSteps) for `correct` and for the variants whose broken step is in the broker
// (no_fence, group_at_dollar). Never null.
std::unique_ptr<EngineSteps> make_engine_steps(Variant variant);

// The broker options a run of `variant` uses: the defaults (the design) but for no_fence,
// shared_group and message_lock (the unfenced scripts) and group_at_dollar (the group at `$`).
redis::RedisBrokerOptions redis_broker_options_for(Variant variant);

}  // namespace seqby::testing
