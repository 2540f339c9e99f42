// bench_failover_latency: how long a partition stays unserved after its owner is SIGKILLed, against
// the lease TTL (DESIGN.md section 9; target: at most TTL + one heartbeat + one discovery
// interval). Each round starts two real `seqby worker` processes (the binary next to this one),
// publishes to a few keys continuously, waits until the two share the keys stably, SIGKILLs the
// owner of the first key and measures from the kill to (a) the survivor's `acquire` of that key and
// (b) the survivor's first accepted commit on it, both read from the round's history stream in
// Redis (the workers stamp records with the machine's monotonic clock, the clock this program
// reads at the kill). Polling the lease key and the sink hash gives a cross-check. Round i of R
// kills (i-1)/R of a heartbeat/discovery period after the keys settled, so the kills sample the
// phase of the workers' ticks. Prints a table; asserts nothing.
//
//   scripts/with-redis build/bench_failover_latency [--ttls 1000,2000,3000] [--rounds 5]
//       [--keys 4] [--discovery-interval-ms 1000] [--heartbeat-divisor 3]
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/core/naming.h"
#include "seqby/hiredis/redis_history.h"
#include "seqby/runtime/subprocess.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_failover_latency";
constexpr const char* kUsage =
    "usage: scripts/with-redis build/bench_failover_latency [--ttls 1000,2000,3000] [--rounds 5]\n"
    "           [--keys 4] [--discovery-interval-ms 1000] [--heartbeat-divisor 3]\n";
constexpr const char* kGroup = "bench";
constexpr std::uint64_t kPublishEveryMs = 20;  // one event per key this often
constexpr std::uint64_t kPollEveryUs = 2000;   // lease and sink polling
constexpr std::uint64_t kStableForMs = 1000;   // holders unchanged this long before the kill
constexpr std::uint64_t kStableWaitMaxMs = 30000;

struct Options {
  std::vector<std::uint64_t> ttls_ms{1000, 2000, 3000};
  std::uint32_t rounds = 5;
  std::uint32_t keys = 4;
  std::uint64_t discovery_interval_ms = 1000;
  std::uint64_t heartbeat_divisor = 3;  // heartbeat_interval_ms = ttl / divisor
};

// One `seqby worker` child, its stderr to /dev/null; SIGKILLed when this program dies or the
// object goes. An empty Subprocess (never running) when fork failed.
Subprocess start_worker(const std::vector<std::string>& args) {
  SpawnOptions options;
  options.err = Redirect::null();
  Result<Subprocess> process = Subprocess::spawn(args, options);
  return process.ok() ? std::move(process).value() : Subprocess();
}

struct Round {
  bool measured = false;
  std::string failure;  // why the round has no figure
  std::string key;
  std::int64_t acquire_ms = -1;      // kill -> survivor's acquire record of the key
  std::int64_t commit_ms = -1;       // kill -> survivor's first accepted commit record on it
  std::int64_t all_keys_ms = -1;     // kill -> the survivor holds every key the victim held
  std::int64_t poll_lease_ms = -1;   // kill -> the lease key names the survivor (polled)
  std::int64_t poll_commit_ms = -1;  // kill -> the sink's last_token is the survivor's (polled)
  std::string load;
};

std::string get_string(BlockingRedis& redis, const std::string& key) {
  Command get{"GET", key};
  Result<Reply> reply = redis.execute(get);
  if (!reply.ok() || reply.value().kind != Reply::Kind::bulk) return "";
  return reply.value().str;
}

std::string owner_of(const std::string& token) { return token.substr(0, token.find(':')); }

class Publisher {
 public:
  Publisher(BlockingRedis& redis, std::string category, std::vector<std::string> keys)
      : redis_(redis), category_(std::move(category)), keys_(std::move(keys)) {
    for (const auto& key : keys_) {
      Command add{"SADD", partition_index_name(category_), key};
      (void)redis_.execute(add);
      seq_[key] = 0;
    }
  }
  // Publishes one event per key when kPublishEveryMs has passed since the last time.
  void tick() {
    const std::uint64_t now_ms = steady_now_ms();
    if (now_ms - last_ms_ < kPublishEveryMs) return;
    last_ms_ = now_ms;
    for (const auto& key : keys_) {
      const std::string data =
          "{\"id\":\"" + key + "\",\"seq\":" + std::to_string(++seq_[key]) + "}";
      Command add{"XADD", partition_stream_name(category_, key), "*", "type", "Ticked", "data",
                  data};
      (void)redis_.execute(add);
    }
  }

