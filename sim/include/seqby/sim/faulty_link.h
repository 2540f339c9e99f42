// FaultyLink: wraps any RedisLink (the simulated one or the real hiredis adapter) and injects
// transport faults by chance, per command: request_lost (the command never reaches the server;
// the caller times out), reply_lost (it runs, its reply is dropped; the caller times out),
// latency (extra delay before and/or after) and connection_reset (before or after execution;
// Errc::closed). It waits on the wrapped instance's Runtime, so it works on either runtime.
// Every firing is reported to the FaultObserver. Every command consumes the same number of
// random draws whatever the rates, so changing one rate does not move the other faults. A lost
// request or reply of a blocking read (XREAD ... BLOCK ms) times out after timeout_ms + BLOCK ms
// (blocking.h); a reset "after" drops the reply that ended the block (the caller learns of the
// reset when the block ends, not while it waits).
#pragma once

#include <cstdint>
#include <string>

#include "seqby/broker/redis_link.h"
#include "seqby/core/runtime.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/rng.h"

namespace seqby::sim {

struct LinkFaultRates {
  std::uint32_t request_lost_ppm = 0;  // chances per command
  std::uint32_t reply_lost_ppm = 0;
  std::uint32_t latency_ppm = 0;
  std::uint32_t connection_reset_ppm = 0;
  std::uint64_t latency_ms_min = 1;  // extra delay each way when latency fires
  std::uint64_t latency_ms_max = 100;
  std::uint64_t timeout_ms = 1000;  // how long a caller waits for a reply that never comes
                                    // (+ BLOCK ms for a blocking read)
};

// The link fault rates a swarm configuration drew (0 for kinds switched off).
LinkFaultRates link_fault_rates(const SwarmConfig& config, std::uint64_t timeout_ms);

class FaultyLink final : public redis::RedisLink {
 public:
  // `node` names the instance in fault reports. `observer` may be null.
  // REQUIRES: `inner`, `runtime` and `observer` outlive the link.
  FaultyLink(redis::RedisLink& inner, Runtime& runtime, Rng rng, LinkFaultRates rates,
             FaultObserver* observer, std::string node);

  Task<Result<redis::Reply>> execute(redis::Command command) override;

  // Faults stop (the liveness phase) or resume.
  void set_enabled(bool enabled) { enabled_ = enabled; }
  void set_rates(const LinkFaultRates& rates) { rates_ = rates; }
  const FaultCounters& counters() const { return counters_; }

 private:
  void report(FaultKind kind, const std::string& command_name, std::string extra = {});
  Task<void> sleep_until(std::uint64_t local_ms);

  redis::RedisLink& inner_;
  Runtime& runtime_;
  Rng rng_;
  LinkFaultRates rates_;
  FaultObserver* observer_;
  std::string node_;
  bool enabled_ = true;
  FaultCounters counters_;
};

}  // namespace seqby::sim
