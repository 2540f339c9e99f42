// `seqby chaos`: option checks, the campaign over seeds (one after another: every run owns real
// processes and a server), the summary in the shape of `seqby sim`'s, and saved failures.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "seqby/hiredis/redis_url.h"
#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/chaos.h"
#include "seqby/scenarios/junit.h"
#include "seqby/scenarios/sim_commands.h"
#include "seqby/scenarios/timeline.h"
#include "seqby/testing/variant.h"

namespace seqby::scenarios {
namespace {

constexpr std::uint64_t kDurationSMax = 24 * 3600;
constexpr std::uint32_t kWorkersMax = 32;
constexpr std::uint32_t kKeysMax = 10000;

CampaignViolation as_campaign_violation(const ChaosViolation& v) {
  return CampaignViolation{v.property, v.key, v.seed, v.explanation};
}

struct Campaign {
  std::uint64_t runs = 0;
  std::uint64_t failed = 0;
  std::vector<std::uint64_t> failed_seeds;
  std::uint64_t events_published = 0;
  std::uint64_t events_committed = 0;
  std::uint64_t run_ms = 0;
  std::uint64_t wall_ms = 0;
  NemesisCounters fired;
  std::uint64_t worker_starts = 0;
  std::uint64_t worker_restarts = 0;
  std::vector<std::string> unexpected_exits;  // "seed N: owner exited ..."
  std::uint64_t liveness_ms_max = 0;
  std::vector<ChaosViolation> violations;
  std::vector<ChaosViolation> advisory_violations;
  std::map<std::string, std::uint64_t> properties_checked;  // judged (counts) runs
  std::map<std::string, std::uint64_t> properties_advisory;
  std::map<std::uint64_t, std::string> saved;      // seed -> saved history path
  std::map<std::uint64_t, std::string> timelines;  // seed -> its timeline page
  std::string history_source;
  std::string history_sha256;  // one seed
  std::string rerun_args;
  std::string unavailable;  // nemeses the campaign could not run, and why
  std::array<bool, kNemesisCount> enabled{};
  std::vector<std::string> lost_publishes;      // "seed N: category:key seq S"
  std::vector<std::string> explained_findings;  // "seed N: ..." (ChaosRunResult's)
  bool durable = false;                         // --wait-replicas: a lost publish is a violation
};

std::string joined(const std::vector<std::string>& names, const char* sep = ", ") {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : sep) + n;
  return out;
}

std::string save_failure(const std::string& dir, const ChaosRunResult& r) {
  const std::string base = dir + "/chaos-seed-" + std::to_string(r.seed);
  {
    std::ofstream history(base + ".jsonl", std::ios::binary | std::ios::trunc);
    properties::write_history(history, r.history.records);
  }
  {
    std::ofstream params(base + ".json", std::ios::binary | std::ios::trunc);
    params << r.params_json;
  }
  if (!r.logs.empty()) {
    std::ofstream logs(base + ".log", std::ios::binary | std::ios::trunc);
    logs << r.logs;
  }
  return base + ".jsonl";
}

// The timeline page beside a saved failure (X.jsonl -> X.html), judged as `seqby timeline`
// judges; "" when it could not be written (said on `err`: the failure itself stays saved).
std::string save_failure_timeline(const std::string& history_path, const ChaosRunResult& r,
                                  std::ostream& err) {
  const std::string page = timeline_path_for(history_path);
  const properties::CheckReport report = properties::check_history(r.history.records, {});
  const Status written =
      write_timeline(r.history.records, report, page, "seqby chaos seed " + std::to_string(r.seed));
  if (written.ok()) return page;
  err << "seqby chaos: seed " << r.seed << ": timeline: " << written.error().message << "\n";
  return "";
}

std::string render_text(const Campaign& c) {
  std::string out;
  out += std::string(c.failed == 0 ? "ok" : "FAILED") + ": " + std::to_string(c.runs) + " runs, " +
         std::to_string(c.failed) + " failed\n";
  out += "events: published " + std::to_string(c.events_published) + ", committed " +
         std::to_string(c.events_committed) + "\n";
  std::string fired;
  std::string never;
  for (Nemesis kind : nemeses_by_name()) {
    const std::uint64_t n = c.fired.count(kind);
    if (n > 0) {
      fired += std::string(fired.empty() ? "" : " ") + nemesis_name(kind) + "=" + std::to_string(n);
    } else if (c.enabled[static_cast<std::size_t>(kind)]) {
      never += std::string(never.empty() ? "" : " ") + nemesis_name(kind);
    }
  }
  out += "nemeses fired: " + (fired.empty() ? std::string("none") : fired) + "\n";
  if (!never.empty()) out += "nemeses never fired: " + never + "\n";
  if (!c.unavailable.empty()) out += "nemeses not available: " + c.unavailable + "\n";
  std::string checked;
  for (const auto& [name, runs] : c.properties_checked) {
    checked += std::string(checked.empty() ? "" : " ") + name + "(" + std::to_string(runs) + ")";
  }
  out += "properties checked (runs): " + (checked.empty() ? std::string("none") : checked) + "\n";
  if (!c.properties_advisory.empty()) {
    std::string advisory;
    for (const auto& [name, runs] : c.properties_advisory) {
      advisory +=
          std::string(advisory.empty() ? "" : " ") + name + "(" + std::to_string(runs) + ")";
    }
    out += "history checker (advisory: " + c.history_source + "): " + advisory + ", " +
           std::to_string(c.advisory_violations.size()) + " findings\n";
  }
  out += "workers: " + std::to_string(c.worker_starts) + " started, " +
         std::to_string(c.worker_restarts) + " restarted, " +
         std::to_string(c.unexpected_exits.size()) + " exited unexpectedly\n";
  for (const std::string& e : c.unexpected_exits) out += "worker exit: " + e + "\n";
  if (!c.lost_publishes.empty()) {
    out += "publishes lost in failovers: " + std::to_string(c.lost_publishes.size()) +
           (c.durable ? ""
                      : " (explained: without --wait-replicas a promoted replica has a "
                        "prefix of its master's writes)") +
           "; checker findings behind them (explained): " +
           std::to_string(c.explained_findings.size()) + "\n";
    constexpr std::size_t kLostLinesMax = 10;
    for (std::size_t i = 0; i < c.lost_publishes.size() && i < kLostLinesMax; ++i) {
      out += "lost: " + c.lost_publishes[i] + "\n";
    }
    if (c.lost_publishes.size() > kLostLinesMax) {
      out += "lost: (+" + std::to_string(c.lost_publishes.size() - kLostLinesMax) +
             " more; every one in --json)\n";
    }
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "time: wall %.3f s, runs %.1f s, liveness reached within %.3f s at most\n",
                static_cast<double>(c.wall_ms) / 1000.0, static_cast<double>(c.run_ms) / 1000.0,
                static_cast<double>(c.liveness_ms_max) / 1000.0);
  out += line;
  if (!c.history_sha256.empty()) out += "history_sha256: " + c.history_sha256 + "\n";
  // The first advisory finding of each seed, property and key (a lost record makes a cascade
  // on its key), with how many more that key had; ten lines at most.
  constexpr std::size_t kAdvisoryLinesMax = 10;
  std::map<std::tuple<std::uint64_t, std::string, std::string>, std::size_t> per_key;
  std::vector<const ChaosViolation*> firsts;
  for (const ChaosViolation& v : c.advisory_violations) {
    if (per_key[{v.seed, v.property, v.key}]++ == 0) firsts.push_back(&v);
  }
  for (std::size_t i = 0; i < firsts.size() && i < kAdvisoryLinesMax; ++i) {
    const ChaosViolation& v = *firsts[i];
    const std::size_t more = per_key[{v.seed, v.property, v.key}] - 1;
    out += "advisory: seed " + std::to_string(v.seed) + " " + v.property +
           (v.key.empty() ? "" : " key " + v.key) + ": " + v.explanation +
           (more > 0 ? " (+" + std::to_string(more) + " more on this key)" : "") + "\n";
  }
  for (const auto& v : c.violations) out += render_violation(as_campaign_violation(v));
  for (std::uint64_t seed : c.failed_seeds) {
    auto saved = c.saved.find(seed);
    if (saved != c.saved.end()) out += "saved: " + saved->second + "\n";
    if (auto page = c.timelines.find(seed); page != c.timelines.end()) {
      out += "timeline: " + page->second + "\n";
    }
    out += "rerun:  seqby chaos --seed " + std::to_string(seed) + c.rerun_args + "\n";
  }
  return out;
}

std::string render_json(const Campaign& c) {
  nlohmann::ordered_json j;
  j["runs"] = c.runs;
  j["failed"] = c.failed;
  j["failed_seeds"] = c.failed_seeds;
  j["events_published"] = c.events_published;
  j["events_committed"] = c.events_committed;
  j["sim_ms"] = 0;  // nothing is simulated: real time is run_ms
  j["wall_ms"] = c.wall_ms;
  nlohmann::ordered_json faults = nlohmann::ordered_json::object();
  for (Nemesis kind : nemeses_by_name()) {
    if (c.enabled[static_cast<std::size_t>(kind)] || c.fired.count(kind) > 0) {
      faults[nemesis_name(kind)] = c.fired.count(kind);
    }
  }
  j["faults"] = faults;
  const auto violations_json = [](const std::vector<ChaosViolation>& list) {
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const auto& v : list) {
      items.push_back({{"property", v.property},
                       {"key", v.key},
                       {"seed", v.seed},
                       {"explanation", v.explanation}});
    }
    return items;
  };
  j["violations"] = violations_json(c.violations);
  if (c.runs == 1) j["history_sha256"] = c.history_sha256;
  j["run_ms"] = c.run_ms;
  j["properties_checked"] = c.properties_checked;
  j["properties_advisory"] = c.properties_advisory;
  j["advisory_violations"] = violations_json(c.advisory_violations);
  j["nemeses_unavailable"] = c.unavailable;
  j["worker_starts"] = c.worker_starts;
  j["worker_restarts"] = c.worker_restarts;
  j["unexpected_exits"] = c.unexpected_exits;
  j["liveness_ms_max"] = c.liveness_ms_max;
  j["lost_publishes"] = c.lost_publishes;
  j["explained_findings"] = c.explained_findings;
  return j.dump() + "\n";
}

}  // namespace

