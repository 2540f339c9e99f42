// The KNOWN-BROKEN variants' steps (seqby/testing/variant.h): the designs the ADR rejects, kept
// so the harness proves it catches them. Each lives in testing/src/variant_<name>.cpp, which
// cites the ADR paragraph that rejects it, and is built only on the engine's public seam
// (EngineSteps, UnitShare, PartitionWorker's protected steps); make_engine_steps
// (variant_steps.cpp) is the one place a Variant picks its steps. Nothing here runs unless a
// caller hands its steps to an Engine: the simulator for a case's variant, `seqby worker
// --unsafe-variant` for a test of the real-Redis harness.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seqby/core/engine_steps.h"
#include "seqby/core/partition_worker.h"

namespace seqby::testing::variants {

// Steps whose only change is the worker: every unit under a lease, run by a `Worker`.
template <typename Worker>
class WorkerSteps : public EngineSteps {
 public:
  std::shared_ptr<PartitionWorker> make_worker(const EngineEnv& env, Lease lease) const override {
    return std::make_shared<Worker>(env, std::move(lease));
  }
};

// shared_group (variant_shared_group.cpp): every instance serves every unit of the index through
// the one shared group, with no lease. message_lock builds on it.
class SharedGroupWorker : public PartitionWorker {
 public:
  using PartitionWorker::PartitionWorker;

 protected:
  Task<bool> reclaim(std::span<Lane> lanes) override;
};

class SharedGroupSteps : public EngineSteps {
 public:
  std::shared_ptr<PartitionWorker> make_worker(const EngineEnv& env, Lease lease) const override;
  Task<void> take_share(UnitShare& share, const std::vector<std::string>& keys) const override;
};

std::unique_ptr<EngineSteps> shared_group_steps();
std::unique_ptr<EngineSteps> message_lock_steps();
std::unique_ptr<EngineSteps> dlq_continue_steps();
std::unique_ptr<EngineSteps> no_reclaim_steps();
std::unique_ptr<EngineSteps> batch_unfenced_steps();

}  // namespace seqby::testing::variants
