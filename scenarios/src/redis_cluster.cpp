#include "seqby/scenarios/redis_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "seqby/broker/cluster_slot.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/runtime/free_port.h"

namespace seqby::scenarios {
namespace {

constexpr int kStartAttemptsMax = 3;
constexpr std::uint64_t kPingLimitMs = 10000;
constexpr std::uint64_t kPollMs = 50;
constexpr std::uint64_t kTermLimitMs = 5000;
constexpr std::size_t kLogTailChars = 1200;
constexpr int kProbeKeysMax = 100000;  // wait_streaming's search for a key of a master's slots

std::uint64_t now_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// The whole file ("" when it cannot be read).
std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  std::string word;
  while (in >> word) words.push_back(word);
  return words;
}

// The value of "name:value" in an INFO-style text, "" when absent.
std::string info_field(const std::string& text, const std::string& name) {
  for (const std::string& line : lines_of(text)) {
    if (line.compare(0, name.size() + 1, name + ":") == 0) return line.substr(name.size() + 1);
  }
  return "";
}

// The port of "ip:port@cport[,hostname]".
std::uint16_t port_of_node_address(const std::string& address) {
  const std::size_t colon = address.find(':');
  const std::size_t at = address.find('@');
  if (colon == std::string::npos) return 0;
  return static_cast<std::uint16_t>(std::atoi(
      address.substr(colon + 1, at == std::string::npos ? std::string::npos : at - colon - 1)
          .c_str()));
}

bool has_flag(const std::string& flags, const std::string& flag) {
  std::istringstream in(flags);
  std::string one;
  while (std::getline(in, one, ',')) {
    if (one == flag) return true;
  }
  return false;
}

}  // namespace

RedisCluster::RedisCluster() : RedisCluster(RedisClusterOptions{}) {}

RedisCluster::RedisCluster(RedisClusterOptions options) : options_(options) {
  std::string pattern = (std::filesystem::temp_directory_path() / "seqby-cluster-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    error_ = "could not make a temporary directory from " + pattern;
    return;
  }
  dir_ = pattern;
  ok_ = start();
}

