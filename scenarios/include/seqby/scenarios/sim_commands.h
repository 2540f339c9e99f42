// The bodies of `seqby sim`, `seqby replay` and `seqby check` (DESIGN.md section 8), as library
// functions the command-line front end calls after parsing its options. Each prints its report on
// `out`, problems with the input on `err`, and returns the exit status: 0 every property held,
// 1 a property failed (the failing seed, the saved case path and a one-line replay command are
// printed), 2 bad usage or bad input (a message naming the file, field or value).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "seqby/core/result.h"

namespace seqby::scenarios {

inline constexpr int kExitHeld = 0;
inline constexpr int kExitPropertyFailed = 1;
inline constexpr int kExitBadInput = 2;

// The directory failing cases go to when --save-failures is not given.
inline constexpr const char* kDefaultFailuresDir = "seqby-failures";

struct SeedRange {
  std::uint64_t first = 1;
  std::uint64_t last = 1;  // inclusive
};
// Parses "A..B" (inclusive, A <= B, decimal) or a single "N". Errc::invalid naming the value.
Result<SeedRange> parse_seed_range(const std::string& text);

struct SimArgs {
  std::optional<std::uint64_t> seed;  // --seed N
  std::string seeds;                  // --seeds A..B ("" when not given)
  std::string scenario;               // --scenario FILE|NAME ("" : generated default case)
  std::string variant = "correct";
  bool process_manager = false;  // generated cases are process-manager cases
  unsigned jobs = 1;
  bool json = false;
  std::string save_failures_dir;  // "" : kDefaultFailuresDir, only written on failure
  bool check_determinism = false;
  bool progress = false;   // print progress on `err` (the caller knows if it is a tty)
  std::string junit_path;  // --junit FILE: a JUnit XML report, one test case per seed
  std::string shard;       // --shard I/N: run only the I-th of N equal parts of the seed range
  // --key-layout flat|cluster and --cluster-shards N (RunOptions::key_layout, cluster_shards);
  // unset: one flat server, or a --scenario case file's own server (case_io.h CaseServer).
  std::optional<std::string> key_layout;
  std::optional<std::uint32_t> cluster_shards;
};

// The I-th (1-based) of N contiguous, near-equal parts of `range`: shards 1..N of one range are
// disjoint and together the whole range, whatever machine runs each. Errc::invalid naming the
// value when it is not I/N with 1 <= I <= N, or when N exceeds the seeds in the range.
Result<SeedRange> shard_of(const SeedRange& range, const std::string& shard);

int sim_main(const SimArgs& args, std::ostream& out, std::ostream& err);
// `seqby replay`'s arguments: the case file, where to write its history ("": nowhere), and the
// server to replay it on when not the one the case file names (case_io.h CaseServer): a case
// that failed on a simulated cluster tried on one flat server, say. Unset: the case file's.
struct ReplayArgs {
  std::string case_path;
  std::string history_out_path;
  std::optional<std::string> key_layout;        // --key-layout flat|cluster
  std::optional<std::uint32_t> cluster_shards;  // --cluster-shards N
};
// Re-runs a saved case; writes its history as JSON lines to `history_out_path` when not empty.
int replay_main(const ReplayArgs& args, std::ostream& out, std::ostream& err);
// Judges a history file; `json` prints the checker's JSON report instead of text.
int check_main(const std::string& history_path, bool json, std::ostream& out, std::ostream& err);

// Judges the decision journal in Redis (seqby/hiredis/journal.h) of `categories` and, with a
// non-empty `group`, of that group alone (and of the process manager named `group`, if it is one);
// writes the merged journal as JSON lines to `save_path` when not empty.
struct CheckRedisArgs {
  std::string url;
  std::vector<std::string> categories;
  std::string group;
  std::string save_path;
  bool json = false;
  bool cluster = false;  // `url` is one node of a Redis Cluster: every master's journals are read
};
int check_redis_main(const CheckRedisArgs& args, std::ostream& out, std::ostream& err);
// `seqby timeline --redis URL --category C [--group G] [-o FILE.html]`: the same journal drawn as
// `seqby timeline` draws a history file (default page journal-C.html in the working directory).
// 0 written, 2 bad URL, unreadable or empty journal, or a page that cannot be written.
int timeline_redis_main(const CheckRedisArgs& args, const std::string& out_path, std::ostream& out,
                        std::ostream& err);

}  // namespace seqby::scenarios
