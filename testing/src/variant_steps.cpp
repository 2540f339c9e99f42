// make_engine_steps and redis_broker_options_for: the one mapping from a Variant to the steps an
// Engine runs and to the options its RedisBroker runs with.
#include "seqby/testing/variant.h"
#include "variants.h"

namespace seqby::testing {

std::unique_ptr<EngineSteps> make_engine_steps(Variant variant) {
  switch (variant) {
    case Variant::correct:
      return std::make_unique<EngineSteps>();
    case Variant::shared_group:
      return variants::shared_group_steps();
    case Variant::message_lock:
      return variants::message_lock_steps();
    case Variant::dlq_continue:
      return variants::dlq_continue_steps();
    case Variant::no_reclaim:
      return variants::no_reclaim_steps();
    case Variant::batch_unfenced:
      return variants::batch_unfenced_steps();
    // Broken in the broker, not in the engine (redis_broker_options_for): no_fence runs the
    // unfenced scripts, group_at_dollar creates the group at `$`.
    case Variant::no_fence:
    case Variant::group_at_dollar:
      return std::make_unique<EngineSteps>();
  }
  SEQBY_CHECK(false && "unknown Variant");
  return nullptr;
}

redis::RedisBrokerOptions redis_broker_options_for(Variant variant) {
  redis::RedisBrokerOptions options;
  // KNOWN-BROKEN: without a lease (shared_group), or with only a per-message lock
  // (message_lock), nothing is fenced; group_at_dollar skips the backlog.
  options.unfenced = variant == Variant::no_fence || variant == Variant::shared_group ||
                     variant == Variant::message_lock;
  if (variant == Variant::group_at_dollar) options.group_start_id = "$";
  return options;
}

}  // namespace seqby::testing
