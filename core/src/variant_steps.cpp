// make_engine_steps: the one mapping from a Variant to the steps an Engine runs.
#include "seqby/core/engine_steps.h"
#include "variants.h"

namespace seqby {

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

std::unique_ptr<EngineSteps> engine_steps_for(const EngineOptions& options) {
  return make_engine_steps(options.variant);
}

}  // namespace seqby
