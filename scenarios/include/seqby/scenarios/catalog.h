// The named scenarios of DESIGN.md section 7 (the ADR's acceptance list), each runnable on the
// simulator and, where it exercises the engine, on a real redis-server. A scenario prints what
// it checked, one line per assertion, and reports failures with the ADR's wording.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/properties/checker.h"

namespace seqby::scenarios {

struct ScenarioContext {
  std::ostream& out;         // where the scenario prints what it checked
  std::string redis_url;     // empty: run on the simulator; else redis://127.0.0.1:PORT
  std::uint64_t seed = 1;    // the simulator seed (ignored on real Redis)
  std::string seqby_binary;  // path of the seqby command (real Redis scenarios spawn workers)
  // redis_url is one node of a Redis Cluster: the workers use the cluster key layout and the
  // driver routes by slot (WorkerSettings::cluster).
  bool redis_cluster = false;
  // Properties the real-Redis run's history checker does not judge: for a run through a master
  // failover, exclusion (an execution's exit record can be lost with the master's last writes
  // while its worker went on, docs/ARCHITECTURE.md "What a failover keeps"; and the cluster
  // answers nobody for longer than a lease, so every instance is stalled past its leases). The
  // record handler's in-progress marker, the server's own exclusion check, follows it.
  std::vector<properties::Property> not_judged = {};
};

struct ScenarioResult {
  std::vector<std::string> failures;  // empty when every assertion held
  bool passed() const { return failures.empty(); }
};

using ScenarioFn = std::function<ScenarioResult(ScenarioContext&)>;

struct Scenario {
  std::string name;
  std::string summary;   // one line: the ADR acceptance item it asserts
  ScenarioFn run_sim;    // always set
  ScenarioFn run_redis;  // empty when the scenario has no real-Redis form yet
};

// Every scenario, in the order of DESIGN.md section 7.
const std::vector<Scenario>& all_scenarios();

// The scenario called `name`, or nullptr.
const Scenario* find_scenario(std::string_view name);

// Scenario groups, each defined in its own file under scenarios/src/.
std::vector<Scenario> domain_scenarios();  // registration, capability, one key, unsafe keys
std::vector<Scenario> engine_scenarios();  // order, entry, parallelism, poison, crash, stall
std::vector<Scenario> ops_scenarios();     // operator skip and dlq, reaping, partition count
std::vector<Scenario> pm_scenarios();      // process manager serializes per instance

}  // namespace seqby::scenarios
