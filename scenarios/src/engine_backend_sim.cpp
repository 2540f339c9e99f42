// The simulator backend of the engine scenarios: one World per run, faults injected at the
// moment the scenario asks, deterministic for a seed.
#include <algorithm>
#include <memory>

#include "engine_backend.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/broker/scripts.h"
#include "seqby/core/naming.h"
#include "seqby/hiredis/worker.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/test_handler.h"
#include "seqby/sim/world.h"
#include "seqby/testing/record_handler.h"

namespace seqby::scenarios::engine {
namespace {

class SimBackend final : public EngineBackend {
 public:
  explicit SimBackend(std::uint64_t seed) : seed_(seed) {}

  std::string where() const override { return "sim"; }
  std::uint64_t lease_ttl_ms(const sim::SimCase& c) const override { return c.engine.lease_ttl_ms; }

  bool start(const sim::SimCase& c, Checks&) override {
    sim::SimCase seeded = c;
    seeded.seed = seed_;
    world_ = std::make_unique<sim::World>(seeded);
    world_->start();
    return true;
  }

  // `category` "" is the case's category; in a process-manager case, any of its categories.
  std::optional<std::string> wait_inside(const std::string& key, std::int64_t seq,
                                         const std::string& category) override {
    std::optional<std::uint32_t> caught_by;
    const bool caught = world_->run_until(
        [&] {
          caught_by = inside_event(key, seq, category);
          return caught_by.has_value();
        },
        world_->sim_case().run_ms);
    if (!caught) return std::nullopt;
    return world_->owner_id(*caught_by);
  }

  std::optional<std::string> marker_seen_inside() const override { return std::nullopt; }

  bool wait_done(const std::string& key, std::int64_t seq, const std::string& category) override {
    const sim::SimCase& c = world_->sim_case();
    std::vector<std::string> streams{category};
    if (category.empty() && sim::is_process_manager(c)) {
      // Event `seq` of every category of the correlation value that has one.
      streams.clear();
      for (const auto& cat : c.pm_categories) {
        if (static_cast<std::int64_t>(sim::event_count(c, key, cat)) >= seq) {
          streams.push_back(cat);
        }
      }
    }
    return world_->run_until(
        [&] {
          if (inside_event(key, seq, category).has_value()) return false;
          return std::all_of(streams.begin(), streams.end(), [&](const std::string& cat) {
            return world_->accepted_seq(key, cat) >= seq;
          });
        },
        world_->sim_case().run_ms);
  }

  bool has_inprogress_marker() const override { return false; }
  std::optional<std::string> inprogress_marker(const std::string&) override { return std::nullopt; }
  std::string marker_value(const std::string& owner, const std::string& key, std::int64_t seq,
                           const std::string& category) override {
    const std::string id = event_id(key, seq, category);
    if (id.empty()) return "";
    const bool pm = sim::is_process_manager(world_->sim_case());
    return testing::inprogress_marker_value(owner, category, id, pm);
  }

  // The partition's lease, or a process manager's for correlation value `key`.
  std::string lease_owner(const std::string& key) override {
    const sim::SimCase& c = world_->sim_case();
    const std::string lease = sim::is_process_manager(c)
                                  ? lease_key_name(pm_lease_category(c.group), key)
                                  : PartitionRef{c.category, key}.lease();
    const redis::Reply r = world_->redis().execute({"GET", lease});
    if (r.kind != redis::Reply::Kind::bulk) return "";
    return r.str.substr(0, r.str.rfind(':'));
  }

  std::string event_id(const std::string& key, std::int64_t seq,
                       const std::string& category) override {
    const redis::Reply r =
        world_->redis().execute({"XRANGE", stream_of(key, category).stream(), "-", "+"});
    if (seq < 1 || static_cast<std::size_t>(seq) > r.elements.size()) return "";
    return r.elements[static_cast<std::size_t>(seq - 1)].elements[0].str;
  }

