#include "seqby/core/engine_env.h"

#include <utility>

#include "seqby/core/naming.h"

namespace seqby {

EngineEnv::EngineEnv(Runtime& runtime, Broker& broker, HistorySink& history, Handler& handler,
                     EngineOptions options)
    : runtime(runtime),
      broker(broker),
      history(history),
      handler(handler),
      options(std::move(options)),
      unit_category(this->options.pm_categories.empty() ? this->options.category
                                                        : pm_lease_category(this->options.group)) {
  SEQBY_CHECK(validate_engine_options(this->options).ok());
}

void EngineEnv::record(HistoryOp op, const Lease* lease, std::string event_id, std::string detail,
                       std::int64_t seq) const {
  HistoryRecord r;
  r.time_ms = runtime.clock().now_ms();
  r.node = options.owner_id;
  r.op = op;
  r.category = lease != nullptr ? lease->partition.category : unit_category;
  r.group = options.group;
  if (lease != nullptr) {
    r.key = lease->partition.key;
    r.generation = lease->generation;
  }
  r.event_id = std::move(event_id);
  r.seq = seq;
  r.detail = std::move(detail);
  history.record(std::move(r));
}

}  // namespace seqby
