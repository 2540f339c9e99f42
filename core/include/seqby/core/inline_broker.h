// The inline broker: single-threaded, it delivers each published message to every subscribed
// handler synchronously, in submission order (ADR decision 8). It advertises no
// STREAM_PARTITIONING but is flagged inline, so the Registry accepts sequential_by handlers on it
// as a no-op: one message at a time in submission order already serializes every key. It has no
// streams, groups, leases, retries or DLQ; a handler failure is recorded and delivery goes on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "seqby/core/capabilities.h"
#include "seqby/core/metadata.h"
#include "seqby/core/outbox.h"
#include "seqby/core/result.h"

namespace seqby {

class InlineBroker {
 public:
  using HandlerFn = std::function<Status(const OutboxRecord&)>;

  struct Failure {
    std::string handler;
    std::uint64_t message_seq = 0;  // 1-based submission number of the message
    std::string type;
    Error error;
  };

  // `queue_length_max`: messages waiting at once; `deliveries_per_drain_max`: messages one
  // publish() delivers before it gives up (a handler publishing forever).
  explicit InlineBroker(std::size_t queue_length_max = 1u << 16,
                        std::size_t deliveries_per_drain_max = 1u << 20);
  InlineBroker(const InlineBroker&) = delete;
  InlineBroker& operator=(const InlineBroker&) = delete;

  // name "inline", no capabilities, is_inline = true.
  static BrokerInfo info();

  // Delivers messages whose type is in `handler.handled_types` to `fn`. Handlers of one
  // message run in subscription order.
  void subscribe(const HandlerMeta& handler, HandlerFn fn);

  // Queues `message`; unless a delivery is already under way (a handler publishing), delivers
  // every queued message, oldest first, before returning. Errc::refused when the queue is full
  // or the drain limit was reached (the rest stays queued for the next publish).
  Status publish(const OutboxRecord& message);

  // Adapts publish() to OutboxPublisher::publish_pending.
  PublishFn publish_fn() {
    return [this](const OutboxRecord& r) { return publish(r); };
  }

  std::uint64_t submitted_count() const { return submitted_count_; }
  std::uint64_t delivered_count() const { return delivered_count_; }
  const std::vector<Failure>& failures() const { return failures_; }

 private:
  struct Subscription {
    HandlerMeta handler;
    HandlerFn fn;
  };
  struct Queued {
    std::uint64_t seq;
    OutboxRecord message;
  };

  Status drain();

  std::size_t queue_length_max_;
  std::size_t deliveries_per_drain_max_;
  std::vector<Subscription> subscriptions_;
  std::deque<Queued> queue_;
  bool delivering_ = false;
  std::uint64_t submitted_count_ = 0;
  std::uint64_t delivered_count_ = 0;
  std::vector<Failure> failures_;
};

}  // namespace seqby