 private:
  BlockingRedis& redis_;
  std::string category_;
  std::vector<std::string> keys_;
  std::map<std::string, std::int64_t> seq_;
  std::uint64_t last_ms_ = 0;
};

// `kill_offset_ms`: how long after the keys settled the owner is killed. The workers' heartbeat
// and discovery ticks are in phase with the moment the keys settle, so rounds spread their kills
// over one period instead of all striking just after a tick.
Round run_round(const RedisConfig& config, const Options& o, std::uint64_t ttl_ms,
                const std::string& category, std::uint64_t kill_offset_ms) {
  Round out;
  const std::uint64_t heartbeat_ms = std::max<std::uint64_t>(1, ttl_ms / o.heartbeat_divisor);
  const std::string history_stream = "seqby:history:" + category;
  const std::string binary = seqby_next_to_this_program();
  const std::string url = "redis://" + config.host + ":" + std::to_string(config.port) + "/" +
                          std::to_string(config.db);
  std::vector<std::string> keys;
  for (std::uint32_t i = 0; i < o.keys; ++i) keys.push_back("k" + std::to_string(i));

  BlockingRedis redis(config);
  Publisher publisher(redis, category, keys);
  std::map<std::string, Subprocess> workers;  // by owner id
  for (const char* name : {"a", "b"}) {
    const std::string owner = category + name;
    const std::vector<std::string> args{binary,
                                        "worker",
                                        "--redis",
                                        url,
                                        "--category",
                                        category,
                                        "--group",
                                        kGroup,
                                        "--sequential-by",
                                        "id",
                                        "--owner-id",
                                        owner,
                                        "--lease-ttl-ms",
                                        std::to_string(ttl_ms),
                                        "--heartbeat-interval-ms",
                                        std::to_string(heartbeat_ms),
                                        "--discovery-interval-ms",
                                        std::to_string(o.discovery_interval_ms),
                                        "--history-stream",
                                        history_stream};
    workers[owner] = start_worker(args);
  }

  // Wait until both instances hold keys and nothing has changed hands for kStableForMs.
  std::map<std::string, std::string> holders;  // key -> token
  const std::uint64_t wait_start_ms = steady_now_ms();
  std::uint64_t stable_since_ms = wait_start_ms;
  bool stable = false;
  while (steady_now_ms() - wait_start_ms < kStableWaitMaxMs) {
    publisher.tick();
    std::map<std::string, std::string> now;
    std::set<std::string> owners;
    for (const auto& key : keys) {
      now[key] = get_string(redis, lease_key_name(category, key));
      if (!now[key].empty()) owners.insert(owner_of(now[key]));
    }
    if (now != holders) {
      holders = now;
      stable_since_ms = steady_now_ms();
    }
    const bool all_held = std::none_of(keys.begin(), keys.end(),
                                       [&](const std::string& k) { return holders[k].empty(); });
    if (all_held && owners.size() == 2 && steady_now_ms() - stable_since_ms >= kStableForMs) {
      stable = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!stable) {
    out.failure = "the two workers never shared the keys stably (is the seqby binary built?)";
    return out;
  }

  out.key = keys[0];
  const std::string victim_token = holders[out.key];
  const std::string victim = owner_of(victim_token);
  std::string survivor;
  for (const auto& [owner, process] : workers) {
    if (owner != victim) survivor = owner;
  }
  std::vector<std::string> victim_keys;
  for (const auto& [key, token] : holders) {
    if (owner_of(token) == victim) victim_keys.push_back(key);
  }
  const std::string lease_key = lease_key_name(category, out.key);
  const std::string sink_key = sink_key_name(PartitionRef{category, out.key}, kGroup);

  const std::uint64_t settled_ms = steady_now_ms();
  while (steady_now_ms() - settled_ms < kill_offset_ms) {
    publisher.tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  out.load = load_average();
  const std::uint64_t kill_us = steady_now_us();
  workers[victim].kill();

  const std::uint64_t wait_max_us = (5 * ttl_ms + o.discovery_interval_ms + 10000) * 1000;
  while (steady_now_us() - kill_us < wait_max_us) {
    publisher.tick();
    const std::uint64_t now_us = steady_now_us();
    if (out.poll_lease_ms < 0) {
      const std::string token = get_string(redis, lease_key);
      if (!token.empty() && owner_of(token) == survivor) {
        out.poll_lease_ms = static_cast<std::int64_t>((now_us - kill_us) / 1000);
      }
    }
    if (out.poll_commit_ms < 0) {
      Command hget{"HGET", sink_key, "last_token"};
      Result<Reply> reply = redis.execute(hget);
      if (reply.ok() && reply.value().kind == Reply::Kind::bulk &&
          owner_of(reply.value().str) == survivor) {
        out.poll_commit_ms = static_cast<std::int64_t>((now_us - kill_us) / 1000);
      }
    }
    if (out.poll_lease_ms >= 0 && out.poll_commit_ms >= 0) break;
    std::this_thread::sleep_for(std::chrono::microseconds(kPollEveryUs));
  }
  // Give the survivor's history appends a moment to land, then stop it gracefully.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  workers[survivor].terminate(15000);  // SIGTERM, SIGKILL at the bound

  Command range{"XRANGE", history_stream, "-", "+"};
  Result<Reply> reply = redis.execute(range);
  if (!reply.ok()) {
    out.failure = "XRANGE " + history_stream + ": " + reply.error().message;
    return out;
  }
  Result<std::vector<HistoryRecord>> history = history_from_xrange(reply.value());
  if (!history.ok()) {
    out.failure = "history: " + history.error().message;
    return out;
  }
  const std::uint64_t kill_ms = kill_us / 1000;
  std::set<std::string> taken;
  for (const HistoryRecord& r : history.value()) {
    if (r.node != survivor || r.time_ms < kill_ms) continue;
    const auto since_kill = static_cast<std::int64_t>(r.time_ms - kill_ms);
    if (r.op == HistoryOp::acquire) {
      if (r.key == out.key && out.acquire_ms < 0) out.acquire_ms = since_kill;
      const bool victims =
          std::find(victim_keys.begin(), victim_keys.end(), r.key) != victim_keys.end();
      if (victims && taken.insert(r.key).second && taken.size() == victim_keys.size()) {
        out.all_keys_ms = since_kill;
      }
    }
    if (r.op == HistoryOp::commit && r.key == out.key && out.commit_ms < 0) {
      out.commit_ms = since_kill;
    }
  }
  out.measured = out.acquire_ms >= 0 && out.commit_ms >= 0;
  if (!out.measured) out.failure = "no acquire/commit by the survivor in the history";
  return out;
}

std::int64_t median(std::vector<std::int64_t> values) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::int64_t max_of(const std::vector<std::int64_t>& values) {
  return values.empty() ? -1 : *std::max_element(values.begin(), values.end());
}

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", kProgram, flag.c_str());
      return false;
    }
    const std::string text = argv[++i];
    std::uint64_t value = 0;
    if (flag == "--ttls") {
      const bool listed = parse_u64_list(text, &o->ttls_ms);
      if (!listed || std::any_of(o->ttls_ms.begin(), o->ttls_ms.end(),
                                 [](std::uint64_t ttl) { return ttl < 2; })) {
        std::fprintf(stderr, "%s: --ttls: '%s' is not a list of ttls in ms\n", kProgram,
                     text.c_str());
        return false;
      }
      continue;
    }
    if (!parse_u64(text.c_str(), &value) || value == 0) {
      std::fprintf(stderr, "%s: %s needs a positive number\n", kProgram, flag.c_str());
      return false;
    }
    if (flag == "--rounds") {
      o->rounds = static_cast<std::uint32_t>(value);
    } else if (flag == "--keys" && value >= 2) {
      o->keys = static_cast<std::uint32_t>(value);
    } else if (flag == "--discovery-interval-ms") {
      o->discovery_interval_ms = value;
    } else if (flag == "--heartbeat-divisor" && value >= 2) {
      o->heartbeat_divisor = value;
    } else {
      std::fprintf(stderr, "%s: unknown option or bad value: %s %s\n", kProgram, flag.c_str(),
                   text.c_str());
      return false;
    }
  }
  return true;
}

