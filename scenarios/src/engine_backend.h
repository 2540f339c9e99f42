// The seam between an engine scenario and where it runs. A scenario is written once: its plan
// (a SimCase: keys, events and each event's handler behaviour), the fault it strikes (a crash or
// a stall of whoever owns a key, at the moment that owner is inside a given event) and its
// assertions on the Outcome. A backend runs it on the simulator (a World) or on a real
// redis-server (two `seqby worker` processes, SIGKILL, SIGSTOP/SIGCONT). Private to
// scenarios/src; a backend reports what went wrong while driving through Checks.
//
// A process-manager case (SimCase::pm_categories non-empty) runs the same way: its keys are
// correlation values, an event is named by (key, seq, category), the lease, marker and holder of
// a key are the process manager's for that correlation value, and Outcome's maps are keyed by
// the stream "C:K" instead of the key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/history.h"
#include "seqby/core/keyspace.h"
#include "seqby/properties/checker.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios::engine {

// Prints one line per assertion and collects the failures.
class Checks {
 public:
  explicit Checks(std::ostream& out) : out_(out) {}
  bool expect(bool held, const std::string& what, const std::string& outcome) {
    out_ << (held ? "ok  " : "FAIL ") << what << ": " << outcome << "\n";
    if (!held) result_.failures.push_back(what + ": " + outcome);
    return held;
  }
  void note(const std::string& text) { out_ << "     " << text << "\n"; }
  ScenarioResult result() { return std::move(result_); }

 private:
  std::ostream& out_;
  ScenarioResult result_;
};

// What a finished run left behind, for the assertions.
struct Outcome {
  std::vector<HistoryRecord> history;
  properties::CheckReport report;
  // key (a process-manager case: "C:K") -> entry ids in order, and -> effects (entry ids)
  std::map<std::string, std::vector<std::string>> published;
  std::map<std::string, std::vector<std::string>> effects;
  std::map<std::string, std::int64_t> dlq_length;
  std::string dlq_name_of_first_key;  // for messages: C:K:dlq of the case's first key
  bool liveness_reached = false;
  std::string logs;  // the workers' stderr (real Redis); "" on the simulator
};

// What an operator's tool printed: `seqby admin ...` on real Redis, the admin script's reply on
// the simulator.
struct ToolRun {
  int exit_code = -1;
  std::string out;
};

class EngineBackend {
 public:
  virtual ~EngineBackend() = default;

  // "sim" or "redis".
  virtual std::string where() const = 0;
  // The lease ttl the instances run with (a slow event is sized against it).
  virtual std::uint64_t lease_ttl_ms(const sim::SimCase& c) const = 0;
  // Starts the instances and the publisher of `c`. False (reported in `checks`) when it could not.
  virtual bool start(const sim::SimCase& c, Checks& checks) = 0;
  // Waits (bounded) until some instance is inside event `seq` of `key`; its owner id.
  // `category` "" is the case's category (a process-manager case names one of its categories).
  virtual std::optional<std::string> wait_inside(const std::string& key, std::int64_t seq,
                                                 const std::string& category = "") = 0;
  // Waits (bounded) until `key` committed `seq` and no instance is inside that event any more.
  virtual bool wait_done(const std::string& key, std::int64_t seq,
                         const std::string& category = "") = 0;
  // The in-progress marker of `key` now, "OWNER:EVENT_ID"; nullopt when none is set, or when the
  // backend keeps no such marker (has_inprogress_marker() false).
  virtual bool has_inprogress_marker() const = 0;
  virtual std::optional<std::string> inprogress_marker(const std::string& key) = 0;
  // The marker the last successful wait_inside() saw when it found the instance inside (nullopt
  // without a marker): read at that moment, not again later, when a quick handler may have left.
  virtual std::optional<std::string> marker_seen_inside() const = 0;
  // What the marker of `key` holds while `owner` is inside event `seq` (of `category`, "" = the
  // case's): "OWNER:EVENT_ID", with the event's category between them in a process-manager
  // case (entry ids of different streams can be equal). "" when not published yet.
  virtual std::string marker_value(const std::string& owner, const std::string& key,
                                   std::int64_t seq, const std::string& category = "") = 0;
  // The owner id holding `key`'s lease now ("" when nobody).
  virtual std::string lease_owner(const std::string& key) = 0;
  // The entry id of event `seq` of `key` ("" when not published yet).
  virtual std::string event_id(const std::string& key, std::int64_t seq,
                               const std::string& category = "") = 0;
  // Kills `owner` at once; with `restart_after_ms` > 0 a new instance comes up (the simulator:
  // after that long; real Redis: a new worker process at once, under a new owner id).
  virtual void crash(const std::string& owner, std::uint64_t restart_after_ms) = 0;
  // Freezes `owner` past its lease on `key`, then lets it run on. Returns the owner that took
  // `key` meanwhile when the backend saw it ("" otherwise).
  virtual std::string stall(const std::string& owner, const std::string& key) = 0;
  // Runs to the end: every committable event committed (bounded), graceful stop, the outcome.
  virtual Outcome finish(Checks& checks) = 0;

