// The simulator backend of the engine scenarios: one World per run, faults injected at the
// moment the scenario asks, deterministic for a seed.
#include <memory>

#include "engine_backend.h"
#include "seqby/redis/redis_broker.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/world.h"

namespace seqby::scenarios::engine {
namespace {

class SimBackend final : public EngineBackend {
 public:
  explicit SimBackend(std::uint64_t seed) : seed_(seed) {}

  std::string where() const override { return "sim"; }
  std::uint64_t lease_ttl_ms(const sim::SimCase& c) const override {
    return c.engine.lease_ttl_ms;
  }

  bool start(const sim::SimCase& c, Checks&) override {
    sim::SimCase seeded = c;
    seeded.seed = seed_;
    world_ = std::make_unique<sim::World>(seeded);
    world_->start();
    return true;
  }

  std::optional<std::string> wait_inside(const std::string& key, std::int64_t seq) override {
    std::int64_t inside_seq = 0;
    const bool caught = world_->run_until(
        [&] { return world_->inside(key, &inside_seq).has_value() && inside_seq == seq; },
        world_->sim_case().run_ms);
    if (!caught) return std::nullopt;
    return world_->owner_id(*world_->inside(key));
  }

  bool wait_done(const std::string& key, std::int64_t seq) override {
    return world_->run_until(
        [&] {
          std::int64_t inside_seq = 0;
          const bool in_it = world_->inside(key, &inside_seq).has_value() && inside_seq == seq;
          return world_->accepted_seq(key) >= seq && !in_it;
        },
        world_->sim_case().run_ms);
  }

  bool has_inprogress_marker() const override { return false; }
  std::optional<std::string> inprogress_marker(const std::string&) override { return std::nullopt; }

  std::string lease_owner(const std::string& key) override {
    const sim::SimCase& c = world_->sim_case();
    const redis::Reply r = world_->redis().execute({"GET", PartitionRef{c.category, key}.lease()});
    if (r.kind != redis::Reply::Kind::bulk) return "";
    return r.str.substr(0, r.str.rfind(':'));
  }

  std::string event_id(const std::string& key, std::int64_t seq) override {
    const sim::SimCase& c = world_->sim_case();
    const redis::Reply r =
        world_->redis().execute({"XRANGE", PartitionRef{c.category, key}.stream(), "-", "+"});
    if (seq < 1 || static_cast<std::size_t>(seq) > r.elements.size()) return "";
    return r.elements[static_cast<std::size_t>(seq - 1)].elements[0].str;
  }

  void crash(const std::string& owner, std::uint64_t restart_after_ms) override {
    if (const auto instance = instance_of(owner)) {
      world_->inject(
          sim::TimedFault{sim::FaultKind::crash, world_->now_ms(), *instance, restart_after_ms, 0, 0});
    }
  }

  // The simulator freezes the owner's heartbeat for three lease periods while its handler runs
  // on: the lease lapses under it exactly as under SIGSTOP, and the handler's late fenced calls
  // meet the new owner's generation.
  std::string stall(const std::string& owner, const std::string&) override {
    if (const auto instance = instance_of(owner)) {
      const std::uint64_t ttl_ms = world_->sim_case().engine.lease_ttl_ms;
      world_->inject(sim::TimedFault{sim::FaultKind::heartbeat_stall, world_->now_ms(), *instance,
                                     3 * ttl_ms, 0, 0});
    }
    return "";
  }

  Outcome finish(Checks&) override {
    sim::World& world = *world_;
    const sim::SimCase& c = world.sim_case();
    world.run_active();
    world.run_liveness();
    world.stop_engines();
    Outcome o;
    o.liveness_reached = world.stats().liveness_reached;
    for (const auto& key : c.keys) {
      const PartitionRef p{c.category, key};
      // The sink keeps field seq -> effect (the event id); seq order is commit order.
      const redis::Command hgetall{"HGETALL", redis::effects_hash_name(p, c.group)};
      const redis::Reply hash = world.redis().execute(hgetall);
      std::map<std::int64_t, std::string> by_seq;
      for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
        by_seq[std::stoll(hash.elements[i].str)] = hash.elements[i + 1].str;
      }
      for (const auto& [seq, effect] : by_seq) o.effects[key].push_back(effect);
      const redis::Command xlen{"XLEN", p.dlq()};
      o.dlq_length[key] = world.redis().execute(xlen).integer;
      if (o.dlq_name_of_first_key.empty()) o.dlq_name_of_first_key = p.dlq();
    }
    o.history = world.take_history();
    for (const auto& r : o.history) {
      if (r.op == HistoryOp::publish) o.published[r.key].push_back(r.event_id);
    }
    o.report = check_run_history(c, o.history);
    return o;
  }

 private:
  std::optional<std::uint32_t> instance_of(const std::string& owner) const {
    for (std::uint32_t i = 0; i < world_->sim_case().instance_count; ++i) {
      if (world_->owner_id(i) == owner) return i;
    }
    return std::nullopt;
  }

  std::uint64_t seed_;
  std::unique_ptr<sim::World> world_;
};

}  // namespace

std::unique_ptr<EngineBackend> make_sim_backend(std::uint64_t seed) {
  return std::make_unique<SimBackend>(seed);
}

}  // namespace seqby::scenarios::engine