  void crash(const std::string& owner, std::uint64_t restart_after_ms) override {
    if (const auto instance = instance_of(owner)) {
      world_->inject(sim::TimedFault{sim::FaultKind::crash, world_->now_ms(), *instance,
                                     restart_after_ms, 0, 0});
    }
  }

  // The simulator freezes the owner's heartbeat for three lease periods while its handler runs
  // on: the lease lapses under it exactly as under SIGSTOP (a process manager's: the one lease of
  // the correlation value, over all its streams), and the handler's late fenced calls meet the
  // new owner's generation.
  std::string stall(const std::string& owner, const std::string&) override {
    if (const auto instance = instance_of(owner)) {
      const std::uint64_t ttl_ms = world_->sim_case().engine.lease_ttl_ms;
      world_->inject(sim::TimedFault{sim::FaultKind::heartbeat_stall, world_->now_ms(), *instance,
                                     3 * ttl_ms, 0, 0});
    }
    return "";
  }

  Outcome finish(Checks& checks) override {
    sim::World& world = *world_;
    const sim::SimCase& c = world.sim_case();
    if (world.now_ms() < c.run_ms) world.run_active();  // a scenario may have waited past it
    world.run_liveness();
    world.stop_engines();
    Outcome o;
    o.liveness_reached = world.stats().liveness_reached;
    const bool pm = sim::is_process_manager(c);
    for (const auto& key : c.keys) {
      for (const auto& category : sim::categories_of(c)) {
        if (pm && sim::event_count(c, key, category) == 0) continue;
        const PartitionRef p{category, key};
        const std::string name = pm ? p.stream() : key;  // Outcome's maps: "C:K" for a PM
        // The sink keeps field seq -> effect (the event id); seq order is commit order.
        const redis::Command hgetall{"HGETALL", redis::effects_hash_name(p, c.group)};
        const redis::Reply hash = world.redis().execute(hgetall);
        std::map<std::int64_t, std::string> by_seq;
        for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
          by_seq[std::stoll(hash.elements[i].str)] = hash.elements[i + 1].str;
        }
        for (const auto& [seq, effect] : by_seq) o.effects[name].push_back(effect);
        const redis::Command xlen{"XLEN", p.dlq()};
        o.dlq_length[name] = world.redis().execute(xlen).integer;
        if (o.dlq_name_of_first_key.empty()) o.dlq_name_of_first_key = p.dlq();
      }
    }
    o.history = merged(world.take_history());
    for (const auto& r : o.history) {
      if (r.op != HistoryOp::publish) continue;
      o.published[pm ? PartitionRef{r.category, r.key}.stream() : r.key].push_back(r.event_id);
    }
    o.report = check_run_history(c, o.history);
    // What a reshaping must keep byte for byte (scripts/history-hashes compares it).
    checks.note("history_sha256: " + properties::history_sha256(o.history));
    return o;
  }

  std::string category() const override { return world_->sim_case().category; }

  redis::Reply run(const redis::Command& command) override {
    redis::Reply r = world_->redis().execute(command);
    return r.is_error() ? redis::Reply{} : r;
  }

  bool wait_for(const std::function<bool()>& done, std::uint64_t limit_ms) override {
    return world_->run_until(done, world_->now_ms() + limit_ms);
  }

  // The publish script on the world's server, as the publisher runs it (the world's publisher
  // only publishes the case's events).
  bool publish_now(const std::vector<sim::CaseEvent>& events, Checks& checks) override {
    const sim::SimCase& c = world_->sim_case();
    for (const sim::CaseEvent& e : events) {
      const PartitionRef p{sim::category_of(c, e), e.key};
      const redis::Reply id =
          world_->redis().execute({"EVAL", redis::script_source("publish"), "2", p.stream(),
                                   p.index(), e.key, e.type, sim::event_data_json(e.key, e.seq)});
      if (!checks.expect(id.kind == redis::Reply::Kind::bulk, "publish",
                         e.key + " seq " + std::to_string(e.seq) + ": " + id.str)) {
        return false;
      }
      HistoryRecord r;
      r.time_ms = world_->now_ms();
      r.op = HistoryOp::publish;
      r.category = p.category;
      r.key = e.key;
      r.event_id = id.str;
      r.seq = e.seq;
      if (e.behaviour.poison) r.detail = "poison";
      extras_.push_back(std::move(r));
    }
    return true;
  }

