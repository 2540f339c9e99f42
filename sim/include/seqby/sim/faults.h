// The fault kinds of the simulator (DESIGN.md section 5) by name, their counters, the swarm
// configuration one seed draws (which kinds are on, at which rate: FoundationDB's BUGGIFY /
// swarm testing), and the explicit, timed fault schedule applied to a world of SimRuntimes.
// Instance and server faults (crash, stall, heartbeat_stall, clock_skew, redis_clock_jump,
// client_kill, stall_replace, and server_restart, server_restart_empty, script_flush, client_pause,
// which the ServerGate of server_gate.h carries out) are schedule-driven; link and handler faults
// fire by chance at their rate. Everything is a plain value and a pure function of the seed: no
// fault is ever drawn from anything else.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/clock.h"
#include "seqby/core/history.h"
#include "seqby/sim/rng.h"
#include "seqby/sim/scheduler.h"
#include "seqby/sim/sim_link.h"
#include "seqby/sim/sim_runtime.h"

namespace seqby::sim {

enum class FaultKind : std::uint8_t {
  crash,
  stall,
  heartbeat_stall,
  clock_skew,
  redis_clock_jump,
  request_lost,
  reply_lost,
  latency,
  connection_reset,
  handler_transient,
  handler_poison,
  slow_handler,
  // Server faults (docs/ARCHITECTURE.md "Server faults"), appended so the kinds above keep their
  // indices.
  server_restart,        // AOF appendfsync always: data survives, scripts and connections go
  server_restart_empty,  // no persistence: the server comes back empty (never drawn by a swarm)
  script_flush,
  client_pause,  // CLIENT PAUSE ALL past the lease: commands queue, then run in order
  client_kill,   // CLIENT KILL of one instance's connection
  // An instance stalls and a replacement starts at once under the SAME owner id (an operator's
  // --owner-id, a pod name): it acquires O:N+1 while the stalled process still holds O:N. The
  // old process resumes when the stall ends and is killed a lease TTL later (World).
  stall_replace,
};
inline constexpr std::size_t kFaultKindCount = 18;

const char* fault_kind_name(FaultKind kind);
// Returns false when `name` is not a fault kind name.
bool parse_fault_kind(std::string_view name, FaultKind* out);
// Every kind, in declaration order / in name order (the order of JSON maps and summaries).
std::span<const FaultKind> all_fault_kinds();
std::span<const FaultKind> fault_kinds_by_name();
// How a kind fires: from the schedule, per link command, or per handled event.
enum class FaultDriver : std::uint8_t { schedule, link, handler };
FaultDriver fault_driver(FaultKind kind);
// Whether a scheduled kind strikes one instance (its TimedFault::target), not the whole world
// (redis_clock_jump and the server faults but client_kill).
bool fault_targets_instance(FaultKind kind);
// Whether SwarmConfig::draw may switch `kind` on. server_restart_empty is never drawn: the
// design requires the data to survive (DESIGN.md section 3: generations never repeat), so a run
// with it fails by construction; a test or a case file switches it on to show what is lost.
bool fault_in_swarm(FaultKind kind);

class FaultCounters {
 public:
  void add(FaultKind kind, std::uint64_t count = 1) { counts_[index(kind)] += count; }
  std::uint64_t count(FaultKind kind) const { return counts_[index(kind)]; }
  std::uint64_t total() const;
  void merge(const FaultCounters& other);
  // Every kind (zeros included), keyed and ordered by name: the `faults` object of --json.
  std::map<std::string, std::uint64_t> by_name() const;
  // "clock_skew=0 connection_reset=2 crash=1 ..." in name order.
  std::string to_string() const;
  friend bool operator==(const FaultCounters&, const FaultCounters&) = default;

 private:
  static std::size_t index(FaultKind kind) { return static_cast<std::size_t>(kind); }
  std::array<std::uint64_t, kFaultKindCount> counts_{};
};

// Told of every fault at the moment it takes effect.
class FaultObserver {
 public:
  virtual ~FaultObserver() = default;
  // `node`: the instance it hit ("" for the world, e.g. the server's clock); `detail`: its
  // parameters, e.g. "duration_ms=1500".
  virtual void on_fault(FaultKind kind, std::string_view node, std::string_view detail) = 0;
};

// Counts faults and records each as a `fault` history record (detail: "<kind> <parameters>").
class FaultRecorder final : public FaultObserver {
 public:
  // `sink` may be null (count only). `clock` stamps the records (the world's clock).
  FaultRecorder(Clock& clock, HistorySink* sink) : clock_(clock), sink_(sink) {}
  void on_fault(FaultKind kind, std::string_view node, std::string_view detail) override;
  const FaultCounters& counters() const { return counters_; }

