// Driving RedisBroker call by call on a SimRedis, for tests: a clock the test moves by hand, a
// link that runs each command on the simulated server at once (no latency, no faults), and
// run_now() for a task that never suspends. Nothing here is simulated time or a fault: tests that
// need those use a World or a Scheduler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/redis_link.h"
#include "seqby/core/check.h"
#include "seqby/core/clock.h"
#include "seqby/core/task.h"
#include "seqby/sim/sim_redis.h"

namespace seqby::testing {

class ManualClock final : public Clock {
 public:
  std::uint64_t now_ms() override { return now_ms_; }
  void advance(std::uint64_t ms) { now_ms_ += ms; }

 private:
  std::uint64_t now_ms_ = 1000;
};

class DirectLink final : public redis::RedisLink {
 public:
  explicit DirectLink(sim::SimRedis& redis) : redis_(redis) {}
  Task<Result<redis::Reply>> execute(redis::Command command) override {
    co_return redis_.execute(command);
  }

 private:
  sim::SimRedis& redis_;
};

// Runs a task that never suspends (every command completes at once) and returns its value.
template <typename T>
T run_now(Task<T> task) {
  std::optional<T> out;
  auto body = [](Task<T> inner, std::optional<T>* result) -> Task<void> {
    T value = co_await std::move(inner);
    result->emplace(std::move(value));
  };
  Task<void> root = body(std::move(task), &out);
  auto handle = root.release();
  handle.resume();
  SEQBY_CHECK(handle.done());
  handle.destroy();
  return std::move(*out);
}

// Publishes one event to each of `count` partitions order:k0, order:k1, ... and takes their
// leases for owner "a" (TTL 3 s) with one acquire_many: the leases in that order, or what failed.
inline Result<std::vector<Lease>> held_leases(redis::RedisBroker& broker, std::size_t count) {
  std::vector<PartitionRef> partitions;
  for (std::size_t i = 0; i < count; ++i) {
    partitions.push_back(PartitionRef{"order", "k" + std::to_string(i)});
    Result<std::string> published = run_now(broker.publish(partitions.back(), "created", "{}"));
    if (!published.ok()) return published.error();
  }
  auto got = run_now(broker.acquire_many(partitions, "", "a", 3000, partitions.size()));
  if (!got.ok()) return got.error();
  std::vector<Lease> leases;
  for (std::size_t i = 0; i < got.value().size(); ++i) {
    if (!got.value()[i].has_value()) {
      return make_error(Errc::protocol, partitions[i].key + ": its lease was not taken");
    }
    leases.push_back(*got.value()[i]);
  }
  return leases;
}

// Broker::renew_many's answer per lease, readable: "renewed", or the error's code name
// ("fenced", "timeout", ...).
inline std::vector<std::string> renew_outcomes(const std::vector<Status>& statuses) {
  std::vector<std::string> out;
  out.reserve(statuses.size());
  for (const Status& s : statuses) out.push_back(s.ok() ? "renewed" : errc_name(s.code()));
  return out;
}

}  // namespace seqby::testing
