// EngineEnv: what every part of one engine instance shares (the membership, the heartbeat and
// each partition worker): its dependencies, its options, where its leases live, and the one way
// it writes its history. It holds no state of its own beyond the options.
#pragma once

#include <cstdint>
#include <string>

#include "seqby/core/broker.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/handler.h"
#include "seqby/core/history.h"
#include "seqby/core/lease.h"
#include "seqby/core/runtime.h"

namespace seqby {

class StepBatcher;
class Waker;

struct EngineEnv {
  // REQUIRES: validate_engine_options(options).ok(); every reference outlives this env.
  EngineEnv(Runtime& runtime, Broker& broker, HistorySink& history, Handler& handler,
            EngineOptions options);
  EngineEnv(const EngineEnv&) = delete;
  EngineEnv& operator=(const EngineEnv&) = delete;

  bool process_manager() const { return !options.pm_categories.empty(); }

  // Appends a record of this instance to the history: about `lease`'s partition and generation,
  // or (lease null) about the unit category.
  void record(HistoryOp op, const Lease* lease, std::string event_id, std::string detail,
              std::int64_t seq = -1) const;

  Runtime& runtime;
  Broker& broker;
  HistorySink& history;
  Handler& handler;
  const EngineOptions options;
  // Where leases and membership live: the category, or a process manager's __pm__:G.
  const std::string unit_category;
  // The instance's one blocking read over its idle units (set by the Engine; null: idle
  // workers poll every poll_interval_ms).
  Waker* waker = nullptr;
  // Where the workers' steps go when they share scripts (set by the Engine when
  // options.step_batch_max and the broker allow more than one step a call; null: each worker
  // sends its own fenced_next).
  StepBatcher* batcher = nullptr;
};

}  // namespace seqby