 private:
  Clock& clock_;
  HistorySink* sink_;
  FaultCounters counters_;
};

// --- swarm configuration ---

// The ranges a seed draws settings and fault parameters from; scenarios tune them (e.g. stalls
// around the lease TTL).
struct SwarmBounds {
  std::uint32_t enable_ppm = 500'000;             // chance each kind is switched on
  std::uint32_t link_rate_ppm_max = 50'000;       // link kinds: chance per command
  std::uint32_t handler_rate_ppm_max = 50'000;    // handler kinds: chance per event
  std::uint32_t schedule_rate_ppm_max = 100'000;  // schedule kinds: chance per instance-second
  std::uint64_t latency_ms_max = 200;             // latency fault: extra delay each way
  std::uint64_t stall_ms_min = 100;               // stall and heartbeat_stall durations
  std::uint64_t stall_ms_max = 5'000;
  std::uint64_t crash_downtime_ms_max = 5'000;    // 0 drawn: down until the liveness phase
  std::int64_t clock_jump_ms_max = 2'000;         // clock_skew: jump in [-max, max]
  std::uint32_t clock_rate_spread_ppm = 100'000;  // clock_skew: rate in 1e6 +- spread
  std::uint64_t redis_clock_jump_ms_max = 5'000;
  std::uint64_t slow_handler_ms_max = 5'000;
  std::uint32_t transient_failures_max = 3;
  // Server faults. client_pause lasts longer than the lease TTL (generate_case raises the minimum
  // past the case's lease_ttl_ms).
  std::uint64_t server_down_ms_min = 100;  // server_restart(_empty): time the server is down
  std::uint64_t server_down_ms_max = 3'000;
  std::uint64_t client_pause_ms_min = 3'500;
  std::uint64_t client_pause_ms_max = 8'000;
};

struct FaultSetting {
  bool enabled = false;
  std::uint32_t rate_ppm = 0;  // unit by driver: per command, per event, per instance-second
  friend bool operator==(const FaultSetting&, const FaultSetting&) = default;
};

struct SwarmConfig {
  std::array<FaultSetting, kFaultKindCount> settings{};
  SwarmBounds bounds;

  // Each kind is switched on and given a rate from its own sub-stream of `seed` (keyed by the
  // kind's name, so adding a kind does not reshuffle the others).
  static SwarmConfig draw(std::uint64_t seed, const SwarmBounds& bounds = {});
  static SwarmConfig none() { return SwarmConfig{}; }

