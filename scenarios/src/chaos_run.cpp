// One chaos run: a private (or given) redis-server, real `seqby worker` processes each behind
// its own fault proxy, the plan's publishes and strikes on one timeline, healing, the liveness
// phase, and the judges. Every wait is bounded; the run never hangs on a worker or the server.
// On a cluster (ChaosServerChoice::cluster) the run owns a private Redis Cluster instead: the
// workers reach every node directly (no proxy), the server-wide nemeses strike every node, and
// slot_migration and failover strike one lane's slot.
#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "chaos_detail.h"
#include "seqby/broker/cluster_slot.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/properties/history_io.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby/testing/fault_proxy.h"

namespace seqby::scenarios {
namespace {

using chaos_detail::ChaosLane;
using chaos_detail::PrivateRedis;

constexpr std::uint64_t kTickMs = 5;
constexpr std::uint64_t kWorkerReadyMaxMs = 10000;
constexpr std::uint64_t kUnexpectedExitRestartMs = 500;
constexpr std::uint64_t kPublishAttemptsMax = 2000;  // per event; ~10 s of retries at one a tick
constexpr std::uint64_t kHealPublishMaxMs = 20000;
// A strike that finds nothing to strike (no live worker, no open connection) is tried again at
// the next ticks for this long, then given up (and not counted).
constexpr std::uint64_t kStrikeRetryMs = 2000;
constexpr std::uint64_t kClusterPollMs = 100;  // health and promotion checks at most this often
constexpr std::uint64_t kClusterHealMaxMs = 30000;  // promotions, restarts and resyncs at healing
constexpr std::uint64_t kLostCheckEveryMs = 500;    // the liveness phase's look for lost publishes

void sleep_ms(std::uint64_t ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string percent_encoded(const std::string& text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// "127.0.0.1:port": a worker's proxy, or a cluster node (as the fault records name it).
std::string node_at(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// `config`'s URL, but reaching 127.0.0.1:port (a worker's proxy, or a cluster node).
std::string url_via(const redis::RedisConfig& config, std::uint16_t port) {
  std::string url = "redis://";
  if (!config.user.empty() || !config.password.empty()) {
    url += percent_encoded(config.user) + ":" + percent_encoded(config.password) + "@";
  }
  url += node_at(port);
  if (config.db != 0) url += "/" + std::to_string(config.db);
  return url;
}

// The last two non-empty lines of a log, joined by " / " (a usage error's message and its hint).
std::string last_line(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) return "(no log output)";
  if (lines.size() == 1) return lines.back();
  return lines[lines.size() - 2] + " / " + lines.back();
}

// The local ports of the TCP sockets process `pid` holds (/proc/PID/fd and /proc/PID/net/tcp):
// on a cluster, where no proxy stands between them, the ports of a worker's connections to the
// nodes.
std::vector<std::uint16_t> socket_ports_of(pid_t pid) {
  std::set<std::string> inodes;
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* dir = ::opendir(fd_dir.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      char target[128];
      const std::string path = fd_dir + "/" + entry->d_name;
      const ssize_t n = ::readlink(path.c_str(), target, sizeof(target) - 1);
      if (n <= 0) continue;
      const std::string link(target, static_cast<std::size_t>(n));
      if (link.rfind("socket:[", 0) == 0 && link.back() == ']') {
        inodes.insert(link.substr(8, link.size() - 9));
      }
    }
    ::closedir(dir);
  }
  std::vector<std::uint16_t> ports;
  std::ifstream tcp("/proc/" + std::to_string(pid) + "/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  while (std::getline(tcp, line)) {
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string word;
    while (fields >> word && f.size() < 10) f.push_back(word);
    if (f.size() < 10 || inodes.count(f[9]) == 0) continue;
    const std::size_t colon = f[1].find(':');
    if (colon == std::string::npos) continue;
    ports.push_back(static_cast<std::uint16_t>(std::stoul(f[1].substr(colon + 1), nullptr, 16)));
  }
  return ports;
}

bool needs_redis(Nemesis kind) {
  return kind == Nemesis::client_kill || kind == Nemesis::client_pause ||
         kind == Nemesis::script_flush || kind == Nemesis::server_restart ||
         kind == Nemesis::slot_migration || kind == Nemesis::failover;
}

HistoryRecord fault_record(const std::string& node, std::string detail) {
  HistoryRecord r;
  r.node = node;
  r.op = HistoryOp::fault;
  r.detail = std::move(detail);
  return r;
}

// A worker slot: the worker now serving it, and its pending timers (0: none).
struct Slot {
  WorkerProcess* worker = nullptr;
  bool dead = false;  // killed (or exited) and not restarted yet
  bool stopped = false;
  std::uint64_t restart_at_ms = 0;
  std::uint64_t continue_at_ms = 0;
  std::uint64_t proxy_heal_at_ms = 0;
  std::uint32_t incarnation = 0;
  std::unique_ptr<testing::FaultProxy> proxy;  // none on a cluster
};

// A cluster node the failover nemesis killed: restarted (it rejoins as a replica) once another
// node serves its slot `slot`, and not before restart_at_ms.
struct DownNode {
  std::uint16_t port = 0;
  std::uint16_t slot = 0;
  std::uint64_t restart_at_ms = 0;
};

// A master whose replica the failover nemesis holds back (SIGSTOPped, its replication link
// dropped): at kill_at_ms the master is SIGKILLed and the replica resumed, to be promoted with a
// prefix of the master's writes (those of the last lag are gone).
struct LaggingShard {
  std::uint16_t master = 0;
  std::uint16_t replica = 0;
  std::uint16_t slot = 0;
  std::uint64_t lagged_at_ms = 0;
  std::uint64_t kill_at_ms = 0;
};

class ChaosRun {
 public:
  ChaosRun(const ChaosParams& params, const ChaosServerChoice& server, std::string binary,
           std::uint64_t seed, std::ostream& log)
      : p_(params), server_(server), binary_(std::move(binary)), log_(log) {
    plan_ = draw_chaos_plan(p_, seed);
    r_.seed = seed;
  }

  ChaosRunResult run() {
    const auto start = std::chrono::steady_clock::now();
    if (setup()) {
      fault_phase();
      heal();
      liveness();
      judge();
    }
    r_.run_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::steady_clock::now() - start)
                                               .count());
    r_.params_json = params_json();
    r_.passed = !r_.setup_failed && r_.violations.empty();
    return std::move(r_);
  }

