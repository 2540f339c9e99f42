// The engine variants: `correct` is the design; every other value is a design the ADR rejected,
// kept as a known-broken variant so the harness can prove it catches it (DESIGN section 7).
// Never select a broken variant outside a simulated run; nothing turns one on by default.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace seqby {

enum class Variant {
  correct,
  // ADR "Alternatives Considered", fencing tokens: a stale owner whose lease expired during a
  // stall keeps reading, entering handlers, committing and acking. Rejected: two owners act.
  no_fence,
  // ADR decision 6: a poison head halts its partition; moving it to the DLQ automatically and
  // continuing was rejected, since the events after it depend on it.
  dlq_continue,
};

// Every variant, `correct` first, then the broken ones in DESIGN section 7 order.
std::span<const Variant> all_variants();

// "correct", "no_fence", "dlq_continue".
std::string_view variant_name(Variant variant);

// The Variant named `name`, or nullopt for an unknown name.
std::optional<Variant> parse_variant(std::string_view name);

}  // namespace seqby