  bool enabled(FaultKind kind) const { return setting(kind).enabled; }
  // 0 when the kind is off.
  std::uint32_t rate_ppm(FaultKind kind) const {
    return setting(kind).enabled ? setting(kind).rate_ppm : 0;
  }
  const FaultSetting& setting(FaultKind kind) const {
    return settings[static_cast<std::size_t>(kind)];
  }
  void set(FaultKind kind, bool enabled, std::uint32_t rate_ppm);
  // One line per kind, in name order: "crash on rate_ppm=1234 per instance-second", then the
  // bounds. Printed with a run so a reader sees every drawn setting.
  std::string describe() const;
};

// --- handler faults (rate-driven, decided per event) ---

struct HandlerFaults {
  std::uint32_t transient_failures = 0;  // fail this many calls first, then behave
  bool poison = false;                   // fail every call
  std::uint64_t slow_ms = 0;             // extra time each call takes
  bool any() const { return transient_failures > 0 || poison || slow_ms > 0; }
};

// The handler faults for one event, from a sub-stream of `run_rng` keyed by `event_identity`
// (e.g. "category:key:seq"), so every retry and every replay of that event sees the same plan.
HandlerFaults draw_handler_faults(const Rng& run_rng, const SwarmConfig& config,
                                  std::string_view event_identity);

// --- the fault schedule ---

struct TimedFault {
  FaultKind kind = FaultKind::crash;
  std::uint64_t at_ms = 0;        // global virtual time it strikes
  std::uint32_t target = 0;       // instance index (unused unless fault_targets_instance)
  std::uint64_t duration_ms = 0;  // stall, heartbeat_stall, stall_replace, client_pause: length;
                                  // crash: downtime
                                  // (0: down until the liveness phase); server_restart(_empty):
                                  // how long the server is down
  std::int64_t amount_ms = 0;     // clock_skew: clock jump (signed); redis_clock_jump: jump
  std::uint32_t rate_ppm = 0;     // clock_skew: the clock's new rate (0: unchanged)
  friend bool operator==(const TimedFault&, const TimedFault&) = default;
};
// "crash at_ms=1200 target=1 duration_ms=500"
std::string describe(const TimedFault& fault);

struct FaultSchedule {
  std::vector<TimedFault> faults;  // sorted by (at_ms, kind, target)
  std::string describe() const;    // one line per fault
  friend bool operator==(const FaultSchedule&, const FaultSchedule&) = default;
};

// Draws the schedule-driven faults of `config` for `instance_count` instances over global time
// [start_ms, end_ms): for each enabled kind, each instance and each simulated second, the fault
// strikes with the kind's rate at a uniform millisecond of that second. At most
// fault_count_max faults (the earliest are kept).
FaultSchedule draw_fault_schedule(const Rng& rng, const SwarmConfig& config,
                                  std::uint32_t instance_count, std::uint64_t start_ms,
                                  std::uint64_t end_ms, std::size_t fault_count_max = 4096);

// The server side of a world, which the server faults act on (ServerGate, server_gate.h). Each
// returns false when the fault could not take effect (nothing is then counted): a pause or a kill
// while the server is down, a kill of a client without a connection.
class ServerFaultTarget {
 public:
  virtual ~ServerFaultTarget() = default;
  // Every connection drops, the server is down for `down_ms`, the script cache is empty after;
  // `keep_data` false: every key is gone too.
  virtual bool restart(bool keep_data, std::uint64_t down_ms) = 0;
  virtual bool flush_scripts() = 0;
  virtual bool pause_clients(std::uint64_t duration_ms) = 0;
  // Closes the connection of the client named `client` (an instance's runtime name, "i0").
  virtual bool kill_client(std::string_view client) = 0;
  // The client's process died (crash): the server frees its connection.
  virtual void client_gone(std::string_view client) { (void)client; }
};

// What the world does around an instance crash: the runtime's frames are destroyed first, then
// on_crash lets the integrator drop the engine objects; on_restart starts a fresh engine (new
// owner id) into the same SimRuntime.
struct FaultHooks {
  std::function<void(std::uint32_t instance)> on_crash;
  std::function<void(std::uint32_t instance)> on_restart;
};

// What the world does for a stall_replace: starts a replacement engine under the instance's
// current owner id in a new SimRuntime, which it returns and which stands for the instance from
// then on; the stalled runtime (stalled until `resume_ms`) is the integrator's to end.
using ReplaceHook = std::function<SimRuntime*(std::uint32_t instance, std::uint64_t resume_ms)>;

// Applies timed faults to a world. REQUIRES: it outlives every run of the scheduler after apply().
class FaultInjector {
 public:
  FaultInjector(Scheduler& scheduler, std::vector<SimRuntime*> instances, ServerClock& server_clock,
                FaultObserver* observer, FaultHooks hooks);
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;

  // Where the server faults go. REQUIRES: set before a server fault is applied or injected;
  // `server` outlives the injector.
  void set_server(ServerFaultTarget* server) { server_ = server; }
  // Where stall_replace goes; without it a stall_replace does nothing and is not counted.
  void set_replace_hook(ReplaceHook hook) { replace_ = std::move(hook); }

  // Queues every fault of `schedule` at its time. REQUIRES: every target < instance count and
  // no fault in the past.
  void apply(const FaultSchedule& schedule);
  // Applies `fault` now (ignoring its at_ms).
  void inject(const TimedFault& fault);
  // The liveness phase: queued faults no longer fire, down instances restart now. Stalls
  // already begun run out; clock skews stay.
  void stop();

  bool is_down(std::uint32_t instance) const { return down_.at(instance); }
  bool stopped() const { return stopped_; }

 private:
  void restart(std::uint32_t instance);

  Scheduler& scheduler_;
  std::vector<SimRuntime*> instances_;
  ServerClock& server_clock_;
  FaultObserver* observer_;
  FaultHooks hooks_;
  ServerFaultTarget* server_ = nullptr;
  ReplaceHook replace_;
  std::vector<bool> down_;
  bool stopped_ = false;
};

}  // namespace seqby::sim
