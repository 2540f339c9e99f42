// bench_redis_idle_cost: what idle partitions cost (issue 14 "Targets"). One or two real Engine
// instances (each a RealRuntime loop on its own thread, its own connections from
// InstanceBroker, a trivial handler, default EngineOptions but for the flags below) serve one
// category of N partitions that hold nothing to read (index entry, empty stream, group at 0). Per
// (N, instances):
// - the time from Engine::start() until each instance holds its share (Engine::held(), asked
//   every 10 ms on the instance's loop): ceil(N / instances) when the instances divide N, else
//   at least what the others leave it when each holds that ceil, N - (instances - 1) * ceil
//   (3,332 of 10,000 for one of three beside two at 3,334; the design keeps none above ceil);
// - after a settle time, over a window with nothing published: redis-server CPU (INFO cpu, % of
//   one core), the commands it ran per second (INFO stats total_commands_processed: in Redis 7
//   those inside scripts too; this program's own INFO calls taken off) and the script calls
//   among them, the commands the instances' links sent per second, the CPU of the
//   instances' loop threads (CLOCK_THREAD_CPUTIME_ID, read on the loop) and of this whole
//   process (getrusage), leases lost during the window;
// - the heartbeat round as the engine runs it (Engine::heartbeat_rounds_ms: the announce and,
//   at the same time, the whole renew_many round trip and the renew records), over the rounds of
//   the window; and the renews in a round, from the history (`renew` records closer than half a
//   heartbeat interval to the previous one form a round).
// Every phase has a deadline: a missed one is said on stderr, and the program exits non-zero
// (at once when an instance stops answering, at the end when a share was not reached in time).
// Prints figures, asserts none.
//
//   scripts/with-redis build/bench_redis_idle_cost [--partitions 1000,10000] [--instances 1,2]
//       [--window-s 10] [--settle-s 10] [--acquire-timeout-s 60] [--poll-interval-ms N]
//       [--heartbeat-interval-ms N] [--discovery-interval-ms N]
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis_bench_common.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_redis_idle_cost";
constexpr const char* kUsage =
    "usage: scripts/with-redis build/bench_redis_idle_cost [--partitions 1000,10000] [--instances "
    "1,2]\n"
    "           [--window-s 10] [--settle-s 10] [--acquire-timeout-s 60] [--poll-interval-ms N]\n"
    "           [--heartbeat-interval-ms N] [--discovery-interval-ms N]\n";
constexpr const char* kGroup = "bench";
constexpr std::uint64_t kLoopAnswerMaxMs = 20000;  // an instance's loop must answer within this
constexpr std::uint64_t kStopMaxMs = 60000;
constexpr int kExitHung = 3;     // an instance did not answer or stop in time
constexpr int kExitNoShare = 4;  // a fair share was not reached within --acquire-timeout-s

struct Options {
  std::vector<std::uint64_t> partitions{1000, 10000};
  std::vector<std::uint64_t> instances{1, 2};
  std::uint64_t window_s = 10;
  std::uint64_t settle_s = 10;  // 10,000 new workers take seconds to start
  std::uint64_t acquire_timeout_s = 60;
  // Every instance's options before its owner id, category and group: the defaults, with
  // --poll-interval-ms and --heartbeat-interval-ms applied (validate_engine_options holds).
  EngineOptions engine;
};

[[noreturn]] void hung(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", kProgram, what.c_str());
  std::fflush(stdout);
  std::_Exit(kExitHung);
}

struct Figures {
  std::uint64_t partitions = 0;
  std::uint64_t instances = 0;
  double setup_s = 0;
  std::vector<double> share_s;  // per instance: start to fair share (-1: not reached)
  std::vector<std::size_t> held_end;
  std::uint64_t lost = 0;  // `lose` records during the window, all instances
  ServerMeter::Reading server;
  double client_commands_per_s = 0;  // sent by the instances' links
  double loop_cpu_percent = 0;       // the instances' loop threads together
  double process_cpu_percent = 0;
  std::size_t rounds = 0;  // heartbeat rounds since settling (instance a)
  double round_median_ms = 0;
  double round_max_ms = 0;
  std::uint64_t round_renews = 0;  // median renews in a round
  std::string load;
};

