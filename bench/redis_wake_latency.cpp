// bench_redis_wake_latency: publish-to-handler latency on an idle partition among N idle
// partitions (issue 14 "Targets"). One real Engine (RealRuntime loop on its own thread, its own
// connections from InstanceBroker, default EngineOptions) holds N partitions that have nothing
// to read (index entry, empty stream, group at 0). Once it holds all N and has settled, this
// thread publishes one event at a time through RedisBroker::publish on a connection of its own,
// to a partition drawn at random, after a random 5-50 ms gap, and waits until the handler has
// entered it before the next. Latency: steady clock at the publish call to steady clock at
// handler entry (one process, one CLOCK_MONOTONIC). Prints p50, p90, p99 and max per N (and the
// publish round trip alone); asserts nothing. The default runs N = 10 first, as a control.
// Every phase has a deadline: a missed one is said on stderr and the exit status is non-zero.
//
//   scripts/with-redis build/bench_redis_wake_latency [--partitions 10,10000] [--samples 200]
//       [--settle-s 10] [--acquire-timeout-s 60] [--sample-timeout-ms 2000] [--deadline-s 300]
//       [--seed 1] [--poll-interval-ms N] [--wake-read-partitions-max N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "redis_bench_common.h"

namespace seqby::redis::bench {
namespace {

constexpr const char* kProgram = "bench_redis_wake_latency";
constexpr const char* kUsage =
    "usage: scripts/with-redis build/bench_redis_wake_latency [--partitions 10,10000] [--samples "
    "200]\n"
    "           [--settle-s 10] [--acquire-timeout-s 60] [--sample-timeout-ms 2000] [--deadline-s "
    "300]\n"
    "           [--seed 1] [--poll-interval-ms N] [--wake-read-partitions-max N]\n";
constexpr const char* kGroup = "bench";
constexpr std::uint64_t kLoopAnswerMaxMs = 20000;
constexpr std::uint64_t kStopMaxMs = 60000;
constexpr int kExitHung = 3;    // the instance did not answer or stop in time
constexpr int kExitMissed = 4;  // a phase missed its deadline (share, a sample, the whole run)

struct Options {
  std::vector<std::uint64_t> partitions{10, 10000};
  std::uint64_t samples = 200;
  std::uint64_t settle_s = 10;  // 10,000 new workers take seconds to start
  std::uint64_t acquire_timeout_s = 60;
  std::uint64_t sample_timeout_ms = 2000;
  std::uint64_t deadline_s = 300;  // per N, for all its samples
  std::uint64_t seed = 1;
  std::uint64_t poll_interval_ms = 0;          // 0: the engine's default
  std::uint64_t wake_read_partitions_max = 0;  // 0: the engine's default
};

[[noreturn]] void hung(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", kProgram, what.c_str());
  std::fflush(stdout);
  std::_Exit(kExitHung);
}

// Notes the steady time at which the handler first entered each sample (its data's seq).
class WakeHandler final : public Handler {
 public:
  Task<HandlerResult> handle(const Event& event, HandlerContext&) override {
    const std::uint64_t entered_us = steady_now_us();
    const std::int64_t sample = seq_of(event.data);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      entered_us_.emplace(sample, entered_us);  // a redelivery keeps the first entry
    }
    changed_.notify_all();
    co_return HandlerResult::success();
  }

  // The handler's first entry time of `sample`, or nullopt when it did not enter it within
  // `timeout_ms`.
  std::optional<std::uint64_t> wait_for(std::int64_t sample, std::uint64_t timeout_ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool seen = changed_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                        [&] { return entered_us_.count(sample) > 0; });
    if (!seen) return std::nullopt;
    return entered_us_.at(sample);
  }

