// The real-Redis backend of the engine scenarios: the case's instances are `seqby worker`
// processes (record handler, short leases), its events are published through the publish
// script (each with its publish record): each key's first event, then, once every key is owned,
// all the rest at once (the case's publish times are not replayed). A crash is SIGKILL, a stall
// is SIGSTOP past the lease then SIGCONT; the history is the run's decision journal
// (seqby/hiredis/journal.h), judged by the checker. Every deciding script journals its own
// decision, so a strike lands when the plan says, also between a decision and anything the
// worker does after it.
// A process-manager case runs its instances as process manager `group` over the case's
// categories, each under the driver's category (category_named: "RUN:order" for "order"), so
// runs on one server never meet. A key is a correlation value; a lane is a stream C:K. The
// Outcome names streams by the case's categories ("order:K"), and its history has the run prefix
// taken off the categories (of the records and of the run header), so that a scenario reads the
// same names on both backends.
#include <algorithm>
#include <chrono>
#include <set>

#include "engine_backend.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/hiredis/worker.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby/testing/record_handler.h"

namespace seqby::scenarios::engine {
namespace {

constexpr std::uint64_t kFinishWaitMaxMs = 60000;

// The driver's defaults, on a cluster when the context says so.
WorkerSettings settings_for(const ScenarioContext& ctx) {
  WorkerSettings settings;
  settings.cluster = ctx.redis_cluster;
  return settings;
}

class RedisBackend final : public EngineBackend {
 public:
  RedisBackend(const ScenarioContext& ctx, const std::string& label)
      : driver_(ctx.redis_url, ctx.seqby_binary, label, settings_for(ctx)),
        out_(ctx.out),
        not_judged_(ctx.not_judged) {}

  std::string where() const override { return "redis"; }
  std::uint64_t lease_ttl_ms(const sim::SimCase&) const override {
    return driver_.settings().lease_ttl_ms;
  }

  bool start(const sim::SimCase& c, Checks& checks) override {
    case_ = c;
    WorkerSettings settings = driver_.settings();
    settings.reap_idle_ms = c.engine.reap_idle_ms;
    settings.partitions_warn_threshold = c.engine.partitions_warn_threshold;
    if (sim::is_process_manager(c)) {
      settings.group = c.group;
      for (const std::string& name : c.pm_categories) {
        settings.pm_categories.push_back(driver_.category_named(name));
      }
    }
    driver_.set_settings(settings);
    const Status ready = driver_.ready();
    if (!checks.expect(
            ready.ok(), "real redis-server and seqby command",
            ready.ok() ? driver_.category() + " on " + driver_.url() : ready.error().message)) {
      return false;
    }
    for (std::uint32_t i = 0; i < c.instance_count; ++i) {
      if (!start_next_worker()) {
        checks.expect(false, "start workers", "fork failed");
        return false;
      }
    }
    // The run starts with every instance serving (announced as a member), so each discovers
    // the partitions as they are published, and ends its start once every key is owned.
    const std::string members = driver_.members_set();
    const bool up = driver_.wait_until([&] {
      return driver_.run({"SCARD", members}).integer >= static_cast<std::int64_t>(c.instance_count);
    });
    if (!checks.expect(up, "workers serving",
                       up ? std::to_string(c.instance_count) + " workers announced in " + members
                          : "not every worker announced itself\n" + driver_.logs())) {
      return false;
    }
    std::vector<PublishSpec> specs;
    for (const sim::CaseEvent& e : c.events) specs.push_back(spec_of(e));
    // Each key's first event goes first, and the rest once every key is owned: then every key's
    // work starts within a poll interval of the others' (as on the simulator, where both
    // instances pick events up as they are published), not a discovery interval apart.
    std::size_t first_count = 0;
    std::set<std::string> seen;
    while (first_count < specs.size() && seen.size() < c.keys.size())
      seen.insert(specs[first_count++].key);
    const std::vector<PublishSpec> first(specs.begin(),
                                         specs.begin() + static_cast<std::ptrdiff_t>(first_count));
    const std::vector<PublishSpec> rest(specs.begin() + static_cast<std::ptrdiff_t>(first_count),
                                        specs.end());
    if (!publish(first, checks)) return false;
    const bool owned = driver_.wait_until([&] {
      return std::all_of(c.keys.begin(), c.keys.end(),
                         [&](const std::string& key) { return !driver_.lease_owner(key).empty(); });
    });
    if (!checks.expect(owned, "every key owned",
                       owned ? "each key's lease is held after its first event"
                             : "not every key was acquired\n" + driver_.logs())) {
      return false;
    }
    return publish(rest, checks);
  }