int run(int argc, char** argv) {
  Options o;
  if (const std::optional<int> stop = read_command_line(argc, argv, kUsage, &o, parse_options)) {
    return *stop;
  }
  std::optional<RedisConfig> config = redis_config_from_env(kProgram);
  if (!config) return kExitNoServer;
  const std::string binary = seqby_next_to_this_program();
  if (::access(binary.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "%s: needs the seqby binary next to it (%s): build the target seqby\n",
                 kProgram, binary.c_str());
    return 2;
  }
  if (!config->password.empty() || !config->user.empty()) {
    std::fprintf(stderr, "%s: a server with AUTH is not supported here\n", kProgram);
    return 2;
  }

  std::printf(
      "# %s: 2 `seqby worker` processes, %u keys, one event per key every %llu ms; "
      "SIGKILL of the owner of k0\n",
      kProgram, o.keys, static_cast<unsigned long long>(kPublishEveryMs));
  std::printf(
      "# heartbeat_interval_ms = ttl/%llu, discovery_interval_ms = %llu; bound = ttl + "
      "heartbeat + discovery\n",
      static_cast<unsigned long long>(o.heartbeat_divisor),
      static_cast<unsigned long long>(o.discovery_interval_ms));
  std::printf(
      "# acquire/commit: from the history stream (monotonic clock); poll: lease key and "
      "sink polled every %llu ms; all: every key of the victim taken\n",
      static_cast<unsigned long long>(kPollEveryUs / 1000));
  std::printf(
      "# offset_ms: the kill comes this long after the keys settled (spread over one "
      "heartbeat/discovery period)\n");
  std::printf("%7s %5s %8s %9s %11s %10s %8s %10s %12s  %s\n", "ttl_ms", "round", "bound_ms",
              "offset_ms", "acquire_ms", "commit_ms", "all_ms", "poll_lease", "poll_commit",
              "load avg");
  BlockingRedis admin(*config);
  const std::string run_prefix = "fobench" + std::to_string(::getpid());

  struct Summary {
    std::uint64_t ttl_ms, bound_ms;
    std::vector<std::int64_t> acquire, commit;
    std::uint32_t failed = 0;
  };
  std::vector<Summary> summaries;
  for (const std::uint64_t ttl_ms : o.ttls_ms) {
    const std::uint64_t heartbeat_ms = std::max<std::uint64_t>(1, ttl_ms / o.heartbeat_divisor);
    Summary summary{ttl_ms, ttl_ms + heartbeat_ms + o.discovery_interval_ms, {}, {}};
    for (std::uint32_t round = 1; round <= o.rounds; ++round) {
      const std::string category =
          run_prefix + "t" + std::to_string(ttl_ms) + "n" + std::to_string(round);
      const std::uint64_t period_ms = std::max(heartbeat_ms, o.discovery_interval_ms);
      const std::uint64_t offset_ms = (round - 1) * period_ms / o.rounds;
      const Round r = run_round(*config, o, ttl_ms, category, offset_ms);
      if (!r.measured) {
        ++summary.failed;
        std::printf("%7llu %5u %8llu  no figure: %s\n", static_cast<unsigned long long>(ttl_ms),
                    round, static_cast<unsigned long long>(summary.bound_ms), r.failure.c_str());
      } else {
        summary.acquire.push_back(r.acquire_ms);
        summary.commit.push_back(r.commit_ms);
        std::printf("%7llu %5u %8llu %9llu %11lld %10lld %8lld %10lld %12lld  %s\n",
                    static_cast<unsigned long long>(ttl_ms), round,
                    static_cast<unsigned long long>(summary.bound_ms),
                    static_cast<unsigned long long>(offset_ms),
                    static_cast<long long>(r.acquire_ms), static_cast<long long>(r.commit_ms),
                    static_cast<long long>(r.all_keys_ms), static_cast<long long>(r.poll_lease_ms),
                    static_cast<long long>(r.poll_commit_ms), r.load.c_str());
      }
      std::fflush(stdout);
      (void)unlink_matching(admin, category + "*");
      Command del{"UNLINK", "seqby:history:" + category};
      (void)admin.execute(del);
    }
    summaries.push_back(std::move(summary));
  }

  std::printf("\n%7s %8s %15s %15s %18s %18s %7s\n", "ttl_ms", "bound_ms", "acquire median",
              "acquire max", "first commit med", "first commit max", "failed");
  for (const Summary& s : summaries) {
    const auto ratio = [&](std::int64_t v) { return v < 0 ? 0.0 : double(v) / s.bound_ms; };
    std::printf("%7llu %8llu %8lld (%.2fx) %8lld (%.2fx) %11lld (%.2fx) %11lld (%.2fx) %7u\n",
                static_cast<unsigned long long>(s.ttl_ms),
                static_cast<unsigned long long>(s.bound_ms),
                static_cast<long long>(median(s.acquire)), ratio(median(s.acquire)),
                static_cast<long long>(max_of(s.acquire)), ratio(max_of(s.acquire)),
                static_cast<long long>(median(s.commit)), ratio(median(s.commit)),
                static_cast<long long>(max_of(s.commit)), ratio(max_of(s.commit)), s.failed);
  }
  std::printf("# (x): the figure over the bound ttl + heartbeat + discovery\n");
  return 0;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) { return seqby::redis::bench::run(argc, argv); }
