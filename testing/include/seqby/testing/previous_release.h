// The previous release's engine protocol, kept as a test fixture for rolling upgrades
// (docs/ARCHITECTURE.md "Rolling upgrade"): while a deployment upgrades, workers of the previous
// release and of this one serve the same category at once. That release ran three fenced scripts
// per event (fenced_read, the handler's commit, fenced_ack: the ack sent right after the
// handler), polled idle partitions every poll_interval_ms, renewed its leases one after another
// and acquired them one at a time. It is not a known-broken variant: a mixed campaign of the
// simulator runs instances of both protocols and the checker judges them together.
#pragma once

#include <memory>

#include "seqby/core/engine_steps.h"

namespace seqby::testing {

// The steps of an instance of the previous release, for the Engine's constructor.
std::unique_ptr<EngineSteps> previous_release_steps();

}  // namespace seqby::testing