  // `category` "" is the case's category; in a process-manager case, any of its categories.
  std::optional<std::string> wait_inside(const std::string& key, std::int64_t seq,
                                         const std::string& category) override {
    std::string owner;
    const bool caught = driver_.wait_until([&] {
      const std::optional<std::string> marker = driver_.inprogress_marker(key);
      if (!marker) return false;
      for (const std::string& name : case_categories(category)) {
        const std::string named = marker_value("", key, seq, name);  // ":ID" or ":C:ID"
        if (named.empty() || marker->size() <= named.size() || !marker->ends_with(named)) {
          continue;
        }
        owner = marker->substr(0, marker->find(':'));
        seen_inside_ = marker;
        return seq == 1 || history_has_commit(real_category(name), key, seq - 1);
      }
      return false;
    });
    if (!caught) {
      const std::string what = category.empty() ? key : category + ":" + key;
      out_ << "     no instance seen inside " << what << " seq " << seq << "; marker "
           << driver_.inprogress_marker(key).value_or("(none)") << "\n"
           << driver_.logs();
      return std::nullopt;
    }
    return owner;
  }

  // `category` "" as in wait_inside: in a process-manager case, event `seq` of every category of
  // `key` that has one.
  bool wait_done(const std::string& key, std::int64_t seq, const std::string& category) override {
    const bool any = category.empty() && process_manager();
    return driver_.wait_until([&] {
      const std::optional<std::string> marker = driver_.inprogress_marker(key);
      for (const std::string& name : case_categories(category)) {
        const std::string named = marker_value("", key, seq, name);  // ":ID" or ":C:ID"
        if (named.empty() && any) continue;  // that category has no event `seq` of `key`
        if (driver_.last_seq(key, real_category(name)) < seq) return false;
        if (marker && !named.empty() && marker->ends_with(named)) return false;
      }
      return true;
    });
  }

  bool has_inprogress_marker() const override { return true; }
  std::optional<std::string> marker_seen_inside() const override { return seen_inside_; }
  std::optional<std::string> inprogress_marker(const std::string& key) override {
    return driver_.inprogress_marker(key);
  }
  std::string marker_value(const std::string& owner, const std::string& key, std::int64_t seq,
                           const std::string& category) override {
    const std::string id = event_id(key, seq, category);
    if (id.empty()) return "";
    return testing::inprogress_marker_value(owner, real_category(category), id, process_manager());
  }
  std::string lease_owner(const std::string& key) override { return driver_.lease_owner(key); }

  std::string event_id(const std::string& key, std::int64_t seq,
                       const std::string& category) override {
    auto it = ids_.find(lane_name(category, key));
    if (it == ids_.end() || seq < 1 || static_cast<std::size_t>(seq) > it->second.size()) return "";
    return it->second[static_cast<std::size_t>(seq - 1)];
  }

  // A strike lands when the plan says, whatever the worker is doing: the history is the
  // decision journal, which every deciding script writes in the same step as its decision, so
  // nothing a kill or a stop interrupts is missing or misplaced in it.
  void crash(const std::string& owner, std::uint64_t restart_after_ms) override {
    driver_.crash(owner);
    crashed_.insert(owner);
    if (restart_after_ms > 0) start_next_worker();
  }

