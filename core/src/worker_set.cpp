#include "worker_set.h"

#include <utility>

namespace seqby {

void WorkerSet::launch(std::shared_ptr<PartitionWorker> worker) {
  const std::string& key = worker->lease().partition.key;
  SEQBY_CHECK(!serves(key));  // one worker per unit: one event in flight per unit
  workers_[key] = worker;
  ++changes_;
  ++alive_;
  env_.runtime.spawn("worker", run(std::move(worker)));
}

void WorkerSet::stop_all() {
  stopping_ = true;
  for (auto& [key, worker] : workers_) worker->request_stop();
}

Task<void> WorkerSet::run(std::shared_ptr<PartitionWorker> worker) {
  co_await worker->run();
  // After the release: the unit is free to be taken again.
  auto it = workers_.find(worker->lease().partition.key);
  if (it != workers_.end() && it->second == worker) {
    workers_.erase(it);
    ++changes_;
  }
  SEQBY_CHECK(alive_ > 0);
  --alive_;
}

}  // namespace seqby