  // The entry time of `sample` if the handler has entered it by now.
  std::optional<std::uint64_t> entered(std::int64_t sample) {
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = entered_us_.find(sample);
    if (it == entered_us_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::int64_t, std::uint64_t> entered_us_;
};

struct Figures {
  std::uint64_t partitions = 0;
  double share_s = -1;             // start to holding all N
  std::vector<double> latency_ms;  // every sample handled, in time or late
  std::vector<double> publish_ms;  // the publish call's own round trip
  std::uint64_t late = 0;          // handled, but not within --sample-timeout-ms
  std::uint64_t unhandled = 0;     // not handled by the end of the run
  std::uint64_t publish_errors = 0;
  std::string load_start;
  std::string load_end;
};

Figures run_one(const RedisConfig& config, const Options& o, std::uint64_t count, bool* missed) {
  Figures f;
  f.partitions = count;
  const std::string category =
      "wakebench" + std::to_string(::getpid()) + "n" + std::to_string(count);
  BlockingRedis admin(config);
  RealRuntime publisher_runtime;
  HiredisLink publisher_link(publisher_runtime, config);
  RedisBroker publisher(publisher_link);
  const std::size_t errors =
      create_idle_partitions(publisher_runtime, publisher_link, category, kGroup, count);
  if (errors > 0) std::fprintf(stderr, "%s: setup: %zu commands failed\n", kProgram, errors);

  WakeHandler handler;
  EngineOptions options;
  options.owner_id = category + "o0";
  options.category = category;
  options.group = kGroup;
  options.stop_wait_max_ms = kStopMaxMs / 2;
  if (o.poll_interval_ms > 0) options.poll_interval_ms = o.poll_interval_ms;
  if (o.wake_read_partitions_max > 0) {
    options.wake_read_partitions_max = static_cast<std::uint32_t>(o.wake_read_partitions_max);
  }
  auto engine = std::make_unique<EngineThread>(config, options, handler);
  std::optional<std::uint64_t> started_us = engine->start(kLoopAnswerMaxMs);
  if (!started_us) hung("the instance's loop did not start the engine within 20 s");

  // Phase 1: until it holds all N.
  const std::uint64_t acquire_deadline = *started_us + o.acquire_timeout_s * 1000000;
  for (;;) {
    std::optional<std::size_t> held = engine->held(kLoopAnswerMaxMs);
    if (!held) hung("the instance's loop did not answer held() within 20 s");
    if (*held >= count) {
      f.share_s = (steady_now_us() - *started_us) / 1e6;
      break;
    }
    if (steady_now_us() >= acquire_deadline) {
      std::fprintf(stderr, "%s: N=%llu: did not reach %llu held within %llu s (holds %zu)\n",
                   kProgram, static_cast<unsigned long long>(count),
                   static_cast<unsigned long long>(count),
                   static_cast<unsigned long long>(o.acquire_timeout_s), *held);
      *missed = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::seconds(o.settle_s));

  // Phase 2: the samples, at most --deadline-s in all.
  Command ping{"PING"};
  (void)publisher_runtime.block_on(publisher_link.execute(ping));  // connected before sampling
  std::mt19937_64 random(o.seed + count);
  std::uniform_int_distribution<std::uint64_t> pick(0, count - 1);
  std::uniform_int_distribution<int> gap_ms(5, 50);
  f.load_start = load_average();
  const std::uint64_t sampling_deadline = steady_now_us() + o.deadline_s * 1000000;
  std::vector<std::pair<std::int64_t, std::uint64_t>> late_samples;  // (sample, sent at)
  for (std::uint64_t sample = 1; sample <= o.samples; ++sample) {
    if (steady_now_us() >= sampling_deadline) {
      std::fprintf(stderr, "%s: N=%llu: %llu of %llu samples within --deadline-s %llu\n", kProgram,
                   static_cast<unsigned long long>(count),
                   static_cast<unsigned long long>(sample - 1),
                   static_cast<unsigned long long>(o.samples),
                   static_cast<unsigned long long>(o.deadline_s));
      *missed = true;
      break;
    }
    const std::string key = partition_key(static_cast<std::uint32_t>(pick(random)));
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms(random)));
    const std::string data = event_data(key, static_cast<std::uint32_t>(sample));
    const std::uint64_t sent_us = steady_now_us();
    Result<std::string> id =
        publisher_runtime.block_on(publisher.publish(PartitionRef{category, key}, "Ticked", data));
    const std::uint64_t replied_us = steady_now_us();
    if (!id.ok()) {
      ++f.publish_errors;
      continue;
    }
    f.publish_ms.push_back((replied_us - sent_us) / 1000.0);
    std::optional<std::uint64_t> entered_us =
        handler.wait_for(static_cast<std::int64_t>(sample), o.sample_timeout_ms);
    if (!entered_us) {
      std::fprintf(stderr, "%s: N=%llu: sample %llu (key %s) not handled within %llu ms\n",
                   kProgram, static_cast<unsigned long long>(count),
                   static_cast<unsigned long long>(sample), key.c_str(),
                   static_cast<unsigned long long>(o.sample_timeout_ms));
      late_samples.emplace_back(static_cast<std::int64_t>(sample), sent_us);
      *missed = true;
      continue;
    }
    f.latency_ms.push_back((*entered_us - sent_us) / 1000.0);
  }
  // The samples not handled in time get one more --sample-timeout-ms to be handled late.
  const std::uint64_t late_deadline = steady_now_us() + o.sample_timeout_ms * 1000;
  for (const auto& [sample, sent_us] : late_samples) {
    std::optional<std::uint64_t> entered_us;
    while (!(entered_us = handler.entered(sample)) && steady_now_us() < late_deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (entered_us) {
      ++f.late;
      f.latency_ms.push_back((*entered_us - sent_us) / 1000.0);
    } else {
      ++f.unhandled;
    }
  }
  f.load_end = load_average();

  // Phase 3: stop, clean up.
  if (!engine->stop(kStopMaxMs)) hung("the instance did not stop within 60 s");
  engine.reset();
  (void)unlink_matching(admin, category + "*");
  return f;
}

void print_header(const Options& o) {
  std::printf(
      "# %s: one Engine holding N idle partitions; %llu samples, one at a time, each published "
      "(RedisBroker::publish, own connection) to a random partition after a random 5-50 ms "
      "gap; latency = publish call to handler entry (steady clock, same process); default "
      "EngineOptions (poll_interval_ms %llu)\n",
      kProgram, static_cast<unsigned long long>(o.samples),
      static_cast<unsigned long long>(o.poll_interval_ms > 0 ? o.poll_interval_ms
                                                             : EngineOptions().poll_interval_ms));
  print_malloc_line();
  std::printf(
      "# wake links: one per wake channel (HiredisWakeLinks), at most %llu streams per "
      "blocking read\n",
      static_cast<unsigned long long>(o.wake_read_partitions_max > 0
                                          ? o.wake_read_partitions_max
                                          : EngineOptions().wake_read_partitions_max));
  std::printf(
      "# handled: samples the handler entered (late: after --sample-timeout-ms %llu, within one "
      "more); unhandled: never entered (left out of the percentiles: they are at least the "
      "timeout); publish_p50: the publish call's own round trip\n",
      static_cast<unsigned long long>(o.sample_timeout_ms));
  std::printf("%6s %8s %7s %5s %9s %8s %8s %8s %8s %8s %12s  %-15s %s\n", "N", "share_s", "handled",
              "late", "unhandled", "p50_ms", "p90_ms", "p99_ms", "max_ms", "mean_ms", "publish_p50",
              "load avg start", "load avg end");
}

void print_row(const Figures& f) {
  std::vector<double> sorted = f.latency_ms;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> publish = f.publish_ms;
  std::sort(publish.begin(), publish.end());
  double mean = 0;
  for (const double v : sorted) mean += v;
  if (!sorted.empty()) mean /= static_cast<double>(sorted.size());
  std::printf("%6llu %8.2f %7zu %5llu %9llu %8.2f %8.2f %8.2f %8.2f %8.2f %12.2f  %-15s %s\n",
              static_cast<unsigned long long>(f.partitions), f.share_s, sorted.size(),
              static_cast<unsigned long long>(f.late),
              static_cast<unsigned long long>(f.unhandled + f.publish_errors),
              percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 99),
              sorted.empty() ? 0.0 : sorted.back(), mean, percentile(publish, 50),
              f.load_start.c_str(), f.load_end.c_str());
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
    if (flag == "--partitions") {
      if (!parse_u64_list(text, &o->partitions)) {
        std::fprintf(stderr,
                     "%s: --partitions needs positive numbers separated by commas, got "
                     "'%s'\n",
                     kProgram, text.c_str());
        return false;
      }
      for (const std::uint64_t n : o->partitions) {
        if (n > 100000) {
          std::fprintf(stderr, "%s: --partitions: at most 100000, got %llu\n", kProgram,
                       static_cast<unsigned long long>(n));
          return false;
        }
      }
      continue;
    }
    std::uint64_t value = 0;
    if (!parse_u64(text.c_str(), &value) || (value == 0 && flag != "--settle-s")) {
      std::fprintf(stderr, "%s: %s needs a positive number, got '%s'\n", kProgram, flag.c_str(),
                   text.c_str());
      return false;
    }
    if (flag == "--samples") {
      o->samples = value;
    } else if (flag == "--settle-s") {
      o->settle_s = value;
    } else if (flag == "--acquire-timeout-s") {
      o->acquire_timeout_s = value;
    } else if (flag == "--sample-timeout-ms") {
      o->sample_timeout_ms = value;
    } else if (flag == "--deadline-s") {
      o->deadline_s = value;
    } else if (flag == "--seed") {
      o->seed = value;
    } else if (flag == "--poll-interval-ms") {
      o->poll_interval_ms = value;
    } else if (flag == "--wake-read-partitions-max") {
      if (value > 100000) {
        std::fprintf(stderr, "%s: --wake-read-partitions-max: at most 100000, got %s\n", kProgram,
                     text.c_str());
        return false;
      }
      o->wake_read_partitions_max = value;
    } else {
      std::fprintf(stderr, "%s: unknown option %s\n", kProgram, flag.c_str());
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
  bool missed = false;
  for (const std::uint64_t count : o.partitions) print_row(run_one(*config, o, count, &missed));
  if (missed) {
    std::fprintf(stderr, "%s: some phase missed its deadline (above)\n", kProgram);
    return kExitMissed;
  }
  return 0;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) { return seqby::redis::bench::run(argc, argv); }