  std::string stall(const std::string& owner, const std::string& key) override {
    driver_.stall(owner);
    stalled_.insert(owner);
    std::string taker;
    driver_.wait_until([&] {
      taker = driver_.lease_owner(key);
      return !taker.empty() && taker != owner;
    });
    driver_.resume(owner);
    return taker == owner ? "" : taker;
  }

  Outcome finish(Checks& checks) override {
    Outcome o;
    std::set<std::string> poisoned;  // lane names
    std::map<std::string, std::int64_t> target;
    const std::vector<Lane> all = lanes();
    for (const Lane& lane : all) {
      const std::int64_t poison_seq = sim::first_poison_seq(case_, lane.key, lane.case_category);
      target[lane.name] =
          poison_seq > 0 ? poison_seq - 1 : static_cast<std::int64_t>(ids_[lane.name].size());
      if (poison_seq > 0) poisoned.insert(lane.name);
    }
    o.liveness_reached = driver_.wait_until(
        [&] {
          for (const Lane& lane : all) {
            if (driver_.last_seq(lane.key, lane.category) < target[lane.name]) return false;
          }
          return poisoned.empty() || halted(poisoned);
        },
        kFinishWaitMaxMs);
    std::string progress;
    for (const Lane& lane : all) {
      progress += (progress.empty() ? "" : ", ") + lane.name + " at " +
                  std::to_string(driver_.last_seq(lane.key, lane.category)) + " of " +
                  std::to_string(target[lane.name]);
    }
    checks.expect(o.liveness_reached, "every committable event committed",
                  progress + (poisoned.empty() ? "" : ", poisoned keys halted"));
    const std::vector<std::string> unclean = driver_.stop_all();
    std::string unclean_text;
    for (const auto& u : unclean) unclean_text += (unclean_text.empty() ? "" : ", ") + u;
    checks.expect(unclean.empty(), "workers stop gracefully on SIGTERM",
                  unclean.empty() ? "every running worker exited 0" : unclean_text);

    Result<std::vector<HistoryRecord>> history = driver_.read_history();
    checks.expect(history.ok(), "decision journal",
                  history.ok()
                      ? std::to_string(history.value().size()) + " records journaled by the scripts"
                      : history.error().message);
    if (history.ok()) o.history = std::move(history.value());
    if (process_manager()) {
      for (HistoryRecord& r : o.history) {
        r.category = case_category_of(r.category);
        if (!properties::is_run_header(r)) continue;
        properties::RunHeader header = properties::parse_run_header(r);
        for (auto& [group, categories] : header.pm_categories) {
          for (std::string& category : categories) category = case_category_of(category);
        }
        r.detail = properties::run_header_record(header).detail;
      }
    }
    o.logs = driver_.logs();
    for (const Lane& lane : all) {
      o.effects[lane.name] = driver_.effects(lane.key, lane.category);
      o.dlq_length[lane.name] = driver_.dlq_length(lane.key, lane.category);
      if (o.dlq_name_of_first_key.empty()) {
        o.dlq_name_of_first_key = driver_.partition(lane.key, lane.category).dlq();
      }
    }
    for (const auto& r : o.history) {
      if (r.op != HistoryOp::publish) continue;
      o.published[process_manager() ? r.category + ":" + r.key : r.key].push_back(r.event_id);
    }
    properties::CheckOptions options;
    options.require_halt_record = !poisoned.empty();
    options.skip = not_judged_;
    o.report = properties::check_history(o.history, options);
    expect_no_marker_overlap(checks, o.history);
    if (!o.liveness_reached || !o.report.ok()) {
      out_ << properties::render_report_text(o.report, &o.history) << driver_.logs();
    }
    return o;
  }

