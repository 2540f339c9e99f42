#include "seqby/scenarios/sim_commands.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/journal.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/catalog.h"
#include "seqby/scenarios/junit.h"
#include "seqby/scenarios/run.h"
#include "seqby/scenarios/timeline.h"
#include "seqby/testing/variant.h"

namespace seqby::scenarios {
namespace {

bool parse_u64(const std::string& text, std::uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t v = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return false;
    const std::uint64_t digit = static_cast<std::uint64_t>(ch - '0');
    if (v > (~0ull - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool looks_like_file(const std::string& s) {
  return s.find('/') != std::string::npos || s.find('.') != std::string::npos ||
         std::filesystem::exists(s);
}

// `seqby sim --scenario NAME` for an engine scenario: its assertions, once per seed.
int run_named_scenario(const Scenario& s, const SeedRange& range, std::ostream& out) {
  std::uint64_t failed = 0;
  for (std::uint64_t seed = range.first;; ++seed) {
    ScenarioContext ctx{out, "", seed, ""};
    out << "scenario " << s.name << " seed " << seed << "\n";
    if (!s.run_sim(ctx).passed()) {
      ++failed;
      out << "FAILED: scenario " << s.name << " seed " << seed << "; replay: seqby sim --scenario "
          << s.name << " --seed " << seed << "\n";
    }
    if (seed == range.last) break;
  }
  return failed == 0 ? kExitHeld : kExitPropertyFailed;
}

}  // namespace

Result<SeedRange> parse_seed_range(const std::string& text) {
  SeedRange r;
  const auto dots = text.find("..");
  if (dots == std::string::npos) {
    if (!parse_u64(text, &r.first)) {
      return make_error(Errc::invalid, "seed '" + text + "': expected a decimal number");
    }
    r.last = r.first;
    return r;
  }
  if (!parse_u64(text.substr(0, dots), &r.first) || !parse_u64(text.substr(dots + 2), &r.last)) {
    return make_error(Errc::invalid,
                      "--seeds '" + text + "': expected A..B with decimal numbers A <= B");
  }
  if (r.first > r.last) {
    return make_error(Errc::invalid, "--seeds '" + text + "': the range is empty (A > B)");
  }
  return r;
}

Result<SeedRange> shard_of(const SeedRange& range, const std::string& shard) {
  const auto slash = shard.find('/');
  std::uint64_t index = 0;
  std::uint64_t count = 0;
  if (slash == std::string::npos || !parse_u64(shard.substr(0, slash), &index) ||
      !parse_u64(shard.substr(slash + 1), &count) || index < 1 || index > count) {
    return make_error(Errc::invalid,
                      "--shard '" + shard + "': expected I/N with decimal numbers 1 <= I <= N");
  }
  const std::uint64_t seeds = range.last - range.first + 1;
  if (count > seeds) {
    return make_error(Errc::invalid, "--shard '" + shard + "': " + std::to_string(count) +
                                         " shards of " + std::to_string(seeds) +
                                         " seeds would leave some empty");
  }
  // Floor boundaries: shard I is [first + (I-1)*seeds/N, first + I*seeds/N); 128-bit products
  // so that a range near 2^64 does not overflow.
  const auto boundary = [&](std::uint64_t i) {
    return range.first +
           static_cast<std::uint64_t>(static_cast<unsigned __int128>(i) * seeds / count);
  };
  return SeedRange{boundary(index - 1), boundary(index) - 1};
}

namespace {

// "\r12/300 seeds, 1 failed, ETA 40 s" on a terminal, rewritten in place after every seed.
std::function<void(const SeedOutcome&)> progress_line(std::ostream& err) {
  struct State {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    std::uint64_t failed = 0;
  };
  auto state = std::make_shared<State>();
  return [&err, state](const SeedOutcome& s) {
    state->failed += s.passed ? 0 : 1;
    const double elapsed_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - state->start).count();
    const double eta_s =
        elapsed_s / static_cast<double>(s.done) * static_cast<double>(s.total - s.done);
    char line[160];
    std::snprintf(line, sizeof line, "\r%llu/%llu seeds, %llu failed, ETA %.0f s   ",
                  static_cast<unsigned long long>(s.done), static_cast<unsigned long long>(s.total),
                  static_cast<unsigned long long>(state->failed), eta_s);
    err << line << std::flush;
    if (s.done == s.total) err << "\n";
  };
}

}  // namespace

namespace {

// The layout --key-layout names (nullopt when not given); false after saying on `err` that it
// names none.
bool layout_flag(const std::string& command, const std::optional<std::string>& key_layout,
                 std::optional<KeyLayout>* layout, std::ostream& err) {
  if (!key_layout.has_value()) return true;
  *layout = parse_key_layout(*key_layout);
  if (layout->has_value()) return true;
  err << "seqby " << command << ": --key-layout '" << *key_layout
      << "': unknown layout (known: flat, cluster)\n";
  return false;
}

// The simulated server of a run, into `run`: the flags where given (--key-layout and
// --cluster-shards as `seqby <command>` takes them), else `recorded` (a case file's own, or one
// flat server). --key-layout alone naming another layout than `recorded`'s means one server of
// it. False after saying on `err` what was wrong.
bool world_of(const std::string& command, const std::optional<std::string>& key_layout,
              const std::optional<std::uint32_t>& cluster_shards, const CaseServer& recorded,
              RunOptions* run, std::ostream& err) {
  CaseServer server = recorded;
  std::optional<KeyLayout> layout;
  if (!layout_flag(command, key_layout, &layout, err)) return false;
  if (layout.has_value()) {
    if (*layout != recorded.key_layout) server.cluster_shards = 0;
    server.key_layout = *layout;
  }
  if (cluster_shards.has_value()) server.cluster_shards = *cluster_shards;
  if (std::string problem = server_problem(server); !problem.empty()) {
    err << "seqby " << command << ": --key-layout " << key_layout_name(server.key_layout)
        << " --cluster-shards " << server.cluster_shards << ": " << problem << "\n";
    return false;
  }
  run->key_layout = server.key_layout;
  run->cluster_shards = server.cluster_shards;
  return true;
}

CaseServer server_of(const RunOptions& run) {
  return CaseServer{run.key_layout, run.cluster_shards};
}

// The flags that name `server` to `seqby replay` or `seqby sim`, the layout always.
std::string server_flags(const CaseServer& server) {
  std::string out = std::string("--key-layout ") + key_layout_name(server.key_layout);
  if (server.cluster_shards > 0)
    out += " --cluster-shards " + std::to_string(server.cluster_shards);
  return out;
}

}  // namespace

int sim_main(const SimArgs& args, std::ostream& out, std::ostream& err) {
  SeedRange range;
  const bool seeds_given = args.seed.has_value() || !args.seeds.empty();
  if (args.seed.has_value() && !args.seeds.empty()) {
    err << "seqby sim: --seed and --seeds exclude each other\n";
    return kExitBadInput;
  }
  if (args.seed.has_value()) range = SeedRange{*args.seed, *args.seed};
  if (!args.seeds.empty()) {
    Result<SeedRange> parsed = parse_seed_range(args.seeds);
    if (!parsed.ok()) {
      err << "seqby sim: " << parsed.error().message << "\n";
      return kExitBadInput;
    }
    range = parsed.value();
  }
  if (!args.shard.empty()) {
    Result<SeedRange> part = shard_of(range, args.shard);
    if (!part.ok()) {
      err << "seqby sim: " << part.error().message << "\n";
      return kExitBadInput;
    }
    range = part.value();
  }
  if (!args.junit_path.empty()) {
    const Status writable = check_junit_path(args.junit_path);
    if (!writable.ok()) {
      err << "seqby sim: " << writable.error().message << "\n";
      return kExitBadInput;
    }
  }
  const std::optional<testing::Variant> variant = testing::parse_variant(args.variant);
  if (!variant.has_value()) {
    err << "seqby sim: --variant '" << args.variant
        << "': unknown variant (known: " << join(known_variants()) << ")\n";
    return kExitBadInput;
  }
  if (args.jobs == 0) {
    err << "seqby sim: --jobs 0: expected at least 1\n";
    return kExitBadInput;
  }

  CampaignOptions options;
  options.seed_first = range.first;
  options.seed_last = range.last;
  options.jobs = args.jobs;
  options.check_determinism = args.check_determinism;
  // --scenario: a named scenario, else a case file, which brings its own server (read with the
  // file, below).
  const bool scenario_given = !args.scenario.empty() && args.scenario != "default";
  const Scenario* named = scenario_given ? find_scenario(args.scenario) : nullptr;
  const bool case_file = scenario_given && named == nullptr && looks_like_file(args.scenario);
  if (!case_file &&
      !world_of("sim", args.key_layout, args.cluster_shards, CaseServer{}, &options.run, err)) {
    return kExitBadInput;
  }
  if (args.key_layout.has_value()) options.rerun_args += " --key-layout " + *args.key_layout;
  if (args.cluster_shards.has_value()) {
    options.rerun_args += " --cluster-shards " + std::to_string(*args.cluster_shards);
  }
  if (args.process_manager && scenario_given) {
    err << "seqby sim: --process-manager shapes generated cases; a --scenario '" << args.scenario
        << "' brings its own\n";
    return kExitBadInput;
  }
  if (args.process_manager) {
    options.rerun_args += " --process-manager";
    options.make_case = [](std::uint64_t seed) {
      return sim::generate_case(seed, sim::process_manager_template());
    };
  }
  if (scenario_given) {
    if (named != nullptr) return run_named_scenario(*named, range, out);
    if (!case_file) {
      std::vector<std::string> names{"default"};
      for (const auto& s : all_scenarios()) names.push_back(s.name);
      err << "seqby sim: --scenario '" << args.scenario
          << "': neither a case file nor a scenario name (known: " << join(names) << ")\n";
      return kExitBadInput;
    }
    CaseServer recorded;
    Result<sim::SimCase> loaded = load_case(args.scenario, &recorded);
    if (!loaded.ok()) {
      err << "seqby sim: " << loaded.error().message << "\n";
      return kExitBadInput;
    }
    // The case's server, but for the flags given (the rerun line carries those and the file).
    if (!world_of("sim", args.key_layout, args.cluster_shards, recorded, &options.run, err)) {
      return kExitBadInput;
    }
    sim::SimCase base = std::move(loaded).value();
    options.rerun_args += " --scenario " + args.scenario;
    if (!seeds_given) options.seed_first = options.seed_last = base.seed;
    options.make_case = [base](std::uint64_t seed) {
      sim::SimCase c = base;
      c.seed = seed;
      return c;
    };
  }
  if (*variant != testing::Variant::correct) {  // a known-broken variant (seqby/testing/variant.h)
    options.rerun_args += " --variant " + args.variant;
    options.make_case = [make = options.make_case, variant = *variant](std::uint64_t seed) {
      sim::SimCase c = make ? make(seed) : sim::generate_case(seed);
      c.variant = variant;
      return c;
    };
  }
  options.save_failures_dir =
      args.save_failures_dir.empty() ? kDefaultFailuresDir : args.save_failures_dir;
  // Failing cases need the directory; one made here is removed again when nothing failed.
  const std::string dir = options.save_failures_dir;
  std::error_code ec;
  const bool dir_existed = std::filesystem::is_directory(dir, ec);
  if (!dir_existed) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      err << "seqby sim: --save-failures '" << dir << "': " << ec.message() << "\n";
      return kExitBadInput;
    }
  }
  if (args.progress) options.progress = progress_line(err);
  if (!args.shard.empty()) {
    (args.json ? err : out) << "shard " << args.shard << ": seeds " << range.first << ".."
                            << range.last << "\n";
  }
  const CampaignResult result = run_campaign(options);
  if (!dir_existed && result.failed == 0) std::filesystem::remove(dir, ec);
  out << (args.json ? render_campaign_json(result) : render_campaign_text(result));
  if (!args.junit_path.empty()) {
    const Status written =
        write_junit(args.junit_path, campaign_junit(result, "seqby sim" + options.rerun_args));
    if (!written.ok()) {
      err << "seqby sim: " << written.error().message << "\n";
      return kExitBadInput;
    }
  }
  if (args.json && result.failed > 0) {
    for (std::uint64_t seed : result.failed_seeds) {
      auto saved = result.saved_cases.find(seed);
      err << "seqby sim: seed " << seed << " failed"
          << (saved != result.saved_cases.end()
                  ? "; case saved to " + saved->second + "; replay: seqby replay " + saved->second
                  : "; rerun: seqby sim --seed " + std::to_string(seed))
          << "\n";
      auto page = result.saved_timelines.find(seed);
      if (page != result.saved_timelines.end()) err << "timeline: " << page->second << "\n";
    }
  }
  return result.failed == 0 ? kExitHeld : kExitPropertyFailed;
}

int replay_main(const ReplayArgs& args, std::ostream& out, std::ostream& err) {
  const std::string& case_path = args.case_path;
  const std::string& history_out_path = args.history_out_path;
  std::optional<KeyLayout> layout;  // a misspelt layout is refused before the file is read
  if (!layout_flag("replay", args.key_layout, &layout, err)) return kExitBadInput;
  CaseServer recorded;
  Result<sim::SimCase> loaded = load_case(case_path, &recorded);
  if (!loaded.ok()) {
    err << "seqby replay: " << loaded.error().message << "\n";
    return kExitBadInput;
  }
  RunOptions run;
  if (!world_of("replay", args.key_layout, args.cluster_shards, recorded, &run, err)) {
    return kExitBadInput;
  }
  // Flags that move the case to another server make another run: said, and kept in the
  // replay line (which needs none for the case's own server).
  const bool elsewhere = server_of(run) != recorded;
  if (elsewhere) {
    err << "seqby replay: " << case_path << " ran on '" << server_flags(recorded)
        << "'; replaying it on '" << server_flags(server_of(run)) << "' as the flags ask\n";
  }
  const RunResult r = run_case(loaded.value(), run);
  out << r.summary;
  if (!history_out_path.empty()) {
    std::ofstream file(history_out_path, std::ios::binary | std::ios::trunc);
    if (!file) {
      err << "seqby replay: --history '" << history_out_path << "': cannot write\n";
      return kExitBadInput;
    }
    properties::write_history(file, r.history);
  }
  if (!r.passed) {
    out << "replay: seqby replay " << case_path
        << (elsewhere ? " " + server_flags(server_of(run)) : "") << "\n";
    const std::string page = timeline_path_for(case_path);
    const std::string title = std::filesystem::path(case_path).filename().string();
    if (Status s = write_timeline(r.history, r.report, page, title); s.ok()) {
      out << "timeline: " << page << "\n";
    } else {
      err << "seqby replay: " << s.error().message << "\n";
    }
  }
  return r.passed ? kExitHeld : kExitPropertyFailed;
}

namespace {
// The checker's report as `seqby check` prints it.
std::string json_text(bool json, const properties::CheckReport& report,
                      const std::vector<HistoryRecord>& history) {
  return json ? properties::render_report_json(report) + "\n"
              : properties::render_report_text(report, &history);
}
}  // namespace

int check_main(const std::string& history_path, bool json, std::ostream& out, std::ostream& err) {
  Result<std::vector<HistoryRecord>> history = properties::read_history_file(history_path);
  if (!history.ok()) {
    err << "seqby check: " << history.error().message << "\n";
    return kExitBadInput;
  }
  const properties::CheckReport report = properties::check_history(history.value(), {});
  out << json_text(json, report, history.value());
  return report.ok() ? kExitHeld : kExitPropertyFailed;
}

namespace {

// The merged decision journal `args` names, read from Redis; nullopt (said on `err` as
// `command`) when the URL is bad, the journal cannot be read or it holds no record.
std::optional<std::vector<HistoryRecord>> read_journal_of(const CheckRedisArgs& args,
                                                          const char* command, std::ostream& err) {
  Result<redis::RedisConfig> config = redis::parse_redis_url(args.url);
  if (!config.ok()) {
    err << command << ": --redis: " << config.error().message << "\n";
    return std::nullopt;
  }
  redis::JournalScope scope;
  scope.categories = args.categories;
  scope.group = args.group;
  if (!args.group.empty()) scope.process_managers.push_back(args.group);
  redis::BlockingRedis redis(config.value());
  Result<std::vector<HistoryRecord>> history =
      args.cluster ? redis::read_cluster_journal(redis, scope) : redis::read_journal(redis, scope);
  if (!history.ok()) {
    err << command << ": reading the journal from " << redis::redacted_url(config.value()) << ": "
        << history.error().message << "\n";
    return std::nullopt;
  }
  if (history.value().empty()) {
    err << command << ": no journal records for category " << args.categories.front()
        << (args.group.empty() ? "" : " group " + args.group) << " in "
        << redis::redacted_url(config.value())
        << " (is the engine running with --journal-maxlen?)\n";
    return std::nullopt;
  }
  return std::move(history).value();
}

}  // namespace

int check_redis_main(const CheckRedisArgs& args, std::ostream& out, std::ostream& err) {
  std::optional<std::vector<HistoryRecord>> history = read_journal_of(args, "seqby check", err);
  if (!history.has_value()) return kExitBadInput;
  if (!args.save_path.empty()) {
    std::ofstream file(args.save_path);
    properties::write_history(file, history.value());
    file.close();
    if (!file) {
      err << "seqby check: --save: cannot write " << args.save_path << "\n";
      return kExitBadInput;
    }
  }
  const properties::CheckReport report = properties::check_history(history.value(), {});
  out << json_text(args.json, report, history.value());
  return report.ok() ? kExitHeld : kExitPropertyFailed;
}

int timeline_redis_main(const CheckRedisArgs& args, const std::string& out_path, std::ostream& out,
                        std::ostream& err) {
  std::optional<std::vector<HistoryRecord>> history = read_journal_of(args, "seqby timeline", err);
  if (!history.has_value()) return kExitBadInput;
  const std::string path =
      out_path.empty() ? "journal-" + args.categories.front() + ".html" : out_path;
  const properties::CheckReport report = properties::check_history(history.value(), {});
  std::string title = "journal of";
  for (const std::string& category : args.categories) title += " " + category;
  if (!args.group.empty()) title += " (group " + args.group + ")";
  if (Status s = write_timeline(history.value(), report, path, title); !s.ok()) {
    err << "seqby timeline: -o: " << s.error().message << "\n";
    return kExitBadInput;
  }
  out << "timeline: " << path << "\n";
  return kExitHeld;
}

}  // namespace seqby::scenarios
