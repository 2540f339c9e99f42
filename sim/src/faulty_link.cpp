#include "seqby/sim/faulty_link.h"

#include <algorithm>
#include <utility>

#include "seqby/sim/blocking.h"

namespace seqby::sim {

LinkFaultRates link_fault_rates(const SwarmConfig& config, std::uint64_t timeout_ms) {
  LinkFaultRates rates;
  rates.request_lost_ppm = config.rate_ppm(FaultKind::request_lost);
  rates.reply_lost_ppm = config.rate_ppm(FaultKind::reply_lost);
  rates.latency_ppm = config.rate_ppm(FaultKind::latency);
  rates.connection_reset_ppm = config.rate_ppm(FaultKind::connection_reset);
  rates.latency_ms_min = 1;
  rates.latency_ms_max = std::max<std::uint64_t>(1, config.bounds.latency_ms_max);
  rates.timeout_ms = timeout_ms;
  return rates;
}

FaultyLink::FaultyLink(redis::RedisLink& inner, Runtime& runtime, Rng rng, LinkFaultRates rates,
                       FaultObserver* observer, std::string node)
    : inner_(inner),
      runtime_(runtime),
      rng_(rng),
      rates_(rates),
      observer_(observer),
      node_(std::move(node)) {
  SEQBY_CHECK(rates_.latency_ms_min <= rates_.latency_ms_max);
  SEQBY_CHECK(rates_.timeout_ms > 0);
}

void FaultyLink::report(FaultKind kind, const std::string& command_name, std::string extra) {
  counters_.add(kind);
  if (observer_ == nullptr) return;
  std::string detail = "command=" + command_name;
  if (!extra.empty()) detail += " " + extra;
  observer_->on_fault(kind, node_, detail);
}

Task<void> FaultyLink::sleep_until(std::uint64_t local_ms) {
  const std::uint64_t now = runtime_.clock().now_ms();
  if (local_ms > now) co_await runtime_.sleep_ms(local_ms - now);
}

Task<Result<redis::Reply>> FaultyLink::execute(redis::Command command) {
  SEQBY_CHECK(!command.empty());
  // Fixed draws, in a fixed order, for every command.
  const bool reset = rng_.chance_ppm(rates_.connection_reset_ppm);
  const bool reset_after = rng_.below(2) == 1;
  const bool request_lost = rng_.chance_ppm(rates_.request_lost_ppm);
  const bool reply_lost = rng_.chance_ppm(rates_.reply_lost_ppm);
  const bool slow = rng_.chance_ppm(rates_.latency_ppm);
  const std::uint64_t where = rng_.below(3);  // 0: before, 1: after, 2: both
  const std::uint64_t before_ms = rng_.uniform(rates_.latency_ms_min, rates_.latency_ms_max);
  const std::uint64_t after_ms = rng_.uniform(rates_.latency_ms_min, rates_.latency_ms_max);

  if (!enabled_) co_return co_await inner_.execute(std::move(command));

  const std::string name = command.front();
  const std::uint64_t start_ms = runtime_.clock().now_ms();
  // A blocking read's reply may come BLOCK ms late by design: its caller waits that much longer.
  const std::uint64_t wait_ms = reply_wait_ms(command, rates_.timeout_ms);
  const std::uint64_t deadline_ms = start_ms + wait_ms;
  const auto timeout = [wait_ms] {
    return make_error(Errc::timeout, "no reply within " + std::to_string(wait_ms) + " ms");
  };

  if (reset && !reset_after) {
    report(FaultKind::connection_reset, name, "when=before");
    co_await runtime_.sleep_ms(0);
    co_return make_error(Errc::closed, "connection reset");
  }
  if (request_lost) {
    report(FaultKind::request_lost, name);
    co_await sleep_until(deadline_ms);
    co_return timeout();
  }
  if (slow && where != 1) {
    report(FaultKind::latency, name,
           where == 0 ? "when=before delay_ms=" + std::to_string(before_ms)
                      : "when=both delay_ms=" + std::to_string(before_ms) + "+" +
                            std::to_string(after_ms));
    co_await runtime_.sleep_ms(before_ms);
  }
  Result<redis::Reply> reply = co_await inner_.execute(std::move(command));
  if (!reply.ok()) co_return reply;  // the wrapped link already failed: nothing to add
  if (reset) {
    report(FaultKind::connection_reset, name, "when=after");
    co_return make_error(Errc::closed, "connection reset");
  }
  if (reply_lost) {
    report(FaultKind::reply_lost, name);
    co_await sleep_until(deadline_ms);
    co_return timeout();
  }
  if (slow && where != 0) {
    if (where == 1)
      report(FaultKind::latency, name, "when=after delay_ms=" + std::to_string(after_ms));
    // A delayed reply that would land after the deadline is a timeout to the caller.
    const std::uint64_t now = runtime_.clock().now_ms();
    if (now + after_ms > deadline_ms) {
      co_await sleep_until(deadline_ms);
      co_return timeout();
    }
    co_await runtime_.sleep_ms(after_ms);
  }
  co_return reply;
}

}  // namespace seqby::sim