  std::string category() const override { return driver_.category(); }
  PartitionRef partition(const std::string& key) const override { return driver_.partition(key); }
  redis::Reply run(const redis::Command& command) override { return driver_.run(command); }
  bool wait_for(const std::function<bool()>& done, std::uint64_t limit_ms) override {
    return driver_.wait_until(done, limit_ms);
  }

  bool publish_now(const std::vector<sim::CaseEvent>& events, Checks& checks) override {
    std::vector<PublishSpec> specs;
    for (const sim::CaseEvent& e : events) {
      specs.push_back(spec_of(e));
      case_.events.push_back(e);
    }
    return publish(specs, checks);
  }

  ToolRun admin(const std::string& action, const std::vector<std::string>& args) override {
    std::vector<std::string> argv{"admin", "--redis", driver_.url()};
    const std::vector<std::string> on_server = server_flags(driver_.settings());
    argv.insert(argv.end(), on_server.begin(), on_server.end());
    argv.insert(argv.end(), {action, driver_.category()});
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandRun r = run_command(driver_.seqby_binary(), argv);
    return ToolRun{r.exit_code, r.out + r.err};
  }

  void record(HistoryRecord record) override {
    record.time_ms = now_ms();
    driver_.append_history(record);
  }

  std::uint64_t now_ms() override {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  }

 private:
  // One stream of the case: its Outcome name (the key; "C:K" in a process-manager case), the
  // case's category and the run's, and the key.
  struct Lane {
    std::string name;
    std::string case_category;
    std::string category;
    std::string key;
    friend auto operator<=>(const Lane&, const Lane&) = default;
  };

  bool process_manager() const { return sim::is_process_manager(case_); }

  // The case's category an event or a backend call names ("": the case's own; "" in a
  // process-manager case is no stream).
  std::string case_category(const std::string& name) const {
    return name.empty() ? case_.category : name;
  }
  // The case's categories a backend call's `category` stands for: itself, or for "" in a
  // process-manager case every one of its categories.
  std::vector<std::string> case_categories(const std::string& category) const {
    if (category.empty() && process_manager()) return case_.pm_categories;
    return {case_category(category)};
  }
  // The run's category of case category `name` (the driver's own unless a process manager).
  std::string real_category(const std::string& name) const {
    return process_manager() ? driver_.category_named(case_category(name)) : driver_.category();
  }
  // The case's name of run category `real` (itself when it is none of the case's).
  std::string case_category_of(const std::string& real) const {
    const std::string prefix = driver_.category() + ":";
    return process_manager() && real.starts_with(prefix) ? real.substr(prefix.size()) : real;
  }
  std::string lane_name(const std::string& category, const std::string& key) const {
    return process_manager() ? case_category(category) + ":" + key : key;
  }
  // Every stream with events (a partition case: every key), sorted by name.
  std::vector<Lane> lanes() const {
    std::set<Lane> out;
    if (!process_manager()) {
      for (const std::string& key : case_.keys) {
        out.insert(Lane{key, case_.category, driver_.category(), key});
      }
    }
    for (const sim::CaseEvent& e : case_.events) {
      const std::string category = sim::category_of(case_, e);
      out.insert(Lane{lane_name(category, e.key), case_category(category), real_category(category),
                      e.key});
    }
    return {out.begin(), out.end()};
  }

  PublishSpec spec_of(const sim::CaseEvent& e) const {
    PublishSpec spec{e.key, e.seq, e.behaviour.duration_ms + e.behaviour.slow_ms,
                     e.behaviour.poison, ""};
    if (process_manager()) spec.category = real_category(sim::category_of(case_, e));
    return spec;
  }

  bool publish(const std::vector<PublishSpec>& specs, Checks& checks) {
    Result<std::vector<std::string>> ids = driver_.publish(specs);
    const std::string where =
        process_manager() ? "the categories of " + driver_.group() : driver_.category();
    if (!checks.expect(ids.ok(), "publish",
                       ids.ok() ? std::to_string(specs.size()) + " events to " + where +
                                      " with their publish records"
                                : ids.error().message)) {
      return false;
    }
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const std::string name = process_manager()
                                   ? case_category_of(specs[i].category) + ":" + specs[i].key
                                   : specs[i].key;
      ids_[name].push_back(ids.value()[i]);
    }
    return true;
  }

