// The nemesis names and the plan of a chaos seed: a pure function of the seed and the
// parameters, drawn from named sub-streams of the simulator's PRNG.
#include <algorithm>

#include "seqby/core/check.h"
#include "seqby/scenarios/chaos.h"
#include "seqby/sim/rng.h"

namespace seqby::scenarios {
namespace {

constexpr std::array<Nemesis, kNemesisCount> kByName = {
    Nemesis::client_kill,    Nemesis::client_pause,   Nemesis::failover,
    Nemesis::kill,           Nemesis::proxy,          Nemesis::script_flush,
    Nemesis::server_restart, Nemesis::slot_migration, Nemesis::stop};

// Handler delays: mostly quick, some slower, a few past the lease TTL (slow handlers).
std::uint64_t draw_delay_ms(sim::Rng& rng, std::uint64_t lease_ttl_ms) {
  const std::uint64_t roll = rng.below(100);
  if (roll < 85) return rng.uniform(0, 10);
  if (roll < 97) return rng.uniform(20, 200);
  return rng.uniform(lease_ttl_ms + 100, lease_ttl_ms + 800);
}

void draw_workload(const ChaosParams& p, sim::Rng rng, ChaosPlan* plan) {
  const std::uint64_t duration_s = std::max<std::uint64_t>(1, p.duration_ms / 1000);
  const std::uint64_t publish_until_ms = p.duration_ms * 3 / 4;
  for (std::uint32_t c = 0; c < plan->categories; ++c) {
    for (std::uint32_t k = 0; k < p.keys; ++k) {
      sim::Rng lane = rng.derive("lane/" + std::to_string(c) + "/" + std::to_string(k));
      const std::uint64_t n = lane.uniform(std::max<std::uint64_t>(5, duration_s), 3 * duration_s);
      std::vector<std::uint64_t> times;
      for (std::uint64_t i = 0; i < n; ++i) times.push_back(lane.uniform(0, publish_until_ms));
      std::sort(times.begin(), times.end());
      // A quarter of the lanes get one poison event, anywhere in the lane.
      const std::int64_t poison_seq =
          lane.chance(0.25) ? static_cast<std::int64_t>(lane.uniform(1, n)) : 0;
      // Transient failures: one failing delivery, well inside the retry budget (a halt on a
      // committable event would be the engine's design at work, not a finding). Their own
      // stream, so the delays drawn below do not move.
      sim::Rng transient = lane.derive("transient");
      for (std::uint64_t i = 0; i < n; ++i) {
        PlannedEvent e;
        e.at_ms = times[i];
        e.category = c;
        e.key = k;
        e.seq = static_cast<std::int64_t>(i + 1);
        e.delay_ms = draw_delay_ms(lane, p.lease_ttl_ms);
        e.poison = e.seq == poison_seq;
        if (!e.poison && transient.chance(0.05)) e.fail_deliveries = 1;
        plan->events.push_back(e);
      }
    }
  }
  std::stable_sort(plan->events.begin(), plan->events.end(),
                   [](const PlannedEvent& a, const PlannedEvent& b) { return a.at_ms < b.at_ms; });
}

void draw_strikes(const ChaosParams& p, Nemesis kind, sim::Rng rng, ChaosPlan* plan) {
  const std::uint64_t duration_s = std::max<std::uint64_t>(1, p.duration_ms / 1000);
  const std::uint64_t count = 1 + rng.below(1 + duration_s / 8);
  for (std::uint64_t i = 0; i < count; ++i) {
    Strike s;
    s.kind = kind;
    s.at_ms = rng.uniform(p.duration_ms / 20, p.duration_ms * 9 / 10);
    s.target = static_cast<std::uint32_t>(rng.below(p.workers));
    switch (kind) {
      case Nemesis::kill:
        s.duration_ms = rng.uniform(100, 2000);  // until the slot's worker restarts
        break;
      case Nemesis::stop:
        s.duration_ms = p.lease_ttl_ms + rng.uniform(100, 1500);
        break;
      case Nemesis::client_pause:
        s.duration_ms = p.lease_ttl_ms + rng.uniform(100, 1000);
        break;
      case Nemesis::server_restart:
        s.duration_ms = rng.uniform(50, 1000);  // down time
        break;
      case Nemesis::proxy:
        s.proxy_mode = static_cast<std::uint32_t>(rng.below(3));
        s.duration_ms = rng.uniform(200, 2500);
        s.proxy_delay_ms = rng.uniform(5, 1500);
        break;
      case Nemesis::slot_migration:
        s.lane = static_cast<std::uint32_t>(rng.below(p.keys * (p.process_manager ? 2 : 1)));
        s.mode = static_cast<std::uint32_t>(rng.below(2));
        break;
      case Nemesis::failover:
        s.lane = static_cast<std::uint32_t>(rng.below(p.keys * (p.process_manager ? 2 : 1)));
        s.mode = static_cast<std::uint32_t>(rng.below(3));
        // kill: down past its replica's promotion; lagging replica: the lag
        s.duration_ms = rng.uniform(0, 1500);
        break;
      case Nemesis::client_kill:
      case Nemesis::script_flush:
        break;
    }
    plan->strikes.push_back(s);
  }
}

}  // namespace

const char* nemesis_name(Nemesis kind) {
  switch (kind) {
    case Nemesis::kill:
      return "kill";
    case Nemesis::stop:
      return "stop";
    case Nemesis::client_kill:
      return "client_kill";
    case Nemesis::client_pause:
      return "client_pause";
    case Nemesis::server_restart:
      return "server_restart";
    case Nemesis::script_flush:
      return "script_flush";
    case Nemesis::proxy:
      return "proxy";
    case Nemesis::slot_migration:
      return "slot_migration";
    case Nemesis::failover:
      return "failover";
  }
  return "?";
}

const char* nemesis_unavailable(Nemesis kind, bool cluster) {
  switch (kind) {
    case Nemesis::slot_migration:
    case Nemesis::failover:
      return cluster ? "" : "a cluster nemesis (add --cluster)";
    case Nemesis::server_restart:
      return cluster ? "one server's nemesis (on a cluster: failover)" : "";
    case Nemesis::proxy:
      return cluster ? "one server's nemesis (a cluster client connects to every node the slot "
                       "map names, past a proxy in front of one)"
                     : "";
    case Nemesis::kill:
    case Nemesis::stop:
    case Nemesis::client_kill:
    case Nemesis::client_pause:
    case Nemesis::script_flush:
      return "";
  }
  return "";
}

bool parse_nemesis(std::string_view name, Nemesis* out) {
  for (Nemesis kind : kByName) {
    if (name == nemesis_name(kind)) {
      *out = kind;
      return true;
    }
  }
  return false;
}

std::span<const Nemesis> nemeses_by_name() { return kByName; }

void NemesisCounters::merge(const NemesisCounters& other) {
  for (std::size_t i = 0; i < kNemesisCount; ++i) counts_[i] += other.counts_[i];
}

ChaosPlan draw_chaos_plan(const ChaosParams& p, std::uint64_t seed) {
  SEQBY_CHECK(p.workers > 0 && p.keys > 0 && p.duration_ms > 0);
  ChaosPlan plan;
  plan.seed = seed;
  plan.categories = p.process_manager ? 2 : 1;
  const sim::Rng root(seed);
  draw_workload(p, root.derive("workload"), &plan);
  for (Nemesis kind : kByName) {
    if (!p.nemeses[static_cast<std::size_t>(kind)]) continue;
    draw_strikes(p, kind, root.derive(std::string("nemesis/") + nemesis_name(kind)), &plan);
  }
  std::stable_sort(plan.strikes.begin(), plan.strikes.end(),
                   [](const Strike& a, const Strike& b) { return a.at_ms < b.at_ms; });
  return plan;
}

}  // namespace seqby::scenarios
