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
// Then the read of new entries alone, per entry, the same 8 x 4,000 entries in reads of 32: the
// step's read (XREADGROUP inside the script, its reply converted to Lua and the entries returned
// converted back), the same with the reply dropped in the script, and the commands a client
// sends: XREADGROUP; WATCH of the lease, GET of it, MULTI, XREADGROUP and EXEC (a read the
// lease's WATCH would fence instead of a script); XRANGE of the entries after the last one read,
// which delivers nothing; and that XRANGE followed by an XCLAIM FORCE of the ids it gave, which
// delivers them. What a read through Lua costs the server over the same read sent as a command.
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

// A way to read a partition's next kReadBatch new entries for a group.
enum class ReadHow : std::uint8_t {
  script_returned,  // XREADGROUP in a script that returns its entries (the step's read)
  script_dropped,   // XREADGROUP in a script that drops its reply
  command,          // XREADGROUP sent as a command
  transaction,      // WATCH of the lease, GET of it (the check), MULTI, XREADGROUP, EXEC
  range,            // XRANGE of the entries after the last one read (delivers nothing)
  claim,            // that XRANGE, then XCLAIM FORCE JUSTID of its ids (delivers them)
};

struct ReadWay {
  std::string name;
  ReadHow how;
};

std::vector<ReadWay> read_ways() {
  return {
      {"XREADGROUP in a script, entries returned (the step's read)", ReadHow::script_returned},
      {"XREADGROUP in a script, its reply dropped", ReadHow::script_dropped},
      {"XREADGROUP sent as a command", ReadHow::command},
      {"WATCH of the lease, GET of it, MULTI, XREADGROUP, EXEC (a read a WATCH would fence)",
       ReadHow::transaction},
      {"XRANGE after the last entry read, sent as a command (delivers nothing)", ReadHow::range},
      {"that XRANGE, then XCLAIM FORCE JUSTID RETRYCOUNT 1 LASTID of its ids (delivers them)",
       ReadHow::claim},
  };
}

// The commands of one read of `stream` for `group` by `how`, the last one's reply the read's
// (EXEC's wrapped in an array); `sha` the script's, `after` the last entry read ("0": none).
std::vector<Command> read_commands(ReadHow how, const std::string& sha, const std::string& stream,
                                   const std::string& group, const std::string& after) {
  const Command xreadgroup{"XREADGROUP", "GROUP",   group,  kToken, "COUNT",
                           kReadBatch,   "STREAMS", stream, ">"};
  switch (how) {
    case ReadHow::script_returned:
    case ReadHow::script_dropped:
      return {{"EVALSHA", sha, "1", stream, group, kToken, kReadBatch}};
    case ReadHow::command:
      return {xreadgroup};
    case ReadHow::transaction:
      return {{"WATCH", stream + ":__lease__"},
              {"GET", stream + ":__lease__"},
              {"MULTI"},
              xreadgroup,
              {"EXEC"}};
    case ReadHow::range:
    case ReadHow::claim:  // the XCLAIM follows, made of the XRANGE's ids (claim_command)
      return {{"XRANGE", stream, after == "0" ? "-" : "(" + after, "+", "COUNT", kReadBatch}};
  }
  return {};
}

// XCLAIM of the entries an XRANGE's `reply` gave, to kToken in `group`, as a read of new
// entries would deliver them: once (RETRYCOUNT 1), the group's last delivered id moved to the
// last of them (LASTID).
Command claim_command(const std::string& stream, const std::string& group, const Reply& reply) {
  Command claim{"XCLAIM", stream, group, kToken, "0"};
  for (const Reply& entry : reply.elements) claim.push_back(entry.elements[0].str);
  claim.insert(claim.end(), {"FORCE", "JUSTID", "RETRYCOUNT", "1", "LASTID", claim.back()});
  return claim;
}

std::string read_script(ReadHow how) {
  const std::string read =
      "redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS', KEYS[1], "
      "'>')";
  if (how == ReadHow::script_returned) return "return " + read;
  if (how == ReadHow::script_dropped) return read + " return 1";
  return "";
}