 private:
  bool fail_setup(const std::string& why, bool bad_input = false) {
    r_.setup_failed = true;
    r_.bad_input = bad_input;
    r_.setup_error = why;
    return false;
  }

  std::uint64_t elapsed_ms() const {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - t0_)
                                          .count());
  }
  bool redis_usable() const { return !server_down_ && elapsed_ms() >= paused_until_ms_; }

  bool setup() {
    std::string url = server_.redis_url;
    if (server_.cluster) {
      cluster_ = std::make_unique<RedisCluster>();
      if (!cluster_->ok())
        return fail_setup("the Redis Cluster did not start: " + cluster_->error());
      url = url_via(redis::RedisConfig{}, cluster_->ports().front());
    } else if (url.empty()) {
      own_ = std::make_unique<PrivateRedis>();
      if (Status s = own_->start(); !s.ok()) return fail_setup(s.error().message);
      url = own_->url();
    }
    Result<redis::RedisConfig> config = redis::parse_redis_url(url);
    if (!config.ok()) return fail_setup(config.error().message, true);
    config_ = config.value();
    if (config_.host == "localhost") config_.host = "127.0.0.1";
    redis::RedisConfig control = config_;
    control.command_timeout_ms = 5000;
    control_ = std::make_unique<redis::BlockingRedis>(control);

    WorkerSettings settings;
    settings.lease_ttl_ms = p_.lease_ttl_ms;
    settings.heartbeat_interval_ms = std::max<std::uint64_t>(1, p_.lease_ttl_ms / 4);
    settings.unsafe_variant = p_.variant;
    settings.cluster = server_.cluster;
    settings.wait_replicas = p_.wait_replicas;
    settings.step_batch_max = p_.step_batch_max;
    settings.publish_retry_ms = 0;  // publish_due retries at the next tick, after landed()
    driver_ = std::make_unique<RedisScenarioDriver>(url, binary_, "chaos", settings);
    if (p_.process_manager) {
      settings.pm_categories = {driver_->category_named("order"),
                                driver_->category_named("payment")};
      driver_->set_settings(settings);
      categories_ = settings.pm_categories;
    } else {
      categories_ = {driver_->category()};
    }
    if (Status ready = driver_->ready(); !ready.ok()) return fail_setup(ready.error().message);

    for (const std::string& category : categories_) {
      for (std::uint32_t k = 0; k < p_.keys; ++k) {
        ChaosLane lane;
        lane.category = category;
        lane.key = "k" + std::to_string(k);
        lanes_.push_back(lane);
      }
    }
    for (const PlannedEvent& e : plan_.events) {
      if (e.poison) lane_of(e).poison_seq = e.seq;
    }
    slots_.resize(p_.workers);
    for (std::uint32_t i = 0; i < p_.workers && !cluster_; ++i) {
      slots_[i].proxy = std::make_unique<testing::FaultProxy>(config_.host, config_.port);
      if (!slots_[i].proxy->ok()) return fail_setup("fault proxy: " + slots_[i].proxy->error());
    }
    properties::RunHeader header;
    header.extra = {{"seed", std::to_string(r_.seed)}, {"chaos", "1"}};
    if (!p_.variant.empty()) header.extra.push_back({"variant", p_.variant});
    append_now(properties::run_header_record(header));
    for (std::uint32_t i = 0; i < p_.workers; ++i) {
      if (!start_slot(i)) return fail_setup("could not start a worker (fork failed)");
    }
    // Every worker announces itself in the members set, or exits (a refused argument).
    const std::string members = driver_->members_set();
    const auto ready_start = std::chrono::steady_clock::now();
    for (;;) {
      std::size_t joined = 0;
      for (Slot& s : slots_) {
        int status = 0;
        if (s.worker->exited(&status)) {
          return fail_setup(s.worker->owner() + " exited " + std::to_string(status) +
                                " at start: " + last_line(s.worker->log()),
                            status == 2);
        }
        const redis::Reply in = driver_->run({"SISMEMBER", members, s.worker->owner()});
        if (in.kind == redis::Reply::Kind::integer && in.integer == 1) ++joined;
      }
      if (joined == slots_.size()) break;
      if (std::chrono::steady_clock::now() - ready_start >
          std::chrono::milliseconds(kWorkerReadyMaxMs)) {
        return fail_setup("the workers did not all join " + members + " within " +
                          std::to_string(kWorkerReadyMaxMs) + " ms");
      }
      sleep_ms(20);
    }
    t0_ = std::chrono::steady_clock::now();
    return true;
  }

  ChaosLane& lane_of(const PlannedEvent& e) {
    return lanes_[static_cast<std::size_t>(e.category) * p_.keys + e.key];
  }

  bool start_slot(std::uint32_t i) {
    Slot& s = slots_[i];
    const std::string owner =
        "w" + std::to_string(i) + (s.incarnation == 0 ? "" : "r" + std::to_string(s.incarnation));
    ++s.incarnation;
    // On a cluster any live node is a seed: the worker reads the slot map from it.
    s.worker = driver_->start_worker(
        owner, url_via(config_, cluster_ ? cluster_->live_ports().front() : s.proxy->port()));
    if (s.worker == nullptr) return false;
    ++r_.worker_starts;
    s.dead = false;
    s.stopped = false;
    s.restart_at_ms = 0;
    s.continue_at_ms = 0;
    return true;
  }

  // --- the history records chaos writes (faults, markers) ------------------------------------

  // Through the driver, so the record goes where the run's history lives (collect_history).
  // A first command after a server restart may fail on a stale connection: a failure shows as
  // one more transport error, and the record is appended again.
  bool try_append(const HistoryRecord& record) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      const std::uint64_t errors_before = driver_->transport_errors();
      driver_->append_history(record);
      if (driver_->transport_errors() == errors_before) return true;
    }
    return false;
  }
  void append_now(const HistoryRecord& record) {
    if (try_append(record)) return;
    log_ << "chaos: seed " << r_.seed << ": could not append a fault record: " << record.detail
         << "\n";
  }
  void queue_record(HistoryRecord record) { pending_records_.push_back(std::move(record)); }
  // Appends the queued records in order. One that fails stays queued with those after it (on a
  // cluster the node of the run's journal may be down, mid-failover) unless `last`: then it is
  // said on the log and dropped.
  void flush_records(bool last = false) {
    if (!redis_usable()) {
      // Not silently: the last flush is the records' last chance.
      if (last && !pending_records_.empty()) {
        log_ << "chaos: seed " << r_.seed << ": " << pending_records_.size()
             << " fault record(s) not appended: the server is down or paused\n";
      }
      return;
    }
    std::size_t done = 0;
    while (done < pending_records_.size()) {
      if (!try_append(pending_records_[done])) {
        if (!last) break;
        log_ << "chaos: seed " << r_.seed
             << ": could not append a fault record: " << pending_records_[done].detail << "\n";
      }
      ++done;
    }
    pending_records_.erase(pending_records_.begin(),
                           pending_records_.begin() + static_cast<std::ptrdiff_t>(done));
  }

  // --- the timeline ---------------------------------------------------------------------------

  // A strike that cannot strike yet (no live worker, the server down or paused, the cluster not
  // healthy) waits for its next tick without holding back the strikes due after it; it is given
  // up after kStrikeRetryMs (a cluster's own strikes: not before the fault phase ends, since a
  // failover's promotion and resync take seconds).
  void fault_phase() {
    std::size_t next_strike = 0;
    std::vector<std::size_t> due;  // indices into plan_.strikes, in plan order
    while (elapsed_ms() < p_.duration_ms) {
      tick_timers();
      while (next_strike < plan_.strikes.size() &&
             plan_.strikes[next_strike].at_ms <= elapsed_ms()) {
        due.push_back(next_strike++);
      }
      for (auto it = due.begin(); it != due.end();) {
        const Strike& strike = plan_.strikes[*it];
        const bool on_cluster =
            strike.kind == Nemesis::slot_migration || strike.kind == Nemesis::failover;
        const std::uint64_t retry_ms = on_cluster ? p_.duration_ms : kStrikeRetryMs;
        const bool can_try = !needs_redis(strike.kind) || redis_usable();
        if ((can_try && fire(strike)) || elapsed_ms() >= strike.at_ms + retry_ms) {
          it = due.erase(it);
        } else {
          ++it;
        }
      }
      publish_due(elapsed_ms());
      flush_records();
      watch_workers();
      sleep_ms(kTickMs);
    }
  }

  void tick_timers() {
    const std::uint64_t now = elapsed_ms();
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (s.stopped && now >= s.continue_at_ms) {
        s.worker->continue_now();
        s.stopped = false;
      }
      if (s.proxy && s.proxy_heal_at_ms != 0 && now >= s.proxy_heal_at_ms) {
        s.proxy->pass();
        s.proxy_heal_at_ms = 0;
      }
      if (s.dead && now >= s.restart_at_ms) {
        if (!start_slot(i)) log_ << "chaos: seed " << r_.seed << ": a restart failed (fork)\n";
        ++r_.worker_restarts;
      }
    }
    if (server_down_ && now >= server_up_at_ms_) restart_server();
    for (auto it = lagging_.begin(); it != lagging_.end();) {
      if (now < it->kill_at_ms) {
        ++it;
        continue;
      }
      kill_lagging_master(*it);
      it = lagging_.erase(it);
    }
    if (!down_.empty() && redis_usable() && now >= cluster_polled_ms_ + kClusterPollMs) {
      cluster_polled_ms_ = now;
      restart_promoted_nodes(false);
    }
  }

  // --- the cluster ----------------------------------------------------------------------------

  // Restarts each killed node whose slot another node now serves (and, unless `now`, whose
  // down time is over). A node that does not come back fails the run.
  void restart_promoted_nodes(bool now) {
    for (auto it = down_.begin(); it != down_.end();) {
      if (!now && elapsed_ms() < it->restart_at_ms) {
        ++it;
        continue;
      }
      const std::optional<std::uint16_t> serving = cluster_->master_of_slot(it->slot);
      if (!serving.has_value() || *serving == it->port) {
        ++it;  // not promoted yet: restarting it now would bring its slots back empty
        continue;
      }
      if (!cluster_->restart(it->port)) {
        r_.violations.push_back(
            ChaosViolation{"failover", "", r_.seed,
                           "the killed node did not come back as a replica: " + cluster_->error()});
      }
      queue_record(fault_record(
          "", "failover restart node=" + node_at(it->port) + " slot_now_on=" + node_at(*serving)));
      it = down_.erase(it);
    }
  }

  void kill_lagging_master(const LaggingShard& shard) {
    cluster_->kill(shard.master);
    if (!cluster_->signal(shard.replica, SIGCONT)) {
      r_.violations.push_back(
          ChaosViolation{"failover", "", r_.seed,
                         "could not resume the held-back replica " + node_at(shard.replica)});
    }
    down_.push_back(DownNode{shard.master, shard.slot, elapsed_ms()});
    queue_record(fault_record(
        "", "failover sigkill master=" + node_at(shard.master) +
                " replica_lag_ms=" + std::to_string(elapsed_ms() - shard.lagged_at_ms)));
  }

  // Every node ok, agreeing, every replica in sync: a cluster strike waits for it. The answer is
  // kept for kClusterPollMs (each look asks every node several questions) unless a strike
  // changed the cluster since.
  bool cluster_healthy() {
    if (!down_.empty() || !lagging_.empty()) return false;
    if (!health_known_ || elapsed_ms() >= health_polled_ms_ + kClusterPollMs) {
      healthy_ = cluster_->wait_healthy(0);
      health_polled_ms_ = elapsed_ms();
      health_known_ = true;
    }
    return healthy_;
  }

  // The slot of lane `index`'s keys (its stream's hash tag).
  std::uint16_t lane_slot(std::uint32_t index) const {
    const ChaosLane& lane = lanes_[index % lanes_.size()];
    return redis::key_slot(driver_->partition(lane.key, lane.category).stream());
  }

  // `command` on every live node (`masters_only`: on every master); false when one refused.
  bool on_each_node(const redis::Command& command, bool masters_only) {
    bool all = true;
    for (std::uint16_t port : masters_only ? cluster_->masters() : cluster_->live_ports()) {
      Result<redis::Reply> reply = RedisCluster::run(port, command);
      all = all && reply.ok() && !reply.value().is_error();
    }
    return all;
  }

  // A cluster strike's target: the slot of its lane and the master serving it, once the cluster
  // is healthy (nullopt until then).
  struct SlotTarget {
    std::uint16_t slot = 0;
    std::uint16_t master = 0;
  };
  std::optional<SlotTarget> slot_target(const Strike& strike) {
    if (!cluster_healthy()) return std::nullopt;
    const std::uint16_t slot = lane_slot(strike.lane);
    const std::optional<std::uint16_t> master = cluster_->master_of_slot(slot);
    if (!master.has_value()) return std::nullopt;
    return SlotTarget{slot, *master};
  }

  bool migrate_slot(const Strike& strike) {
    const std::optional<SlotTarget> target = slot_target(strike);
    if (!target.has_value()) return false;
    const std::uint16_t slot = target->slot;
    const std::uint16_t from = target->master;
    std::vector<std::uint16_t> others;
    for (std::uint16_t master : cluster_->masters()) {
      if (master != from) others.push_back(master);
    }
    if (others.empty()) return false;
    const std::uint16_t to = others[strike.mode % others.size()];
    if (!cluster_->begin_slot_move(slot, from, to) ||
        !cluster_->finish_slot_move(slot, from, to, /*batch=*/1)) {
      const std::string why = cluster_->error();
      cluster_->abort_slot_move(slot, from, to);
      r_.violations.push_back(ChaosViolation{
          "slot_migration", "", r_.seed,
          "the migration of slot " + std::to_string(slot) + " did not complete: " + why});
    }
    health_known_ = false;
    queue_record(fault_record("", "slot_migration slot=" + std::to_string(slot) +
                                      " from=" + node_at(from) + " to=" + node_at(to)));
    return true;
  }

  bool fail_over(const Strike& strike) {
    const std::optional<SlotTarget> target = slot_target(strike);
    if (!target.has_value()) return false;
    const std::uint16_t slot = target->slot;
    const std::uint16_t master = target->master;
    const std::vector<std::uint16_t> replicas = cluster_->replicas_of(master);
    if (replicas.empty()) return false;
    const std::string where = "master=" + node_at(master);
    health_known_ = false;
    if (strike.mode == 0) {
      Result<redis::Reply> done = RedisCluster::run(replicas.front(), {"CLUSTER", "FAILOVER"});
      if (!done.ok() || done.value() != redis::Reply::status("OK")) return false;
      queue_record(fault_record(
          "", "failover cluster_failover " + where + " replica=" + node_at(replicas.front())));
    } else if (strike.mode == 1) {
      cluster_->kill(master);
      down_.push_back(DownNode{master, slot, elapsed_ms() + strike.duration_ms});
      failover_killed_ = true;
      queue_record(fault_record("", "failover sigkill " + where));
    } else {
      // Hold the replica back first: the master's writes from here on are what the failover
      // loses (its promotion needs the replica's data age under the cluster's validity bound:
      // node timeout x cluster-replica-validity-factor, far above the lag drawn here).
      const std::uint16_t replica = replicas.front();
      if (!cluster_->signal(replica, SIGSTOP)) return false;
      // Dropped by the master (the stopped replica cannot notice): nothing written from here
      // reaches it. A refusal leaves it a replica that merely catches up later.
      if (!RedisCluster::run(master, {"CLIENT", "KILL", "TYPE", "replica"}).ok()) {
        cluster_->signal(replica, SIGCONT);
        return false;
      }
      lagging_.push_back(
          LaggingShard{master, replica, slot, elapsed_ms(), elapsed_ms() + strike.duration_ms});
      failover_killed_ = true;
      queue_record(fault_record("", "failover lagging_replica " + where +
                                        " replica=" + node_at(replica) +
                                        " lag_ms=" + std::to_string(strike.duration_ms)));
    }
    return true;
  }

  // Looks, for each lane short of its target, for the publishes a failover lost: the published
  // entries past the sink's last seq that are gone from their stream (checked once per lane:
  // the lane's target then stops before the first of them).
  void find_lost_publishes() {
    for (ChaosLane& lane : lanes_) {
      if (lane.lost_from != 0) continue;
      const std::uint64_t errors_before = driver_->transport_errors();
      const std::int64_t last = driver_->last_seq(lane.key, lane.category);
      if (driver_->transport_errors() != errors_before) continue;  // no answer: look again later
      const std::string stream = driver_->partition(lane.key, lane.category).stream();
      std::vector<std::int64_t> lost;
      bool answered = true;
      for (std::int64_t seq = std::max<std::int64_t>(last, 0) + 1; seq <= lane.target(); ++seq) {
        const std::string& id = lane.ids[static_cast<std::size_t>(seq - 1)];
        const redis::Reply entry = driver_->run({"XRANGE", stream, id, id});
        answered = entry.kind == redis::Reply::Kind::array;
        if (!answered) break;  // no answer: look again later
        if (entry.elements.empty()) lost.push_back(seq);
      }
      if (!answered || lost.empty()) continue;
      lane.lost_from = lost.front();
      for (std::int64_t seq : lost) {
        const std::string what = lane.category + ":" + lane.key + " seq " + std::to_string(seq) +
                                 " (entry " + lane.ids[static_cast<std::size_t>(seq - 1)] + ")";
        r_.lost_publishes.push_back(what);
        if (p_.wait_replicas > 0 && lane.unconfirmed.count(seq) == 0) {
          r_.violations.push_back(
              ChaosViolation{"no_loss", lane.category + ":" + lane.key, r_.seed,
                             "publish " + what +
                                 " was acknowledged after WAIT confirmed a replica, and is gone "
                                 "after a failover"});
        }
      }
    }
  }

  void restart_server() {
    Status up = own_->restart();
    server_down_ = false;
    if (!up.ok()) {
      r_.violations.push_back(
          ChaosViolation{"server_restart", "", r_.seed,
                         "the restarted redis-server did not come back: " + up.error().message});
      server_lost_ = true;
    }
  }

  // The first slot from `target` on that `fits`; -1 when none does.
  template <typename Fits>
  int pick_slot(std::uint32_t target, Fits fits) {
    for (std::uint32_t n = 0; n < slots_.size(); ++n) {
      const std::uint32_t i = (target + n) % static_cast<std::uint32_t>(slots_.size());
      if (fits(slots_[i])) return static_cast<int>(i);
    }
    return -1;
  }

  // Strikes; false when it found nothing to strike.
  bool fire(const Strike& strike) {
    const std::uint64_t now = elapsed_ms();
    switch (strike.kind) {
      case Nemesis::kill: {
        const int i = pick_slot(strike.target, [](const Slot& s) { return !s.dead; });
        if (i < 0) return false;
        Slot& s = slots_[static_cast<std::size_t>(i)];
        s.worker->kill_now();
        s.dead = true;
        s.stopped = false;
        s.restart_at_ms = now + strike.duration_ms;
        queue_record(fault_record(s.worker->owner(), "crash sigkill"));
        break;
      }
      case Nemesis::stop: {
        const int i = pick_slot(strike.target, [](const Slot& s) { return !s.dead && !s.stopped; });
        if (i < 0) return false;
        Slot& s = slots_[static_cast<std::size_t>(i)];
        s.worker->stop_now();
        s.stopped = true;
        s.continue_at_ms = now + strike.duration_ms;
        queue_record(fault_record(
            s.worker->owner(), "stall sigstop duration_ms=" + std::to_string(strike.duration_ms)));
        break;
      }
      case Nemesis::client_kill: {
        std::uint64_t killed = 0;
        std::string owner;
        for (std::uint32_t n = 0; n < slots_.size() && killed == 0; ++n) {
          Slot& s = slots_[(strike.target + n) % slots_.size()];
          if (s.dead) continue;
          if (cluster_) {
            const std::vector<std::uint16_t> ports = socket_ports_of(s.worker->pid());
            for (std::uint16_t node : cluster_->live_ports()) {
              killed += kill_clients(ports, [node](const redis::Command& command) {
                return RedisCluster::run(node, command);
              });
            }
          } else {
            killed = kill_clients(
                s.proxy->upstream_local_ports(),
                [this](const redis::Command& command) { return control_->execute(command); });
          }
          owner = s.worker->owner();
        }
        if (killed == 0) return false;
        queue_record(fault_record(owner, "client_kill connections=" + std::to_string(killed)));
        break;
      }
      case Nemesis::client_pause: {
        const redis::Command pause{"CLIENT", "PAUSE", std::to_string(strike.duration_ms), "ALL"};
        if (cluster_) {
          if (!on_each_node(pause, /*masters_only=*/true)) return false;
        } else {
          Result<redis::Reply> reply = control_->execute(pause);
          if (!reply.ok() || reply.value().is_error()) return false;
        }
        paused_until_ms_ = now + strike.duration_ms + 1;
        queue_record(fault_record("", "client_pause ms=" + std::to_string(strike.duration_ms)));
        break;
      }
      case Nemesis::server_restart: {
        if (!own_ || server_lost_) return false;
        own_->kill();
        control_->disconnect();
        server_down_ = true;
        server_up_at_ms_ = now + strike.duration_ms;
        queue_record(fault_record(
            "", "server_restart sigkill down_ms=" + std::to_string(strike.duration_ms)));
        break;
      }
      case Nemesis::script_flush: {
        if (cluster_) {
          if (!on_each_node({"SCRIPT", "FLUSH"}, /*masters_only=*/false)) return false;
        } else {
          Result<redis::Reply> reply = control_->execute({"SCRIPT", "FLUSH"});
          if (!reply.ok() || reply.value().is_error()) return false;
        }
        queue_record(fault_record("", "script_flush"));
        break;
      }
      case Nemesis::slot_migration:
        if (!cluster_ || !migrate_slot(strike)) return false;
        break;
      case Nemesis::failover:
        if (!cluster_ || !fail_over(strike)) return false;
        break;
      case Nemesis::proxy: {
        Slot& s = slots_[strike.target % slots_.size()];
        if (!s.proxy) return false;
        std::string detail = "proxy ";
        if (strike.proxy_mode == 2) {
          s.proxy->reset_all();
          detail += "reset";
        } else {
          if (strike.proxy_mode == 0) {
            s.proxy->delay(strike.proxy_delay_ms);
            detail += "delay_ms=" + std::to_string(strike.proxy_delay_ms);
          } else {
            s.proxy->drop();
            detail += "drop";
          }
          s.proxy_heal_at_ms = now + strike.duration_ms;
          detail += " duration_ms=" + std::to_string(strike.duration_ms);
        }
        queue_record(fault_record(s.worker->owner(), detail));
        break;
      }
    }
    r_.fired.add(strike.kind);
    return true;
  }

  // CLIENT KILL ID of every client whose address port is one of `ports`, on the server `run`
  // reaches; how many it killed.
  template <typename Run>
  std::uint64_t kill_clients(const std::vector<std::uint16_t>& ports, Run run) {
    if (ports.empty()) return 0;
    const std::set<std::uint16_t> wanted(ports.begin(), ports.end());
    Result<redis::Reply> list = run({"CLIENT", "LIST"});
    if (!list.ok() || list.value().kind != redis::Reply::Kind::bulk) return 0;
    std::uint64_t killed = 0;
    std::istringstream lines(list.value().str);
    std::string line;
    while (std::getline(lines, line)) {
      std::string id;
      std::uint16_t port = 0;
      std::istringstream fields(line);
      std::string field;
      while (fields >> field) {
        if (field.rfind("id=", 0) == 0) id = field.substr(3);
        if (field.rfind("addr=", 0) == 0) {
          const auto colon = field.rfind(':');
          if (colon != std::string::npos) {
            port = static_cast<std::uint16_t>(std::stoul(field.substr(colon + 1)));
          }
        }
      }
      if (id.empty() || wanted.count(port) == 0) continue;
      Result<redis::Reply> kill = run({"CLIENT", "KILL", "ID", id});
      if (kill.ok() && kill.value().kind == redis::Reply::Kind::integer) {
        killed += static_cast<std::uint64_t>(kill.value().integer);
      }
    }
    return killed;
  }

  // Publishes the events due by `now_ms` in plan order while Redis is usable. A failed publish
  // is retried at the next tick, after checking that it did not land (the publisher is the only
  // writer of its streams, so the stream's last entry tells).
  void publish_due(std::uint64_t now_ms) {
    while (next_event_ < plan_.events.size() && plan_.events[next_event_].at_ms <= now_ms &&
           redis_usable()) {
      const PlannedEvent& e = plan_.events[next_event_];
      ChaosLane& lane = lane_of(e);
      if (!publish_one(e, &lane)) {
        if (++publish_attempts_ >= kPublishAttemptsMax) {
          r_.violations.push_back(
              ChaosViolation{"publish", lane.category + ":" + lane.key, r_.seed,
                             "the publisher could not publish seq " + std::to_string(e.seq) +
                                 " after " + std::to_string(publish_attempts_) + " attempts"});
          next_event_ = plan_.events.size();
        }
        return;
      }
      publish_attempts_ = 0;
      ++r_.events_published;
      ++next_event_;
    }
  }

  bool publish_one(const PlannedEvent& e, ChaosLane* lane) {
    SEQBY_CHECK(static_cast<std::int64_t>(lane->ids.size()) == e.seq - 1);
    PublishSpec spec;
    spec.key = lane->key;
    spec.seq = e.seq;
    spec.delay_ms = e.delay_ms;
    spec.poison = e.poison;
    spec.fail_deliveries = e.fail_deliveries;
    spec.category = lane->category;
    if (publish_attempts_ > 0) {  // did the failed attempt land?
      Result<std::optional<std::string>> found = driver_->landed(spec);
      if (!found.ok()) return false;
      if (found.value().has_value()) {
        lane->ids.push_back(*found.value());
        lane->unconfirmed.insert(e.seq);  // it landed, but its reply (WAIT's too) was lost
        return true;
      }
    }
    Result<std::vector<std::string>> ids = driver_->publish({spec});
    if (!ids.ok()) return false;
    lane->ids.push_back(ids.value().front());
    return true;
  }

  // A worker that exited by itself is reported and restarted (its executions end there).
  void watch_workers() {
    for (Slot& s : slots_) {
      if (s.dead) continue;
      int status = 0;
      if (!s.worker->exited(&status)) continue;
      const std::string what = s.worker->owner() + " exited " + std::to_string(status) + ": " +
                               last_line(s.worker->log());
      r_.unexpected_exits.push_back(what);
      log_ << "chaos: seed " << r_.seed << ": worker " << what << "\n";
      // Exiting non-zero with a reason is allowed (a worker that must give up says why); dying
      // of a signal (an assertion, a crash) or exiting 0 unasked is not.
      if (status <= 0) {
        r_.violations.push_back(
            ChaosViolation{"worker_survival", "", r_.seed,
                           s.worker->owner() +
                               (status == 0 ? " exited 0 without being asked to stop"
                                            : " died of a signal (not one chaos sent)") +
                               ": " + last_line(s.worker->log())});
      }
      queue_record(
          fault_record(s.worker->owner(), "crash exited status=" + std::to_string(status)));
      s.dead = true;
      s.stopped = false;
      s.restart_at_ms = elapsed_ms() + kUnexpectedExitRestartMs;
    }
  }

  // --- healing, liveness, judging -------------------------------------------------------------

  void heal() {
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      if (s.proxy) s.proxy->pass();
      s.proxy_heal_at_ms = 0;
      if (s.stopped) {
        s.worker->continue_now();
        s.stopped = false;
      }
    }
    if (server_down_) restart_server();
    for (std::uint32_t i = 0; i < slots_.size(); ++i) {
      if (!slots_[i].dead) continue;
      if (start_slot(i)) ++r_.worker_restarts;
    }
    while (elapsed_ms() < paused_until_ms_) sleep_ms(kTickMs);
    if (cluster_) heal_cluster();
    const std::uint64_t heal_deadline_ms = elapsed_ms() + kHealPublishMaxMs;
    while (next_event_ < plan_.events.size() && elapsed_ms() < heal_deadline_ms) {
      publish_due(~0ull);
      watch_workers();
      tick_timers();
      if (next_event_ < plan_.events.size()) sleep_ms(kTickMs);
    }
    if (next_event_ < plan_.events.size()) {
      r_.violations.push_back(ChaosViolation{
          "publish", "", r_.seed,
          std::to_string(plan_.events.size() - next_event_) + " events were never published"});
    }
    flush_records(/*last=*/true);
    append_now(properties::liveness_marker_record(elapsed_ms()));
  }

  // Every killed node back (once its replica took over) and the cluster healthy again.
  void heal_cluster() {
    for (const LaggingShard& shard : lagging_) kill_lagging_master(shard);
    lagging_.clear();
    const std::uint64_t until_ms = elapsed_ms() + kClusterHealMaxMs;
    while (!down_.empty() && elapsed_ms() < until_ms) {
      restart_promoted_nodes(true);
      if (!down_.empty()) sleep_ms(kClusterPollMs);
    }
    if (!down_.empty()) {
      r_.violations.push_back(
          ChaosViolation{"failover", "", r_.seed,
                         "no replica took over the slots of a killed master within " +
                             std::to_string(kClusterHealMaxMs) + " ms"});
      return;
    }
    const std::uint64_t left_ms = until_ms > elapsed_ms() ? until_ms - elapsed_ms() : 0;
    if (!cluster_->wait_healthy(left_ms)) {
      r_.violations.push_back(ChaosViolation{"failover", "", r_.seed,
                                             "the cluster did not heal: " + cluster_->error()});
    }
  }

  void liveness() {
    const std::uint64_t healed_ms = elapsed_ms();
    driver_->run({"PING"});  // reconnect the driver's connection after a restart
    std::uint64_t lost_checked_ms = 0;
    for (;;) {
      watch_workers();
      tick_timers();
      if (failover_killed_ && elapsed_ms() >= lost_checked_ms + kLostCheckEveryMs) {
        lost_checked_ms = elapsed_ms();
        find_lost_publishes();
      }
      bool done = true;
      for (const ChaosLane& lane : lanes_) {
        if (driver_->last_seq(lane.key, lane.category) < lane.target()) {
          done = false;
          break;
        }
      }
      if (done) {
        r_.liveness_reached = true;
        break;
      }
      if (elapsed_ms() - healed_ms >= p_.liveness_bound_ms) break;
      sleep_ms(20);
    }
    r_.liveness_ms = elapsed_ms() - healed_ms;
    flush_records(/*last=*/true);
  }

  void judge() {
    const std::vector<std::string> unclean = driver_->stop_all();
    for (const std::string& u : unclean) {
      r_.violations.push_back(ChaosViolation{"worker_stop", "", r_.seed,
                                             "a worker did not stop cleanly on SIGTERM: " + u});
    }
    driver_->run({"PING"});
    chaos_detail::judge_sinks(*driver_, lanes_, &r_);
    if (!r_.liveness_reached) {
      for (ChaosViolation& v : r_.violations) {
        if (v.property == "sink_no_loss") {
          v.explanation += " (liveness bound " + std::to_string(p_.liveness_bound_ms) + " ms)";
        }
      }
    }
    Result<ChaosHistory> history = collect_history(*driver_);
    if (!history.ok()) {
      r_.violations.push_back(ChaosViolation{
          "history", "", r_.seed, "could not read the history: " + history.error().message});
    } else {
      r_.history = std::move(history).value();
      // After a master's SIGKILL an execution's exit record can be lost while its worker went on
      // (docs/ARCHITECTURE.md "What a failover keeps"): exclusion is not judged.
      std::vector<properties::Property> not_judged;
      if (failover_killed_) {
        not_judged = {properties::Property::exclusion, properties::Property::pm_exclusion};
      }
      chaos_detail::judge_history(p_, lanes_, not_judged, &r_);
      r_.history_sha256 = properties::history_sha256(r_.history.records);
    }
    if (!r_.violations.empty() || !r_.unexpected_exits.empty()) r_.logs = driver_->logs();
  }

  std::string params_json() const {
    nlohmann::ordered_json j;
    j["seed"] = r_.seed;
    j["duration_ms"] = p_.duration_ms;
    j["workers"] = p_.workers;
    j["keys"] = p_.keys;
    j["process_manager"] = p_.process_manager;
    j["variant"] = p_.variant.empty() ? "correct" : p_.variant;
    j["lease_ttl_ms"] = p_.lease_ttl_ms;
    j["liveness_bound_ms"] = p_.liveness_bound_ms;
    j["cluster"] = server_.cluster;
    j["wait_replicas"] = p_.wait_replicas;
    j["step_batch_max"] = p_.step_batch_max;
    nlohmann::ordered_json nemeses = nlohmann::ordered_json::array();
    for (Nemesis kind : nemeses_by_name()) {
      if (p_.nemeses[static_cast<std::size_t>(kind)]) nemeses.push_back(nemesis_name(kind));
    }
    j["nemeses"] = nemeses;
    j["redis"] = server_.redis_url.empty() ? "private" : redis::redacted_url(config_);
    nlohmann::ordered_json strikes = nlohmann::ordered_json::array();
    for (const Strike& s : plan_.strikes) {
      strikes.push_back({{"at_ms", s.at_ms},
                         {"nemesis", nemesis_name(s.kind)},
                         {"target", s.target},
                         {"duration_ms", s.duration_ms},
                         {"proxy_mode", s.proxy_mode},
                         {"proxy_delay_ms", s.proxy_delay_ms},
                         {"lane", s.lane},
                         {"mode", s.mode}});
    }
    j["strikes"] = strikes;
    j["events_planned"] = plan_.events.size();
    nlohmann::ordered_json lanes = nlohmann::ordered_json::array();
    for (const ChaosLane& lane : lanes_) {
      lanes.push_back({{"stream", lane.category + ":" + lane.key},
                       {"published", lane.ids.size()},
                       {"poison_seq", lane.poison_seq},
                       {"lost_from", lane.lost_from}});
    }
    j["lanes"] = lanes;
    return j.dump(2) + "\n";
  }

  const ChaosParams p_;
  const ChaosServerChoice server_;
  const std::string binary_;
  std::ostream& log_;
  ChaosPlan plan_;
  ChaosRunResult r_;
  std::unique_ptr<PrivateRedis> own_;
  std::unique_ptr<RedisCluster> cluster_;  // --cluster: the run's private cluster
  std::vector<DownNode> down_;             // nodes the failover nemesis killed, not back yet
  std::vector<LaggingShard> lagging_;      // replicas held back, their masters not killed yet
  bool failover_killed_ = false;           // a master was SIGKILLed this run
  std::uint64_t cluster_polled_ms_ = 0;
  std::uint64_t health_polled_ms_ = 0;
  bool health_known_ = false;
  bool healthy_ = false;
  redis::RedisConfig config_;
  std::unique_ptr<redis::BlockingRedis> control_;
  std::unique_ptr<RedisScenarioDriver> driver_;  // destroyed before the proxies and the server
  std::vector<std::string> categories_;
  std::vector<ChaosLane> lanes_;
  std::vector<Slot> slots_;
  std::vector<HistoryRecord> pending_records_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  std::size_t next_event_ = 0;
  std::uint64_t publish_attempts_ = 0;
  bool server_down_ = false;
  bool server_lost_ = false;
  std::uint64_t server_up_at_ms_ = 0;
  std::uint64_t paused_until_ms_ = 0;
};

}  // namespace

ChaosRunResult run_chaos_seed(const ChaosParams& params, const ChaosServerChoice& server,
                              const std::string& seqby_binary, std::uint64_t seed,
                              std::ostream& log) {
  ChaosRun run(params, server, seqby_binary, seed, log);
  return run.run();
}

}  // namespace seqby::scenarios