Figures run_one(const RedisConfig& config, const Options& o, std::uint64_t count,
                std::uint64_t instance_count, bool* share_missed) {
  Figures f;
  f.partitions = count;
  f.instances = instance_count;
  const std::string category = "idlebench" + std::to_string(::getpid()) + "n" +
                               std::to_string(count) + "i" + std::to_string(instance_count);
  BlockingRedis admin(config);
  std::vector<std::string> owners;
  {
    RealRuntime setup_runtime;
    HiredisLink setup_link(setup_runtime, config);
    RedisBroker setup_broker(setup_link);
    const std::uint64_t setup_start = steady_now_us();
    const std::size_t errors =
        create_idle_partitions(setup_runtime, setup_link, category, kGroup, count);
    f.setup_s = (steady_now_us() - setup_start) / 1e6;
    if (errors > 0) std::fprintf(stderr, "%s: setup: %zu commands failed\n", kProgram, errors);
    // Every instance announced before any starts, as in a running deployment: each knows the
    // fair share from its first discovery cycle.
    for (std::uint64_t i = 0; i < instance_count; ++i) {
      owners.push_back(category + "o" + std::to_string(i));
      Status announced = setup_runtime.block_on(
          setup_broker.announce_member(category, kGroup, owners.back(), 3000));
      if (!announced.ok()) std::fprintf(stderr, "%s: announce failed\n", kProgram);
    }
  }
  ServerMeter meter(admin);
  meter.calibrate();

  AcceptHandler handler;
  std::vector<std::unique_ptr<EngineThread>> engines;
  for (const std::string& owner : owners) {
    EngineOptions options = o.engine;
    options.owner_id = owner;
    options.category = category;
    options.group = kGroup;
    options.stop_wait_max_ms = kStopMaxMs / 2;
    engines.push_back(std::make_unique<EngineThread>(config, options, handler));
  }
  const std::uint64_t ceil_share = (count + instance_count - 1) / instance_count;
  const std::uint64_t others_max = (instance_count - 1) * ceil_share;
  const std::uint64_t share = count > others_max ? count - others_max : 0;
  std::vector<std::uint64_t> started_us;
  for (auto& engine : engines) {
    std::optional<std::uint64_t> at = engine->start(kLoopAnswerMaxMs);
    if (!at) hung("an instance's loop did not start the engine within 20 s");
    started_us.push_back(*at);
  }

  // Phase 1: until every instance holds its fair share, at most --acquire-timeout-s.
  f.share_s.assign(engines.size(), -1);
  const std::uint64_t acquire_deadline = started_us[0] + o.acquire_timeout_s * 1000000;
  for (;;) {
    bool all = true;
    for (std::size_t i = 0; i < engines.size(); ++i) {
      if (f.share_s[i] >= 0) continue;
      std::optional<std::size_t> held = engines[i]->held(kLoopAnswerMaxMs);
      if (!held) hung("an instance's loop did not answer held() within 20 s");
      if (*held >= share) {
        f.share_s[i] = (steady_now_us() - started_us[i]) / 1e6;
      } else {
        all = false;
      }
    }
    if (all) break;
    if (steady_now_us() >= acquire_deadline) {
      for (std::size_t i = 0; i < engines.size(); ++i) {
        if (f.share_s[i] >= 0) continue;
        const std::optional<std::size_t> held = engines[i]->held(kLoopAnswerMaxMs);
        std::fprintf(stderr,
                     "%s: N=%llu instances=%llu: instance %zu did not reach %llu held within "
                     "%llu s (holds %zu); measuring anyway\n",
                     kProgram, static_cast<unsigned long long>(count),
                     static_cast<unsigned long long>(instance_count), i,
                     static_cast<unsigned long long>(share),
                     static_cast<unsigned long long>(o.acquire_timeout_s), held ? *held : 0);
      }
      *share_missed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

  // Phase 2: settle, then the window.
  const std::uint64_t settled_from_us = steady_now_us();
  std::this_thread::sleep_for(std::chrono::seconds(o.settle_s));
  f.load = load_average();
  std::vector<EngineThread::Snapshot> before;
  std::uint64_t lost_before = 0;
  for (auto& engine : engines) {
    std::optional<EngineThread::Snapshot> s = engine->snapshot(kLoopAnswerMaxMs);
    if (!s) hung("an instance's loop did not answer within 20 s");
    before.push_back(*s);
    lost_before += engine->steps().losses.load();
  }
  const std::uint64_t process_before = process_cpu_us();
  meter.begin();
  std::this_thread::sleep_for(std::chrono::seconds(o.window_s));
  f.server = meter.end();
  const std::uint64_t process_after = process_cpu_us();
  std::uint64_t commands = 0;
  std::uint64_t loop_cpu = 0;
  std::uint64_t lost_after = 0;
  for (std::size_t i = 0; i < engines.size(); ++i) {
    std::optional<EngineThread::Snapshot> s = engines[i]->snapshot(kLoopAnswerMaxMs);
    if (!s) hung("an instance's loop did not answer within 20 s");
    commands += s->commands_sent - before[i].commands_sent;
    loop_cpu += s->loop_cpu_us - before[i].loop_cpu_us;
    lost_after += engines[i]->steps().losses.load();
    std::optional<std::size_t> held = engines[i]->held(kLoopAnswerMaxMs);
    if (!held) hung("an instance's loop did not answer held() within 20 s");
    f.held_end.push_back(*held);
  }
  const double window_us = static_cast<double>(f.server.elapsed_us);
  f.client_commands_per_s = window_us > 0 ? commands * 1e6 / window_us : 0;
  f.loop_cpu_percent = window_us > 0 ? 100.0 * loop_cpu / window_us : 0;
  f.process_cpu_percent = window_us > 0 ? 100.0 * (process_after - process_before) / window_us : 0;
  f.lost = lost_after - lost_before;

  // The heartbeat rounds of instance a in the window (the engine keeps its last 64).
  const std::uint64_t interval_us = o.engine.heartbeat_interval_ms * 1000;
  std::optional<std::vector<std::uint64_t>> round_ms =
      engines[0]->heartbeat_rounds_ms(kLoopAnswerMaxMs);
  if (!round_ms) hung("an instance's loop did not answer within 20 s");
  const std::size_t in_window = o.window_s * 1000 / o.engine.heartbeat_interval_ms;
  if (round_ms->size() > in_window) {
    round_ms->erase(round_ms->begin(), round_ms->end() - static_cast<std::ptrdiff_t>(in_window));
  }
  f.rounds = round_ms->size();
  if (f.rounds > 0) {
    std::sort(round_ms->begin(), round_ms->end());
    f.round_median_ms = static_cast<double>((*round_ms)[round_ms->size() / 2]);
    f.round_max_ms = static_cast<double>(round_ms->back());
  }
  std::vector<std::uint64_t> renews =
      engines[0]->steps().renews_per_round(settled_from_us, interval_us / 2);
  if (!renews.empty()) {
    std::sort(renews.begin(), renews.end());
    f.round_renews = renews[renews.size() / 2];
  }

  // Phase 3: stop every instance (each releases its leases), then clean up.
  for (std::size_t i = 0; i < engines.size(); ++i) {
    if (!engines[i]->stop(kStopMaxMs)) hung("an instance did not stop within 60 s");
  }
  engines.clear();
  (void)unlink_matching(admin, category + "*");
  return f;
}

void print_header(const Options& o) {
  std::printf(
      "# %s: Engine instances holding N idle partitions (empty stream, group at 0), nothing "
      "published; EngineOptions (poll_interval_ms %llu, heartbeat_interval_ms %llu, "
      "lease_ttl_ms %llu, discovery_interval_ms %llu); window %llu s after %llu s settling\n",
      kProgram, static_cast<unsigned long long>(o.engine.poll_interval_ms),
      static_cast<unsigned long long>(o.engine.heartbeat_interval_ms),
      static_cast<unsigned long long>(o.engine.lease_ttl_ms),
      static_cast<unsigned long long>(o.engine.discovery_interval_ms),
      static_cast<unsigned long long>(o.window_s), static_cast<unsigned long long>(o.settle_s));
  print_malloc_line();
  std::printf(
      "# wake links: one per wake channel (HiredisWakeLinks), at most %u streams per "
      "blocking read\n",
      static_cast<unsigned>(o.engine.wake_read_partitions_max));
  std::printf(
      "# share_s: Engine::start() to holding N - (instances - 1) * ceil(N/instances) "
      "(ceil(N/instances) when they divide N), per instance; srv_cpu: "
      "redis-server %% of a core; srv_call/s: commands it ran (inside scripts too); "
      "srv_evalsha/s: script calls; lua_ms/s: their execution, ms per second (INFO commandstats: "
      "with nothing published, about the renewals' server time per heartbeat round); cli_cmd/s: "
      "commands the instances sent; loop_cpu: instances' loop threads, %% of a core; proc_cpu: "
      "this process; hb round: the engine's heartbeat round, "
      "announce and renewals (median/max over the window's rounds, Engine::heartbeat_rounds_ms), "
      "renews per round\n");
  std::printf("%6s %4s %7s %-15s %-13s %5s %8s %10s %13s %8s %10s %9s %9s %-17s %7s  %s\n", "N",
              "inst", "setup_s", "share_s", "held_end", "lost", "srv_cpu", "srv_call/s",
              "srv_evalsha/s", "lua_ms/s", "cli_cmd/s", "loop_cpu", "proc_cpu", "hb round ms",
              "renews", "load avg");
}

void print_row(const Figures& f) {
  std::string share;
  std::string held;
  for (std::size_t i = 0; i < f.share_s.size(); ++i) {
    char text[32];
    if (f.share_s[i] >= 0) {
      std::snprintf(text, sizeof(text), "%s%.2f", i == 0 ? "" : "/", f.share_s[i]);
    } else {
      std::snprintf(text, sizeof(text), "%s-", i == 0 ? "" : "/");
    }
    share += text;
    held += (i == 0 ? "" : "/") + std::to_string(f.held_end[i]);
  }
  char round[48];
  std::snprintf(round, sizeof(round), "%.1f/%.1f (%zu)", f.round_median_ms, f.round_max_ms,
                f.rounds);
  std::printf(
      "%6llu %4llu %7.2f %-15s %-13s %5llu %7.1f%% %10.0f %13.0f %8.1f %10.0f %8.1f%% %8.1f%% "
      "%-17s %7llu  %s\n",
      static_cast<unsigned long long>(f.partitions), static_cast<unsigned long long>(f.instances),
      f.setup_s, share.c_str(), held.c_str(), static_cast<unsigned long long>(f.lost),
      f.server.cpu_percent(), f.server.calls_per_s(), f.server.scripts_per_s(),
      f.server.script_ms_per_s(), f.client_commands_per_s, f.loop_cpu_percent,
      f.process_cpu_percent, round, static_cast<unsigned long long>(f.round_renews),
      f.load.c_str());
  std::fflush(stdout);
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
    if (flag == "--partitions" || flag == "--instances") {
      std::vector<std::uint64_t>* list = flag == "--partitions" ? &o->partitions : &o->instances;
      if (!parse_u64_list(text, list)) {
        std::fprintf(stderr, "%s: %s needs positive numbers separated by commas, got '%s'\n",
                     kProgram, flag.c_str(), text.c_str());
        return false;
      }
      continue;
    }
    if (!parse_u64(text.c_str(), &value) || (value == 0 && flag != "--settle-s")) {
      std::fprintf(stderr, "%s: %s needs a positive number, got '%s'\n", kProgram, flag.c_str(),
                   text.c_str());
      return false;
    }
    if (flag == "--window-s") {
      o->window_s = value;
    } else if (flag == "--settle-s") {
      o->settle_s = value;
    } else if (flag == "--acquire-timeout-s") {
      o->acquire_timeout_s = value;
    } else if (flag == "--poll-interval-ms") {
      o->engine.poll_interval_ms = value;
    } else if (flag == "--heartbeat-interval-ms") {
      o->engine.heartbeat_interval_ms = value;
    } else if (flag == "--discovery-interval-ms") {
      o->engine.discovery_interval_ms = value;
    } else {
      std::fprintf(stderr, "%s: unknown option %s\n", kProgram, flag.c_str());
      return false;
    }
  }
  // The engine's own check of what must hold between its limits (the heartbeat within the TTL).
  EngineOptions named = o->engine;
  named.owner_id = "check";
  named.category = "check";
  named.group = kGroup;
  if (Status valid = validate_engine_options(named); !valid.ok()) {
    std::fprintf(stderr, "%s: %s\n", kProgram, valid.error().message.c_str());
    return false;
  }
  for (const std::uint64_t n : o->partitions) {
    if (n > 100000) {
      std::fprintf(stderr, "%s: --partitions: at most 100000 per run, got %llu\n", kProgram,
                   static_cast<unsigned long long>(n));
      return false;
    }
  }
  for (const std::uint64_t n : o->instances) {
    if (n > 8) {
      std::fprintf(stderr, "%s: --instances: at most 8, got %llu\n", kProgram,
                   static_cast<unsigned long long>(n));
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
  print_header(o);
  bool share_missed = false;
  for (const std::uint64_t count : o.partitions) {
    for (const std::uint64_t instances : o.instances) {
      print_row(run_one(*config, o, count, instances, &share_missed));
    }
  }
  std::printf("# load average at the end: %s\n", load_average().c_str());
  if (share_missed) {
    std::fprintf(stderr, "%s: some instance did not reach its fair share in time (above)\n",
                 kProgram);
    return kExitNoShare;
  }
  return 0;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) { return seqby::redis::bench::run(argc, argv); }