// The last entry's id of a read's reply: XREADGROUP's [[stream, [[id, fields], ...]]] (EXEC's
// wrapped in an array), XRANGE's [[id, fields], ...], or '' for none (and for a script whose
// reply was dropped).
std::string last_id_of(const Reply& reply, ReadHow how) {
  if (how == ReadHow::transaction) {
    return reply.elements.empty() ? "" : last_id_of(reply.elements[0], ReadHow::command);
  }
  const Reply* entries = &reply;
  if (!reply.elements.empty() && reply.elements[0].elements.size() == 2 &&
      reply.elements[0].elements[1].kind == Reply::Kind::array &&
      reply.elements[0].elements[0].kind == Reply::Kind::bulk &&
      reply.elements[0].elements[0].str.rfind("bench_step:", 0) == 0) {
    entries = &reply.elements[0].elements[1];  // XREADGROUP's [stream, entries]
  }
  if (entries->elements.empty() || entries->elements.back().elements.empty()) return "";
  return entries->elements.back().elements[0].str;
}

// One way of reading every partition's entries, kReadBatch at a time, from a group of its own;
// the server's microseconds per entry read (for a transaction, WATCH, GET, MULTI and EXEC, whose
// time holds its XREADGROUP's). Exits 1 when a way did not read every entry.
double run_read(BlockingRedis& redis, const ReadWay& way, const std::string& group) {
  const std::string script = read_script(way.how);
  const std::string sha = script.empty() ? "" : must(redis, {"SCRIPT", "LOAD", script}).value().str;
  for (int p = 0; p < kPartitions; ++p) {
    (void)must(redis, {"XGROUP", "CREATE", stream_of(p), group, "0"});
  }
  const int batch = std::atoi(kReadBatch);
  const int reads_per_partition = (kEvents + batch - 1) / batch;
  std::vector<std::string> after(kPartitions, "0");
  reset_command_stats(redis);
  for (int r = 0; r < reads_per_partition; ++r) {
    for (int p = 0; p < kPartitions; ++p) {
      Reply reply;
      for (const Command& command : read_commands(way.how, sha, stream_of(p), group, after[p])) {
        reply = must(redis, command).value();
      }
      const std::string last = last_id_of(reply, way.how);
      if (way.how == ReadHow::claim && !last.empty()) {
        (void)must(redis, claim_command(stream_of(p), group, reply));
      }
      if (!last.empty()) after[p] = last;
    }
  }
  const CommandStats stats = command_stats(redis);
  std::uint64_t usec = stats.usec;
  if (way.how == ReadHow::transaction) {  // every command but the XREADGROUP inside EXEC's time
    usec = 0;
    for (const char* name : {"watch", "get", "multi", "exec"}) {
      const auto it = stats.usec_by_command.find(name);
      if (it != stats.usec_by_command.end()) usec += it->second;
    }
  }
  // Every entry read: delivered to the group (XPENDING's count), or for XRANGE, the last reached.
  for (int p = 0; p < kPartitions; ++p) {
    const std::string stream = stream_of(p);
    const Reply pending = must(redis, {"XPENDING", stream, group}).value();
    const Reply last_entry = must(redis, {"XREVRANGE", stream, "+", "-", "COUNT", "1"}).value();
    const bool all = way.how == ReadHow::range
                         ? after[p] == last_id_of(last_entry, ReadHow::range)
                         : !pending.elements.empty() && pending.elements[0].integer == kEvents;
    if (!all) {
      std::fprintf(stderr, "bench_redis_step_cost: '%s' did not read every entry of %s\n",
                   way.name.c_str(), stream.c_str());
      std::exit(1);
    }
  }
  return static_cast<double>(usec) / (double{kPartitions} * kEvents);
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
  std::printf(
      "\n| the read of %s new entries | server us per entry | against the command |\n"
      "|---|---|---|\n",
      bench::kReadBatch);
  const std::vector<bench::ReadWay> ways = bench::read_ways();
  for (int r = 1; r <= repetitions; ++r) {
    bench::set_up(redis);
    std::vector<double> per_entry;
    for (std::size_t w = 0; w < ways.size(); ++w) {
      per_entry.push_back(bench::run_read(redis, ways[w], "r" + std::to_string(w)));
    }
    double command = 0;  // XREADGROUP sent as a command: what the others are compared with
    for (std::size_t w = 0; w < ways.size(); ++w) {
      if (ways[w].how == bench::ReadHow::command) command = per_entry[w];
    }
    for (std::size_t w = 0; w < ways.size(); ++w) {
      std::printf("| %s (rep %d) | %.2f | %.2fx |\n", ways[w].name.c_str(), r, per_entry[w],
                  command > 0 ? per_entry[w] / command : 0.0);
    }
  }
  for (int p = 0; p < bench::kPartitions; ++p) {
    const std::string stream = bench::stream_of(p);
    (void)redis.execute(
        {"DEL", stream, stream + ":__lease__", stream + ":__sink__:g", stream + ":__effects__:g"});
  }
  return 0;
}