int chaos_main(const ChaosArgs& args, std::ostream& out, std::ostream& err) {
  const auto bad = [&err](const std::string& text) {
    err << "seqby chaos: " << text << "\n";
    return kExitBadInput;
  };
  SeedRange range{1, 1};
  if (args.seed.has_value() && !args.seeds.empty())
    return bad("--seed and --seeds exclude each other");
  if (args.seed.has_value()) range = SeedRange{*args.seed, *args.seed};
  if (!args.seeds.empty()) {
    Result<SeedRange> parsed = parse_seed_range(args.seeds);
    if (!parsed.ok()) return bad(parsed.error().message);
    range = parsed.value();
  }
  if (args.duration_s == 0 || args.duration_s > kDurationSMax) {
    return bad("--duration-s " + std::to_string(args.duration_s) + ": expected 1.." +
               std::to_string(kDurationSMax));
  }
  if (args.workers == 0 || args.workers > kWorkersMax) {
    return bad("--workers " + std::to_string(args.workers) + ": expected 1.." +
               std::to_string(kWorkersMax));
  }
  if (args.keys == 0 || args.keys > kKeysMax) {
    return bad("--keys " + std::to_string(args.keys) + ": expected 1.." + std::to_string(kKeysMax));
  }
  if (!args.redis_url.empty()) {
    Result<redis::RedisConfig> config = redis::parse_redis_url(args.redis_url);
    if (!config.ok()) return bad("--redis: " + config.error().message);
    const std::string& host = config.value().host;
    if (host != "localhost" && host.find_first_not_of("0123456789.") != std::string::npos) {
      return bad("--redis: host '" + host +
                 "': the fault proxies need a numeric IPv4 address (or localhost)");
    }
  }
  if (args.cluster && !args.redis_url.empty()) {
    return bad(
        "--cluster and --redis exclude each other: chaos runs on a cluster it starts itself (its "
        "failover nemesis kills and restarts nodes by pid)");
  }
  if (args.wait_replicas > 0 && !args.cluster) {
    return bad("--wait-replicas " + std::to_string(args.wait_replicas) +
               ": the durability option is for a cluster's failovers (add --cluster)");
  }
  if (args.wait_replicas > 1) {
    return bad("--wait-replicas " + std::to_string(args.wait_replicas) +
               ": the cluster chaos starts has 1 replica per master (expected 0 or 1)");
  }
  if (args.step_batch_max == 0) {
    return bad("--step-batch-max 0: a script carries at least one step (1: a script per step)");
  }
  if (!args.variant.empty() && args.variant != "correct" && !testing::parse_variant(args.variant)) {
    return bad("--variant '" + args.variant +
               "': unknown variant (known: " + joined(known_variants()) + ")");
  }

  ChaosParams params;
  params.duration_ms = args.duration_s * 1000;
  params.workers = args.workers;
  params.keys = args.keys;
  params.process_manager = args.process_manager;
  params.variant = args.variant == "correct" ? "" : args.variant;
  params.wait_replicas = args.wait_replicas;
  params.step_batch_max = args.step_batch_max;
  Campaign c;
  c.durable = args.wait_replicas > 0;
  if (args.nemesis == "all") {
    std::vector<std::string> not_here;
    for (Nemesis kind : nemeses_by_name()) {
      const bool available = *nemesis_unavailable(kind, args.cluster) == '\0';
      params.nemeses[static_cast<std::size_t>(kind)] = available;
      // A cluster's own nemeses are not missed on one server; one server's are on a cluster.
      if (!available && args.cluster) not_here.push_back(nemesis_name(kind));
    }
    if (!not_here.empty()) c.unavailable = joined(not_here) + " (one server's nemeses)";
    if (!args.redis_url.empty()) {
      params.nemeses[static_cast<std::size_t>(Nemesis::server_restart)] = false;
      c.unavailable = "server_restart (with --redis: chaos restarts only a server it started)";
    }
  } else {
    std::string rest = args.nemesis;
    while (true) {
      const auto comma = rest.find(',');
      const std::string name = rest.substr(0, comma);
      Nemesis kind;
      if (!parse_nemesis(name, &kind)) {
        std::vector<std::string> known;
        for (Nemesis k : nemeses_by_name()) known.push_back(nemesis_name(k));
        return bad("--nemesis '" + name + "': unknown nemesis (known: " + joined(known) +
                   ", or all)");
      }
      if (const char* why = nemesis_unavailable(kind, args.cluster); *why != '\0') {
        return bad("--nemesis " + name + ": not available " +
                   (args.cluster ? "with --cluster" : "without --cluster") + ": " + why);
      }
      if (kind == Nemesis::server_restart && !args.redis_url.empty()) {
        return bad(
            "--nemesis server_restart: not available with --redis (chaos restarts only a "
            "server it started itself; leave out --redis)");
      }
      params.nemeses[static_cast<std::size_t>(kind)] = true;
      if (comma == std::string::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  if (args.seqby_binary.empty()) return bad("cannot find the seqby binary to run workers with");
  if (!args.junit_path.empty()) {
    const Status writable = check_junit_path(args.junit_path);
    if (!writable.ok()) return bad(writable.error().message);
  }

  c.rerun_args = " --duration-s " + std::to_string(args.duration_s) + " --workers " +
                 std::to_string(args.workers) + " --keys " + std::to_string(args.keys);
  if (args.nemesis != "all") c.rerun_args += " --nemesis " + args.nemesis;
  if (!params.variant.empty()) c.rerun_args += " --variant " + params.variant;
  if (args.process_manager) c.rerun_args += " --process-manager";
  if (args.cluster) c.rerun_args += " --cluster";
  if (args.wait_replicas > 0)
    c.rerun_args += " --wait-replicas " + std::to_string(args.wait_replicas);
  if (args.step_batch_max > 1)
    c.rerun_args += " --step-batch-max " + std::to_string(args.step_batch_max);
  if (!args.redis_url.empty()) {  // a password is never echoed (redis_url.h): shown as ***
    c.rerun_args +=
        " --redis " + redis::redacted_url(redis::parse_redis_url(args.redis_url).value());
  }

  const std::string dir =
      args.save_failures_dir.empty() ? kDefaultFailuresDir : args.save_failures_dir;
  c.enabled = params.nemeses;
  ChaosServerChoice server{args.redis_url, args.cluster};
  const auto wall_start = std::chrono::steady_clock::now();
  const std::uint64_t total = range.last - range.first + 1;
  JunitSuite junit;
  junit.name = "seqby chaos" + c.rerun_args;
  junit.classname = "seqby.chaos";
  for (std::uint64_t seed = range.first;; ++seed) {
    const auto seed_start = std::chrono::steady_clock::now();
    ChaosRunResult r = run_chaos_seed(params, server, args.seqby_binary, seed, err);
    if (r.setup_failed) {
      err << "seqby chaos: seed " << seed << ": " << r.setup_error << "\n";
      return r.bad_input ? kExitBadInput : kExitPropertyFailed;
    }
    ++c.runs;
    c.events_published += r.events_published;
    c.events_committed += r.events_committed;
    c.run_ms += r.run_ms;
    c.fired.merge(r.fired);
    c.worker_starts += r.worker_starts;
    c.worker_restarts += r.worker_restarts;
    for (const std::string& e : r.unexpected_exits) {
      c.unexpected_exits.push_back("seed " + std::to_string(seed) + ": " + e);
    }
    c.liveness_ms_max = std::max(c.liveness_ms_max, r.liveness_ms);
    for (const std::string& lost : r.lost_publishes) {
      c.lost_publishes.push_back("seed " + std::to_string(seed) + ": " + lost);
    }
    for (const std::string& finding : r.explained_findings) {
      c.explained_findings.push_back("seed " + std::to_string(seed) + ": " + finding);
    }
    for (const auto& [name, counts] : r.properties_checked) {
      ++(counts ? c.properties_checked : c.properties_advisory)[name];
    }
    c.violations.insert(c.violations.end(), r.violations.begin(), r.violations.end());
    c.advisory_violations.insert(c.advisory_violations.end(), r.advisory_violations.begin(),
                                 r.advisory_violations.end());
    c.history_source = r.history.source;
    if (total == 1) c.history_sha256 = r.history_sha256;
    if (!r.passed) {
      ++c.failed;
      c.failed_seeds.push_back(seed);
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (!ec) {
        c.saved[seed] = save_failure(dir, r);
        const std::string page = save_failure_timeline(c.saved[seed], r, err);
        if (!page.empty()) c.timelines[seed] = page;
      }
    }
    JunitCase& run_case = junit.cases.emplace_back();
    run_case.name = "seed " + std::to_string(seed);
    run_case.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - seed_start).count();
    run_case.failed = !r.passed;
    if (run_case.failed) {
      for (const ChaosViolation& v : r.violations) {
        if (run_case.message.empty()) {
          run_case.message =
              v.property + (v.key.empty() ? "" : " key " + v.key) + ": " + v.explanation;
        }
        run_case.details += render_violation(as_campaign_violation(v));
      }
      if (run_case.message.empty()) run_case.message = "seed " + std::to_string(seed) + " failed";
      for (const std::string& e : r.unexpected_exits) {
        run_case.details += "unexpected exit: " + e + "\n";
      }
      auto saved = c.saved.find(seed);
      if (saved != c.saved.end()) run_case.details += "saved: " + saved->second + "\n";
      run_case.details +=
          "rerun:  seqby chaos --seed " + std::to_string(seed) + c.rerun_args + "\n";
    }
    if (args.progress) {
      err << "\r" << c.runs << "/" << total << " seeds" << (c.failed > 0 ? " (a failure)" : "")
          << std::flush;
      if (c.runs == total) err << "\n";
    }
    if (seed == range.last) break;
  }
  c.wall_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::steady_clock::now() - wall_start)
                                             .count());
  out << (args.json ? render_json(c) : render_text(c));
  if (args.json) {
    for (std::uint64_t seed : c.failed_seeds) {
      err << "seqby chaos: seed " << seed << " failed; rerun: seqby chaos --seed " << seed
          << c.rerun_args << "\n";
    }
  }
  if (!args.junit_path.empty()) {
    junit.seconds = static_cast<double>(c.wall_ms) / 1e3;
    const Status written = write_junit(args.junit_path, junit);
    if (!written.ok()) return bad(written.error().message);
  }
  return c.failed == 0 ? kExitHeld : kExitPropertyFailed;
}

}  // namespace seqby::scenarios