  // What `seqby admin skip|dlq` runs: the admin script, acting only on the head. In a
  // process-manager case the first argument names the stream "C:K".
  ToolRun admin(const std::string& action, const std::vector<std::string>& args) override {
    if ((action != "skip" && action != "dlq") || args.size() != 2) return ToolRun{};
    const sim::SimCase& c = world_->sim_case();
    const auto colon = args[0].rfind(':');
    const PartitionRef p = sim::is_process_manager(c) && colon != std::string::npos
                               ? PartitionRef{args[0].substr(0, colon), args[0].substr(colon + 1)}
                               : PartitionRef{c.category, args[0]};
    const char* script = action == "skip" ? "admin_skip" : "admin_dlq";
    redis::Command command{"EVAL", redis::script_source(script), action == "skip" ? "2" : "3",
                           p.stream(), redis::halt_key_name(p, c.group)};
    if (action == "dlq") command.push_back(p.dlq());
    command.push_back(c.group);
    command.push_back(args[1]);
    const redis::Reply r = world_->redis().execute(command);
    if (r.is_error()) return ToolRun{1, r.str};
    const std::string what = action == "skip" ? "acknowledged without processing"
                                              : "moved to " + p.dlq() + " as " +
                                                    (r.elements.empty() ? "" : r.elements[0].str) +
                                                    " and acknowledged";
    return ToolRun{0, args[1] + " on " + p.stream() + " for group " + c.group + ": " + what +
                          " (admin script on the simulated server)"};
  }

  void record(HistoryRecord record) override { extras_.push_back(std::move(record)); }
  std::uint64_t now_ms() override { return world_->now_ms(); }

 private:
  // The world's history with the records made outside it, each placed after every record of the
  // world decided at or before its time (the world decides nothing while a scenario acts).
  std::vector<HistoryRecord> merged(std::vector<HistoryRecord> history) {
    for (HistoryRecord& extra : extras_) {
      const auto at =
          std::upper_bound(history.begin(), history.end(), extra.time_ms,
                           [](std::uint64_t t, const HistoryRecord& r) { return t < r.time_ms; });
      history.insert(at, std::move(extra));
    }
    extras_.clear();
    for (std::size_t i = 0; i < history.size(); ++i) history[i].index = i;
    return history;
  }

  // The stream `category`:`key` ("" the case's category).
  PartitionRef stream_of(const std::string& key, const std::string& category) const {
    return PartitionRef{category.empty() ? world_->sim_case().category : category, key};
  }

  // The instance inside event `seq` of `key` on `category` ("" the case's category; any category
  // of a process-manager case), if any.
  std::optional<std::uint32_t> inside_event(const std::string& key, std::int64_t seq,
                                            const std::string& category) const {
    std::int64_t inside_seq = 0;
    std::string inside_category;
    const std::optional<std::uint32_t> instance =
        world_->inside(key, &inside_seq, &inside_category);
    if (!instance.has_value() || inside_seq != seq) return std::nullopt;
    const std::string wanted = stream_of(key, category).category;
    if (!wanted.empty() && inside_category != wanted) return std::nullopt;
    return instance;
  }

  std::optional<std::uint32_t> instance_of(const std::string& owner) const {
    for (std::uint32_t i = 0; i < world_->sim_case().instance_count; ++i) {
      if (world_->owner_id(i) == owner) return i;
    }
    return std::nullopt;
  }

  std::uint64_t seed_;
  std::unique_ptr<sim::World> world_;
  std::vector<HistoryRecord> extras_;
};

}  // namespace

std::unique_ptr<EngineBackend> make_sim_backend(std::uint64_t seed) {
  return std::make_unique<SimBackend>(seed);
}

}  // namespace seqby::scenarios::engine