  bool start_next_worker() {
    ++workers_started_;
    return driver_.start_worker("w" + std::to_string(workers_started_)) != nullptr;
  }

  // Whether the history holds an accepted commit of `seq` on stream `category`:`key` (run names).
  bool history_has_commit(const std::string& category, const std::string& key, std::int64_t seq) {
    Result<std::vector<HistoryRecord>> history = driver_.read_history();
    if (!history.ok()) return false;
    return std::any_of(history.value().begin(), history.value().end(), [&](const HistoryRecord& r) {
      return r.op == HistoryOp::commit && r.category == category && r.key == key && r.seq == seq;
    });
  }

  // Whether every lane named in `names` recorded a halt.
  bool halted(const std::set<std::string>& names) {
    Result<std::vector<HistoryRecord>> history = driver_.read_history();
    if (!history.ok()) return false;
    std::set<std::string> seen;
    for (const auto& r : history.value()) {
      if (r.op == HistoryOp::halt) seen.insert(lane_name(case_category_of(r.category), r.key));
    }
    return std::includes(seen.begin(), seen.end(), names.begin(), names.end());
  }

  // The record handler's SET NX on the in-progress marker found another holder: two instances
  // inside one partition. Admitted only when the holder was killed (its marker outlives it up to
  // its ttl), or when one of the two was stalled past its lease (the ADR's residue: a stale
  // owner may enter the event it had in flight; the checker requires it never commits). A run
  // that does not judge exclusion (a master failover: the cluster answers nobody for longer
  // than a lease, every instance is stalled past it) reports the overlaps without failing.
  void expect_no_marker_overlap(Checks& checks, const std::vector<HistoryRecord>& history) {
    std::uint64_t refused = 0;
    std::uint64_t admitted = 0;
    std::string first;
    for (const HistoryRecord& r : history) {
      if (r.op != HistoryOp::warn ||
          !properties::detail_starts_with_word(r.detail, testing::kInProgressOverlap)) {
        continue;
      }
      const std::size_t at = r.detail.find("holder=");
      const std::string holder =
          at == std::string::npos ? "" : r.detail.substr(at + 7, r.detail.find(':', at) - at - 7);
      if (crashed_.count(holder) || stalled_.count(holder) || stalled_.count(r.node)) {
        ++admitted;
        continue;
      }
      if (refused++ == 0)
        first = "record " + std::to_string(r.index) + " " + r.node + " " + r.key + " " + r.detail;
    }
    const bool judged = std::find(not_judged_.begin(), not_judged_.end(),
                                  properties::Property::exclusion) == not_judged_.end();
    checks.expect(refused == 0 || !judged, "in-progress marker never shared",
                  refused == 0 ? "no instance met another live owner's marker (" +
                                     std::to_string(admitted) + " met a killed or stalled one's)"
                  : judged ? std::to_string(refused) + " times, first: " + first
                           : "not judged (nor is exclusion in this run): met " +
                                 std::to_string(refused) + " times, first: " + first);
  }

  RedisScenarioDriver driver_;
  std::ostream& out_;
  std::vector<properties::Property> not_judged_;
  sim::SimCase case_;
  std::map<std::string, std::vector<std::string>> ids_;
  std::set<std::string> crashed_;
  std::set<std::string> stalled_;
  std::optional<std::string> seen_inside_;  // the marker the last wait_inside() saw
  std::uint32_t workers_started_ = 0;
};

}  // namespace

std::unique_ptr<EngineBackend> make_redis_backend(const ScenarioContext& ctx,
                                                  const std::string& label) {
  return std::make_unique<RedisBackend>(ctx, label);
}

}  // namespace seqby::scenarios::engine
