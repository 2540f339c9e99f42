// bench_redis_step_cost: where the redis-server time of the engine's one fenced script per event
// goes (fenced_commit_next.lua, the commit carried by the step; issue 14). The very script the
// engine loads is cut short at three points (just after the libraries that
// cmake/embed_scripts.cmake prepends, after the lease check, and in the steady step after its
// commit, before its ack: lib/next_step.lua enter_held), and each cut, the whole script and a
// script that returns at once with the same KEYS and ARGV run the steady state of 8 partitions of
// 4,000 events each: commit seq n, ack entry n, enter entry n+1 (held from a read of up to 32 new
// entries, read_batch_max's default, so one step in 32 reads). Per step: the server's execution
// time of EVALSHA (INFO commandstats usec_per_call: the script and the commands it runs, no I/O)
// and what each stage adds to the stage before it. All variants in one run on one server; the
// order of the variants is repeated, and the figures of each repetition printed.
//
//   scripts/with-redis build/bench_redis_step_cost [--repetitions N]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "redis_bench_common.h"
#include "seqby/broker/scripts.h"

namespace seqby::redis::bench {
namespace {

constexpr int kPartitions = 8;
constexpr int kEvents = 4000;
constexpr const char* kReadBatch = "32";
constexpr const char* kToken = "w1:1";
constexpr const char* kGroup = "g";

// A stage of the script: its source, and what the step does up to there.
struct Stage {
  std::string name;
  std::string source;
};

// `source` cut just before the first occurrence of `marker` with an early `return` of the steady
// step's short reply (1: acknowledged, the held entry entered), so every stage answers as the
// whole step does in the steady state and a stage adds only its work. Exits 2 naming the marker
// when the script no longer holds it (the bench must follow the script).
std::string cut_before(const std::string& source, const std::string& marker) {
  const std::size_t at = source.find(marker);
  if (at == std::string::npos) {
    std::fprintf(stderr, "bench_redis_step_cost: fenced_commit_next.lua no longer holds '%s'\n",
                 marker.c_str());
    std::exit(2);
  }
  return source.substr(0, at) + "do return 1 end\n" + source.substr(at);
}

std::vector<Stage> stages() {
  const std::string full = script_source("fenced_commit_next");
  return {
      {"EVALSHA alone (same KEYS and ARGV, returns at once)", "return 1"},
      {"+ the libraries prepended (their local functions made on every call)",
       cut_before(full, "local J = journal_of(")},
      {"+ the lease check (GET)", cut_before(full, "local steady = steady_step(")},
      {"+ the commit (HGET, HSET sink, HSET effects; and whole, the 1 step in 32 that reads 32)",
       cut_before(full, "local acked = ack_entry(J, stream, group, ack_id)")},
      {"+ the ack (XACK) and the held entry entered: the whole step", full},
  };
}

Result<Reply> must(BlockingRedis& redis, const Command& command) {
  Result<Reply> reply = redis.execute(command);
  if (!reply.ok() || reply.value().is_error()) {
    std::fprintf(stderr, "bench_redis_step_cost: %s: %s\n", command[0].c_str(),
                 reply.ok() ? reply.value().str.c_str() : reply.error().message.c_str());
    std::exit(1);
  }
  return reply;
}

std::string stream_of(int p) { return "bench_step:{k" + std::to_string(p) + "}"; }

// Fresh partitions: kEvents entries each, a group at 0, the lease held by kToken.
void set_up(BlockingRedis& redis) {
  for (int p = 0; p < kPartitions; ++p) {
    const std::string stream = stream_of(p);
    (void)must(redis, {"DEL", stream, stream + ":__lease__", stream + ":__sink__:g",
                       stream + ":__effects__:g"});
    for (int i = 0; i < kEvents; ++i) {
      (void)must(redis, {"XADD", stream, "*", "type", "t", "data", "{\"id\":\"k\",\"seq\":1}"});
    }
    (void)must(redis, {"XGROUP", "CREATE", stream, kGroup, "0"});
    (void)must(redis, {"SET", stream + ":__lease__", kToken});
  }
}

// One stage over every event; the server's EVALSHA microseconds per step.
double run_stage(BlockingRedis& redis, const Stage& stage) {
  set_up(redis);
  const std::string sha = must(redis, {"SCRIPT", "LOAD", stage.source}).value().str;
  reset_command_stats(redis);
  std::vector<std::deque<std::string>> held(kPartitions);
  std::vector<std::string> last(kPartitions);
  for (int seq = 1; seq < kEvents; ++seq) {
    for (int p = 0; p < kPartitions; ++p) {
      const std::string stream = stream_of(p);
      std::string next;
      if (!held[p].empty()) {
        next = held[p].front();
        held[p].pop_front();
      }
      const Reply reply =
          must(redis, {"EVALSHA", sha, "4", stream + ":__lease__", stream, stream + ":__sink__:g",
                       stream + ":__effects__:g", kToken, kGroup, ">", last[p], kReadBatch, next,
                       std::to_string(seq), "effect"})
              .value();
      // The steady step's ack count alone (the held entry entered), or {outcome, last, by, acked,
      // '', held} or {outcome, last, by, acked, '', id, type, data, delivery, id, ...}: the entry
      // entered next, and the rest held.
      if (reply.kind == Reply::Kind::integer) {
        last[p] = next;
        continue;
      }
      const auto& e = reply.elements;
      last[p] = e.size() > 5 ? e[5].str : "";
      for (std::size_t i = 9; e.size() > 6 && i < e.size(); i += 4) held[p].push_back(e[i].str);
    }
  }
  const CommandStats stats = command_stats(redis);
  return stats.script_calls == 0 ? 0.0 : static_cast<double>(stats.usec) / stats.script_calls;
}

}  // namespace
}  // namespace seqby::redis::bench

int main(int argc, char** argv) {
  using namespace seqby::redis;
  int repetitions = 2;
  constexpr const char* kUsage =
      "usage: scripts/with-redis build/bench_redis_step_cost [--repetitions N >= 1]\n";
  if (bench::usage_asked(argc, argv, kUsage)) return 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repetitions") == 0 && i + 1 < argc && std::atoi(argv[i + 1]) >= 1) {
      repetitions = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "bench_redis_step_cost: bad argument '%s'\n%s", argv[i], kUsage);
      return 2;
    }
  }
  std::optional<RedisConfig> config = bench::redis_config_from_env("bench_redis_step_cost");
  if (!config) return bench::kExitNoServer;
  BlockingRedis redis(*config);
  const std::vector<bench::Stage> stages = bench::stages();
  std::printf("# %d partitions x %d events, read batch %s; load %s\n", bench::kPartitions,
              bench::kEvents, bench::kReadBatch, bench::load_average().c_str());
  std::printf("| stage | server us per step | added by the stage |\n|---|---|---|\n");
  for (int r = 1; r <= repetitions; ++r) {
    double before = 0;
    for (const bench::Stage& stage : stages) {
      const double us = bench::run_stage(redis, stage);
      std::printf("| %s (rep %d) | %.2f | %+.2f |\n", stage.name.c_str(), r, us, us - before);
      before = us;
    }
  }
  for (int p = 0; p < bench::kPartitions; ++p) {
    const std::string stream = bench::stream_of(p);
    (void)redis.execute(
        {"DEL", stream, stream + ":__lease__", stream + ":__sink__:g", stream + ":__effects__:g"});
  }
  return 0;
}
