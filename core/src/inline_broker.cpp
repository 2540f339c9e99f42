#include "seqby/core/inline_broker.h"

#include <algorithm>

namespace seqby {

InlineBroker::InlineBroker(std::size_t queue_length_max, std::size_t deliveries_per_drain_max)
    : queue_length_max_(queue_length_max), deliveries_per_drain_max_(deliveries_per_drain_max) {
  SEQBY_CHECK(queue_length_max_ > 0);
  SEQBY_CHECK(deliveries_per_drain_max_ > 0);
}

BrokerInfo InlineBroker::info() { return BrokerInfo{"inline", CapabilitySet{}, true}; }

void InlineBroker::subscribe(const HandlerMeta& handler, HandlerFn fn) {
  SEQBY_CHECK(fn != nullptr);
  subscriptions_.push_back(Subscription{handler, std::move(fn)});
}

Status InlineBroker::publish(const OutboxRecord& message) {
  if (queue_.size() >= queue_length_max_) {
    return make_error(Errc::refused, "inline broker: queue full (queue_length_max=" +
                                         std::to_string(queue_length_max_) + ")");
  }
  queue_.push_back(Queued{++submitted_count_, message});
  if (delivering_) return Status::Ok();  // the outer publish() delivers it, in order
  return drain();
}

Status InlineBroker::drain() {
  delivering_ = true;
  std::size_t delivered = 0;
  while (!queue_.empty()) {
    if (delivered == deliveries_per_drain_max_) {
      delivering_ = false;
      return make_error(
          Errc::refused,
          "inline broker: deliveries_per_drain_max=" + std::to_string(deliveries_per_drain_max_) +
              " reached, " + std::to_string(queue_.size()) + " messages left queued");
    }
    Queued next = std::move(queue_.front());
    queue_.pop_front();
    // By index: a handler may subscribe another one while it runs.
    for (std::size_t i = 0; i < subscriptions_.size(); ++i) {
      const std::vector<std::string>& types = subscriptions_[i].handler.handled_types;
      if (std::find(types.begin(), types.end(), next.message.type) == types.end()) continue;
      HandlerFn fn = subscriptions_[i].fn;  // a copy: subscribe() may move the vector
      Status s = fn(next.message);
      if (!s.ok()) {
        failures_.push_back(
            Failure{subscriptions_[i].handler.name, next.seq, next.message.type, s.error()});
      }
    }
    ++delivered;
    ++delivered_count_;
  }
  delivering_ = false;
  return Status::Ok();
}

}  // namespace seqby