  // --- operating a run (issue 7) ---
  // The category the instances serve (real Redis: the run's own).
  virtual std::string category() const = 0;
  // Partition `key` of category(), spelled as the instances spell it (the cluster layout on a
  // Redis Cluster).
  virtual PartitionRef partition(const std::string& key) const {
    return PartitionRef{category(), key};
  }
  // Runs one command on the server the instances use (an error or a failure: a nil reply).
  virtual redis::Reply run(const redis::Command& command) = 0;
  // Lets the run go on until `done` holds or `limit_ms` passed (run time); false on the bound.
  virtual bool wait_for(const std::function<bool()>& done, std::uint64_t limit_ms) = 0;
  // Publishes `events` now (after start), each with its publish record; false when it failed.
  virtual bool publish_now(const std::vector<sim::CaseEvent>& events, Checks& checks) = 0;
  // The operator's `seqby admin ACTION C args...` on the run's category (real Redis: the
  // command as a process, --redis added). On the simulator only "skip" and "dlq" exist (the
  // admin scripts run on the world's server: args are KEY ID); others return exit code -1.
  virtual ToolRun admin(const std::string& action, const std::vector<std::string>& args) = 0;
  // Appends a record made outside the instances (an operator's skip or dlq) to the history.
  virtual void record(HistoryRecord record) = 0;
  // The run's clock now, for such records.
  virtual std::uint64_t now_ms() = 0;
};

// Helpers every engine scenario file shares (engine_scenario_common.cpp).
// The history checker's verdict as one assertion: every judged property holds, or what failed.
void expect_checker(Checks& checks, const Outcome& o);
// The frame of a two-instance engine scenario's case: seed, name, group and keys, with the quick
// discovery, polls and retries every engine scenario runs with; the caller adds the events,
// then ends the run 2 s after the last (run_ms) with a 60 s liveness bound.
sim::SimCase two_instance_case(std::uint64_t seed, const std::string& name,
                               const std::string& group, std::vector<std::string> keys);

// The accepted commit seqs of `key` (of `category` when given), in history order.
std::vector<std::int64_t> commits_of(const Outcome& o, const std::string& key,
                                     const std::string& category = "");

// One handler execution in the history: enter..exit, or enter..crash of its node.
struct Execution {
  std::string node;
  std::string category;
  std::string event;
  std::uint64_t generation = 0;
  std::uint64_t begin = 0;  // history index of the enter
  std::uint64_t end = ~0ull;
};
// The executions of `key` (every category: a process manager's correlation value spans them).
std::vector<Execution> executions(const Outcome& o, const std::string& key);
// Pairs (x in a, y in b) whose executions overlap in history order; with `different_events`
// only pairs of different events count.
std::uint64_t overlapping_pairs(const std::vector<Execution>& a, const std::vector<Execution>& b,
                                bool different_events);
// The ADR's cross-instance in-progress marker, asserted directly: while event `seq` of `key`
// (in `category`, "" = the case's) is in a handler, the marker names the owning instance and
// the event, and the lease holder is that instance; once the event is committed and its handler
// returned, the marker is gone or names a later event. (The simulator keeps no such Redis key:
// there the world's own view of who is inside stands in.)
void expect_inprogress_marker(Checks& checks, EngineBackend& b, const std::string& key,
                              std::int64_t seq, const std::string& category = "");
// A scenario written once against EngineBackend, in both forms: on the simulator (run_sim) and
// on real Redis (run_redis), with the same function.
using EngineScenarioFn = ScenarioResult (*)(ScenarioContext&, EngineBackend&);
Scenario both_forms(const char* name, const char* summary, EngineScenarioFn fn);

std::unique_ptr<EngineBackend> make_sim_backend(std::uint64_t seed);
// REQUIRES: ctx.redis_url and ctx.seqby_binary set. `label`: the scenario's name.
std::unique_ptr<EngineBackend> make_redis_backend(const ScenarioContext& ctx,
                                                  const std::string& label);

}  // namespace seqby::scenarios::engine