RedisCluster::~RedisCluster() {
  for (Node& node : nodes_) {
    if (node.process.running()) node.process.terminate(kTermLimitMs);
  }
  nodes_.clear();
  if (!dir_.empty() && std::getenv("SEQBY_KEEP_CLUSTER_DIR") == nullptr) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

redis::RedisConfig RedisCluster::config_of(std::uint16_t port) {
  redis::RedisConfig config;
  config.host = "127.0.0.1";
  config.port = port;
  config.connect_timeout_ms = 500;
  config.command_timeout_ms = 3000;
  config.reconnect_backoff_min_ms = 10;
  config.reconnect_backoff_max_ms = 200;
  return config;
}

Result<redis::Reply> RedisCluster::run(std::uint16_t port, const redis::Command& command) {
  redis::BlockingRedis redis(config_of(port));
  return redis.execute(command);
}

std::vector<std::uint16_t> RedisCluster::ports() const {
  std::vector<std::uint16_t> out;
  for (const Node& node : nodes_) out.push_back(node.port);
  return out;
}

const RedisCluster::Node* RedisCluster::node(std::uint16_t port) const {
  for (const Node& node : nodes_) {
    if (node.port == port) return &node;
  }
  return nullptr;
}

std::string RedisCluster::id_of(std::uint16_t port) const {
  const Node* found = node(port);
  return found == nullptr ? "" : found->id;
}

bool RedisCluster::start() {
  const std::size_t count = options_.masters * (1 + options_.replicas_per_master);
  const std::uint64_t began_ms = now_ms();
  for (int attempt = 0; attempt < kStartAttemptsMax; ++attempt) {
    for (Node& node : nodes_) {
      if (node.process.running()) node.process.terminate(kTermLimitMs);
    }
    nodes_.clear();
    nodes_.resize(count);
    std::set<std::uint16_t> taken;
    bool picked = true;
    for (Node& node : nodes_) {
      for (std::uint16_t* port : {&node.port, &node.bus_port}) {
        std::uint16_t candidate = 0;
        for (int tries = 0; tries < 20 && (candidate == 0 || taken.count(candidate)); ++tries) {
          candidate = redis::free_loopback_port();
        }
        if (candidate == 0 || taken.count(candidate)) picked = false;
        taken.insert(candidate);
        *port = candidate;
      }
    }
    if (!picked) {
      error_ = "no free loopback ports for " + std::to_string(count) + " cluster nodes";
      continue;
    }
    bool spawned = true;
    for (Node& node : nodes_) spawned = spawned && spawn_node(node);
    if (!spawned) continue;
    bool answering = true;
    for (Node& node : nodes_) {
      answering = wait_answering(node, "node 127.0.0.1:" + std::to_string(node.port));
      if (!answering) break;
    }
    if (!answering) continue;  // most likely a port was taken meanwhile: pick others
    timings_.spawn_ms = now_ms() - began_ms;
    const std::uint64_t created_from_ms = now_ms();
    if (!create()) return false;
    timings_.create_ms = now_ms() - created_from_ms;
    for (Node& node : nodes_) {
      auto id = run(node.port, {"CLUSTER", "MYID"});
      if (!id.ok() || id.value().kind != redis::Reply::Kind::bulk) {
        error_ = "CLUSTER MYID on 127.0.0.1:" + std::to_string(node.port) + " failed";
        return false;
      }
      node.id = id.value().str;
    }
    const std::uint64_t ok_from_ms = now_ms();
    const std::uint64_t spent_ms = ok_from_ms - began_ms;
    const std::uint64_t left_ms =
        spent_ms < options_.start_limit_ms ? options_.start_limit_ms - spent_ms : 0;
    // Without replicas (replicas_per_master 0) there is no stream to wait for.
    if (!wait_healthy(left_ms)) return false;
    if (options_.replicas_per_master > 0 && !wait_streaming(left_ms)) return false;
    timings_.ok_ms = now_ms() - ok_from_ms;
    return true;
  }
  return false;
}

bool RedisCluster::spawn_node(Node& node) {
  const char* program = std::getenv("SEQBY_REDIS_SERVER");
  if (program == nullptr || program[0] == '\0') program = "redis-server";
  const std::string port = std::to_string(node.port);
  const std::vector<std::string> args = {
      program, "--bind", "127.0.0.1", "--port", port, "--cluster-enabled", "yes",
      "--cluster-config-file", dir_ + "/nodes-" + port + ".conf", "--cluster-port",
      std::to_string(node.bus_port), "--cluster-node-timeout",
      std::to_string(options_.node_timeout_ms), "--save", "", "--appendonly", "no",
      // A replica's first sync starts at once, not 5 s later.
      "--repl-diskless-sync-delay", "0", "--daemonize", "no", "--dir", dir_, "--logfile",
      dir_ + "/redis-" + port + ".log"};
  redis::SpawnOptions spawn;  // dies with the thread that started it
  spawn.in = redis::Redirect::null();
  spawn.out = redis::Redirect::null();
  spawn.err = redis::Redirect::file(dir_ + "/redis-" + port + ".err");
  spawn.search_path = true;
  Result<redis::Subprocess> process = redis::Subprocess::spawn(args, spawn);
  if (!process.ok()) {
    error_ = "could not start redis-server for 127.0.0.1:" + port + ": " + process.error().message;
    return false;
  }
  node.process = std::move(process).value();
  return true;
}

bool RedisCluster::create() {
  std::vector<std::string> args = {"redis-cli", "--cluster", "create"};
  for (const Node& node : nodes_) args.push_back("127.0.0.1:" + std::to_string(node.port));
  args.insert(args.end(), {"--cluster-replicas", std::to_string(options_.replicas_per_master),
                           "--cluster-yes"});
  const std::string log = dir_ + "/create.log";
  redis::SpawnOptions spawn;
  spawn.in = redis::Redirect::null();
  spawn.out = redis::Redirect::file(log);
  spawn.err = redis::Redirect::file(dir_ + "/create.err");
  spawn.search_path = true;
  Result<redis::Subprocess> cli = redis::Subprocess::spawn(args, spawn);
  if (!cli.ok()) {
    error_ = "could not start redis-cli --cluster create: " + cli.error().message;
    return false;
  }
  const int status = cli.value().wait(options_.start_limit_ms);
  if (status != 0) {
    std::string out = read_file(log) + read_file(dir_ + "/create.err");
    if (out.size() > kLogTailChars) out = out.substr(out.size() - kLogTailChars);
    error_ = "redis-cli --cluster create exited with status " + std::to_string(status) +
             " (within " + std::to_string(options_.start_limit_ms) + " ms): " + out;
    return false;
  }
  return true;
}

std::optional<std::uint16_t> RedisCluster::master_of_slot(std::uint16_t slot,
                                                          std::uint16_t asked_port) {
  for (const Node& node : nodes_) {
    if (node.killed || (asked_port != 0 && node.port != asked_port)) continue;
    auto reply = run(node.port, {"CLUSTER", "SLOTS"});
    if (!reply.ok() || reply.value().kind != redis::Reply::Kind::array) continue;
    for (const redis::Reply& range : reply.value().elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      if (range.elements[0].integer <= slot && slot <= range.elements[1].integer) {
        return static_cast<std::uint16_t>(range.elements[2].elements[1].integer);
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::vector<std::string>> RedisCluster::cluster_nodes() {
  for (const Node& node : nodes_) {
    if (node.killed) continue;
    auto reply = run(node.port, {"CLUSTER", "NODES"});
    if (!reply.ok() || reply.value().kind != redis::Reply::Kind::bulk) continue;
    std::vector<std::vector<std::string>> out;
    for (const std::string& line : lines_of(reply.value().str)) out.push_back(words_of(line));
    return out;
  }
  return {};
}

std::vector<std::uint16_t> RedisCluster::masters() {
  std::vector<std::uint16_t> out;
  for (const std::vector<std::string>& words : cluster_nodes()) {
    // id address flags master ping pong epoch link-state slot...
    if (words.size() < 9 || !has_flag(words[2], "master") || has_flag(words[2], "fail")) continue;
    out.push_back(port_of_node_address(words[1]));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::uint16_t> RedisCluster::replicas_of(std::uint16_t master) {
  const std::string master_id = id_of(master);
  std::vector<std::uint16_t> out;
  for (const std::vector<std::string>& words : cluster_nodes()) {
    if (words.size() < 8 || !has_flag(words[2], "slave") || has_flag(words[2], "fail")) continue;
    if (words[3] == master_id) out.push_back(port_of_node_address(words[1]));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void RedisCluster::kill(std::uint16_t port) {
  for (Node& node : nodes_) {
    if (node.port != port) continue;
    node.process.kill();  // SIGKILL and reap, by pid
    node.killed = true;
  }
}

bool RedisCluster::kill_replicated(std::uint16_t master, std::uint64_t limit_ms) {
  if (!pause_replicated(master, limit_ms)) return false;
  kill(master);
  return true;
}

bool RedisCluster::stop_replicated(std::uint16_t master, std::uint64_t limit_ms) {
  if (!pause_replicated(master, limit_ms)) return false;
  if (signal(master, SIGSTOP)) return true;
  error_ = "SIGSTOP of 127.0.0.1:" + std::to_string(master) + " failed: not running";
  return false;
}

bool RedisCluster::pause_replicated(std::uint16_t master, std::uint64_t limit_ms) {
  Result<redis::Reply> paused = run(master, {"CLIENT", "PAUSE", std::to_string(limit_ms), "WRITE"});
  if (!paused.ok() || paused.value().is_error()) {
    error_ = "CLIENT PAUSE WRITE on 127.0.0.1:" + std::to_string(master) + " failed: " +
             (paused.ok() ? redis::to_string(paused.value()) : paused.error().message);
    return false;
  }
  if (!wait_replicated(master, limit_ms)) {
    // Refused or not, the pause ends by itself after limit_ms; error() says why it failed.
    if (!run(master, {"CLIENT", "UNPAUSE"}).ok()) error_ += "; CLIENT UNPAUSE failed too";
    return false;
  }
  return true;
}

bool RedisCluster::wait_answering(Node& node, const std::string& name) {
  const std::uint16_t port = node.port;
  Node* self = &node;
  bool answering = wait_until(
      [port, self] {
        if (self->process.try_reap()) return true;  // it exited: no use waiting
        auto reply = run(port, {"PING"});
        return reply.ok() && reply.value() == redis::Reply::status("PONG");
      },
      kPingLimitMs, name + " to answer PING");
  if (answering && !node.process.running()) {
    error_ = name + " exited at start";
    answering = false;
  }
  if (!answering) {
    error_ += "; its log ends: " + log_tail(port) +
              read_file(dir_ + "/redis-" + std::to_string(port) + ".err");
  }
  return answering;
}

bool RedisCluster::restart(std::uint16_t port) {
  for (Node& node : nodes_) {
    if (node.port != port) continue;
    if (!node.killed) {
      error_ = "127.0.0.1:" + std::to_string(port) + " was not killed";
      return false;
    }
    if (!spawn_node(node)) return false;
    node.killed = false;
    return wait_answering(node, "restarted node 127.0.0.1:" + std::to_string(port));
  }
  error_ = "no node 127.0.0.1:" + std::to_string(port);
  return false;
}

std::vector<std::uint16_t> RedisCluster::live_ports() const {
  std::vector<std::uint16_t> out;
  for (const Node& node : nodes_) {
    if (!node.killed) out.push_back(node.port);
  }
  return out;
}

bool RedisCluster::abort_slot_move(std::uint16_t slot, std::uint16_t from, std::uint16_t to) {
  const std::string s = std::to_string(slot);
  bool stable = true;
  for (std::uint16_t port : {from, to}) {
    Result<redis::Reply> set = run(port, {"CLUSTER", "SETSLOT", s, "STABLE"});
    if (!set.ok() || set.value() != redis::Reply::status("OK")) {
      error_ = "CLUSTER SETSLOT " + s + " STABLE on 127.0.0.1:" + std::to_string(port) + ": " +
               (set.ok() ? redis::to_string(set.value()) : set.error().message);
      stable = false;
    }
  }
  return stable;
}

bool RedisCluster::begin_slot_move(std::uint16_t slot, std::uint16_t from, std::uint16_t to) {
  const std::string s = std::to_string(slot);
  for (const auto& [port, state, peer] :
       {std::tuple{to, "IMPORTING", from}, std::tuple{from, "MIGRATING", to}}) {
    Result<redis::Reply> set = run(port, {"CLUSTER", "SETSLOT", s, state, id_of(peer)});
    if (!set.ok() || set.value() != redis::Reply::status("OK")) {
      error_ = "CLUSTER SETSLOT " + s + " " + state + " on 127.0.0.1:" + std::to_string(port) +
               ": " + (set.ok() ? redis::to_string(set.value()) : set.error().message);
      return false;
    }
  }
  return true;
}

bool RedisCluster::migrate_keys(std::uint16_t from, std::uint16_t to,
                                const std::vector<std::string>& keys) {
  if (keys.empty()) return true;
  redis::Command command{"MIGRATE", "127.0.0.1", std::to_string(to), "", "0", "5000", "KEYS"};
  command.insert(command.end(), keys.begin(), keys.end());
  Result<redis::Reply> migrated = run(from, command);
  // NOKEY: every key asked for was already gone (moved, or deleted meanwhile).
  if (migrated.ok() && (migrated.value() == redis::Reply::status("OK") ||
                        migrated.value() == redis::Reply::status("NOKEY"))) {
    return true;
  }
  error_ = "MIGRATE of " + std::to_string(keys.size()) +
           " keys from 127.0.0.1:" + std::to_string(from) + ": " +
           (migrated.ok() ? redis::to_string(migrated.value()) : migrated.error().message);
  return false;
}

bool RedisCluster::migrate_slot_keys(std::uint16_t slot, std::uint16_t from, std::uint16_t to,
                                     std::size_t batch) {
  const std::string s = std::to_string(slot);
  for (;;) {
    Result<redis::Reply> left =
        run(from, {"CLUSTER", "GETKEYSINSLOT", s, std::to_string(std::max<std::size_t>(batch, 1))});
    if (!left.ok() || left.value().kind != redis::Reply::Kind::array) {
      error_ = "CLUSTER GETKEYSINSLOT " + s + " on 127.0.0.1:" + std::to_string(from) + " failed";
      return false;
    }
    if (left.value().elements.empty()) break;
    std::vector<std::string> keys;
    for (const redis::Reply& key : left.value().elements) keys.push_back(key.str);
    if (!migrate_keys(from, to, keys)) return false;
  }
  return true;
}

bool RedisCluster::finish_slot_move(std::uint16_t slot, std::uint16_t from, std::uint16_t to,
                                    std::size_t batch) {
  if (!migrate_slot_keys(slot, from, to, batch)) return false;
  const std::string s = std::to_string(slot);
  // The new owner first, then the old one, then the others (as redis-cli does).
  std::vector<std::uint16_t> order{to, from};
  for (std::uint16_t master : masters()) {
    if (master != to && master != from) order.push_back(master);
  }
  for (std::uint16_t master : order) {
    Result<redis::Reply> set = run(master, {"CLUSTER", "SETSLOT", s, "NODE", id_of(to)});
    if (!set.ok() || set.value() != redis::Reply::status("OK")) {
      error_ = "CLUSTER SETSLOT " + s + " NODE on 127.0.0.1:" + std::to_string(master) + ": " +
               (set.ok() ? redis::to_string(set.value()) : set.error().message);
      return false;
    }
  }
  return true;
}

bool RedisCluster::signal(std::uint16_t port, int signal) {
  for (Node& node : nodes_) {
    if (node.port == port && !node.killed) return node.process.send(signal);
  }
  return false;
}

std::string RedisCluster::why_unhealthy() {
  std::string slots_seen;
  std::uint16_t slots_seen_port = 0;
  std::string roles_seen;
  std::uint16_t roles_seen_port = 0;
  for (const Node& node : nodes_) {
    if (node.killed) continue;
    const std::string where = "127.0.0.1:" + std::to_string(node.port);
    if (!node.process.running()) return where + " is not running";
    auto info = run(node.port, {"CLUSTER", "INFO"});
    if (!info.ok()) return where + " does not answer CLUSTER INFO: " + info.error().message;
    const std::string& text = info.value().str;
    if (info_field(text, "cluster_state") != "ok") {
      return where + " has cluster_state:" + info_field(text, "cluster_state");
    }
    if (info_field(text, "cluster_slots_ok") != "16384") {
      return where + " has cluster_slots_ok:" + info_field(text, "cluster_slots_ok");
    }
    // Every node must see the same owners (a new configuration spreads by gossip).
    auto slots = run(node.port, {"CLUSTER", "SLOTS"});
    if (!slots.ok() || slots.value().kind != redis::Reply::Kind::array) {
      return where + " does not answer CLUSTER SLOTS";
    }
    std::map<std::int64_t, std::string> ranges;
    for (const redis::Reply& range : slots.value().elements) {
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      ranges[range.elements[0].integer] = std::to_string(range.elements[1].integer) + "@" +
                                          std::to_string(range.elements[2].elements[1].integer);
    }
    std::string seen;
    for (const auto& [start, rest] : ranges) seen += std::to_string(start) + "-" + rest + " ";
    if (slots_seen_port == 0) {
      slots_seen = seen;
      slots_seen_port = node.port;
    } else if (seen != slots_seen) {
      return where + " sees slots " + seen + "but 127.0.0.1:" + std::to_string(slots_seen_port) +
             " sees " + slots_seen;
    }
    // ... and the same roles: who is a master, who replicates whom (failed nodes left out).
    auto nodes = run(node.port, {"CLUSTER", "NODES"});
    if (!nodes.ok() || nodes.value().kind != redis::Reply::Kind::bulk) {
      return where + " does not answer CLUSTER NODES";
    }
    std::set<std::string> roles;
    for (const std::string& line : lines_of(nodes.value().str)) {
      const std::vector<std::string> words = words_of(line);
      if (words.size() < 8 || has_flag(words[2], "fail") || has_flag(words[2], "fail?")) continue;
      const bool master = has_flag(words[2], "master");
      roles.insert(words[0] + (master ? " master" : " replica of " + words[3]));
    }
    std::string roles_text;
    for (const std::string& role : roles) roles_text += role + "; ";
    if (roles_seen_port == 0) {
      roles_seen = roles_text;
      roles_seen_port = node.port;
    } else if (roles_text != roles_seen) {
      return where + " sees roles " + roles_text +
             "but 127.0.0.1:" + std::to_string(roles_seen_port) + " sees " + roles_seen;
    }
    auto replication = run(node.port, {"INFO", "replication"});
    if (!replication.ok()) return where + " does not answer INFO replication";
    const std::string& rtext = replication.value().str;
    if (info_field(rtext, "role") == "slave" && info_field(rtext, "master_link_status") != "up") {
      return where +
             " (a replica) has master_link_status:" + info_field(rtext, "master_link_status");
    }
  }
  return "";
}

bool RedisCluster::wait_healthy(std::uint64_t limit_ms) {
  std::string why;
  const bool healthy = wait_until(
      [this, &why] {
        why = why_unhealthy();
        return why.empty();
      },
      limit_ms, "a healthy cluster");
  if (!healthy) error_ += ": " + why;
  return healthy;
}

bool RedisCluster::wait_replicated(std::uint16_t master, std::uint64_t limit_ms) {
  auto offset_of = [](std::uint16_t port, const std::string& field) -> long long {
    Result<redis::Reply> info = run(port, {"INFO", "replication"});
    if (!info.ok() || info.value().is_error()) return -1;
    const std::string value = info_field(info.value().str, field);
    return value.empty() ? -1 : std::atoll(value.c_str());
  };
  const long long written = offset_of(master, "master_repl_offset");
  const std::vector<std::uint16_t> replicas = replicas_of(master);
  if (written < 0 || replicas.empty()) {
    error_ = "127.0.0.1:" + std::to_string(master) +
             (written < 0 ? " does not say its master_repl_offset" : " has no replica");
    return false;
  }
  return wait_until(
      [&] {
        for (std::uint16_t replica : replicas) {
          if (offset_of(replica, "slave_repl_offset") < written) return false;
        }
        return true;
      },
      limit_ms,
      "the replicas of 127.0.0.1:" + std::to_string(master) + " to reach offset " +
          std::to_string(written));
}

bool RedisCluster::wait_streaming(std::uint64_t limit_ms) {
  const std::uint64_t until_ms = now_ms() + limit_ms;
  for (std::uint16_t master : masters()) {
    std::string probe;  // a key of one of `master`'s slots
    for (int i = 0; probe.empty() && i < kProbeKeysMax; ++i) {
      const std::string key = "seqby:probe:" + std::to_string(i);
      if (master_of_slot(redis::key_slot(key), master) == master) probe = key;
    }
    const std::string where = "127.0.0.1:" + std::to_string(master);
    if (probe.empty()) {
      error_ = where + " serves none of the slots of " + std::to_string(kProbeKeysMax) + " keys";
      return false;
    }
    for (const redis::Command& write : {redis::Command{"SET", probe, "1"}, {"DEL", probe}}) {
      Result<redis::Reply> written = run(master, write);
      if (!written.ok() || written.value().is_error()) {
        error_ = write.front() + " " + probe + " on " + where + " failed: " +
                 (written.ok() ? redis::to_string(written.value()) : written.error().message);
        return false;
      }
    }
    const std::uint64_t now = now_ms();
    if (!wait_replicated(master, until_ms > now ? until_ms - now : 0)) return false;
  }
  return true;
}

bool RedisCluster::wait_until(const std::function<bool()>& done, std::uint64_t limit_ms,
                              const std::string& what) {
  const std::uint64_t until_ms = now_ms() + limit_ms;
  for (;;) {
    if (done()) return true;
    if (now_ms() >= until_ms) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
  error_ = "waited " + std::to_string(limit_ms) + " ms for " + what;
  return false;
}

std::string RedisCluster::log_tail(std::uint16_t port) const {
  std::string log = read_file(dir_ + "/redis-" + std::to_string(port) + ".log");
  if (log.size() > kLogTailChars) log = log.substr(log.size() - kLogTailChars);
  return log;
}

}  // namespace seqby::scenarios
