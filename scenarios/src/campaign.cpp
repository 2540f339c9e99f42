// run_campaign: seeds on worker threads, each seed its own World; results gathered under a lock
// and reported in seed order whatever order they finished in.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "seqby/properties/history_io.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/scenarios/timeline.h"

namespace seqby::scenarios {
namespace {

struct SeedResult {
  std::uint64_t seed = 0;
  bool passed = false;
  RunResult run;  // history dropped after saving
  std::string determinism_failure;
  std::string saved_case;
  std::string saved_timeline;
  std::uint64_t wall_us = 0;
  properties::ReachedCounts reached;
};

// `hash`: whether the run's history_sha256 is wanted (only a one-seed campaign reports it).
SeedResult run_seed(const CampaignOptions& o, std::uint64_t seed, bool hash) {
  const auto start = std::chrono::steady_clock::now();
  SeedResult s;
  s.seed = seed;
  const sim::SimCase c = o.make_case ? o.make_case(seed) : sim::generate_case(seed);
  RunOptions run = o.run;
  run.compute_history_sha256 = run.compute_history_sha256 && hash;
  run.count_reached = true;
  s.run = run_case(c, run);
  s.passed = s.run.passed;
  s.reached = s.run.reached;
  if (o.check_determinism) {
    const RunResult again = run_case(c, run);
    if (auto diff = properties::first_difference(s.run.history, again.history)) {
      s.passed = false;
      s.determinism_failure = "seed " + std::to_string(seed) + ": histories differ at record " +
                              std::to_string(diff->position) + ":\n  first:  " + diff->left +
                              "\n  second: " + diff->right;
    }
  }
  if (!s.passed && !o.save_failures_dir.empty()) {
    const std::string base = o.save_failures_dir + "/seed-" + std::to_string(seed);
    // The case file carries the simulated server, so its replay needs no flags.
    const CaseServer server{o.run.key_layout, o.run.cluster_shards};
    if (save_case(c, base + ".json", server).ok()) s.saved_case = base + ".json";
    std::ofstream history(base + ".jsonl", std::ios::binary | std::ios::trunc);
    properties::write_history(history, s.run.history);
    const std::string page = base + ".html";
    if (write_timeline(s.run.history, s.run.report, page, "seed-" + std::to_string(seed)).ok()) {
      s.saved_timeline = page;
    }
  }
  s.run.history.clear();
  s.run.history.shrink_to_fit();
  s.wall_us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                             std::chrono::steady_clock::now() - start)
                                             .count());
  return s;
}

}  // namespace

CampaignResult run_campaign(const CampaignOptions& o) {
  SEQBY_CHECK(o.seed_first <= o.seed_last);
  const auto wall_start = std::chrono::steady_clock::now();
  const std::uint64_t total = o.seed_last - o.seed_first + 1;
  const unsigned jobs = std::max(
      1u, std::min<unsigned>(o.jobs, static_cast<unsigned>(std::min<std::uint64_t>(total, 256))));
  std::atomic<std::uint64_t> next{0};
  std::mutex mu;
  std::vector<SeedResult> results;
  results.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(total, 1u << 20)));
  const auto work = [&] {
    for (;;) {
      const std::uint64_t i = next.fetch_add(1);
      if (i >= total) return;
      SeedResult s = run_seed(o, o.seed_first + i, total == 1);
      std::lock_guard<std::mutex> lock(mu);
      results.push_back(std::move(s));
      if (o.progress) {
        o.progress(SeedOutcome{results.back().seed, results.back().passed, results.size(), total});
      }
    }
  };
  if (jobs == 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < jobs; ++j) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  std::sort(results.begin(), results.end(),
            [](const SeedResult& a, const SeedResult& b) { return a.seed < b.seed; });

  CampaignResult out;
  out.jobs = jobs;
  out.rerun_args = o.rerun_args;
  out.cluster_shards = o.run.cluster_shards;
  for (const SeedResult& s : results) {
    const RunResult& r = s.run;
    ++out.runs;
    out.events_published += r.events_published;
    out.events_committed += r.events_committed;
    out.sim_ms += r.sim_ms;
    out.scheduler_steps += r.scheduler_steps;
    out.redis_commands += r.redis_commands;
    out.slot_migrations += r.slot_migrations;
    out.failovers += r.failovers;
    out.lossy_failovers += r.lossy_failovers;
    out.publishes_lost += r.report.counters.publishes_lost;
    out.records_undone += r.report.counters.records_undone;
    out.commits_lost += r.report.counters.commits_lost;
    out.keys_unindexed += r.report.counters.keys_unindexed;
    out.keys_put_back += r.report.counters.keys_put_back;
    out.redirections.moved += r.redirections.moved;
    out.redirections.ask += r.redirections.ask;
    out.redirections.tryagain += r.redirections.tryagain;
    out.redirections.noscript += r.redirections.noscript;
    out.faults.merge(r.faults);
    out.reached.merge(s.reached);
    for (std::size_t p = 0; p < properties::kPropertyCount; ++p) {
      const auto property = static_cast<properties::Property>(p);
      if (r.report.status(property).checked)
        ++out.properties_checked[properties::property_name(property)];
    }
    if (!s.passed) {
      ++out.failed;
      out.failed_seeds.push_back(s.seed);
    }
    for (const auto& f : r.report.violations) {
      out.violations.push_back(
          CampaignViolation{properties::property_name(f.property), f.key, s.seed, f.explanation});
    }
    if (!s.determinism_failure.empty()) out.determinism_failures[s.seed] = s.determinism_failure;
    if (!s.saved_case.empty()) out.saved_cases[s.seed] = s.saved_case;
    if (!s.saved_timeline.empty()) out.saved_timelines[s.seed] = s.saved_timeline;
    out.seed_wall_us[s.seed] = s.wall_us;
    if (total == 1) out.history_sha256 = r.history_sha256;
  }
  out.wall_ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::steady_clock::now() - wall_start)
                                               .count());
  return out;
}

std::string render_campaign_text(const CampaignResult& r) {
  std::string out;
  out += std::string(r.failed == 0 ? "ok" : "FAILED") + ": " + std::to_string(r.runs) + " runs, " +
         std::to_string(r.failed) + " failed\n";
  out += "events: published " + std::to_string(r.events_published) + ", committed " +
         std::to_string(r.events_committed) + "\n";
  std::string fired;
  std::string never;
  for (sim::FaultKind kind : sim::fault_kinds_by_name()) {
    const std::uint64_t n = r.faults.count(kind);
    if (n > 0) {
      fired += std::string(fired.empty() ? "" : " ") + sim::fault_kind_name(kind) + "=" +
               std::to_string(n);
    } else {
      never += std::string(never.empty() ? "" : " ") + sim::fault_kind_name(kind);
    }
  }
  out += "faults fired: " + (fired.empty() ? std::string("none") : fired) + "\n";
  if (!never.empty()) out += "faults never fired: " + never + "\n";
  if (r.cluster_shards > 0) {
    out += "cluster: " + std::to_string(r.cluster_shards) + " shards, " +
           std::to_string(r.slot_migrations) + " slot migrations, " + std::to_string(r.failovers) +
           " failovers (" + std::to_string(r.lossy_failovers) +
           " lossy: " + std::to_string(r.records_undone) + " writes undone, " +
           std::to_string(r.publishes_lost) + " of them publishes; " +
           std::to_string(r.commits_lost) + " commits lost: undone, then their entries acked; " +
           std::to_string(r.keys_unindexed) +
           " keys out of the index again: republished during a lag of the index's shard; " +
           std::to_string(r.keys_put_back) +
           " keys put back into it by their holder); the nodes answered MOVED " +
           std::to_string(r.redirections.moved) + ", ASK " + std::to_string(r.redirections.ask) +
           ", TRYAGAIN " + std::to_string(r.redirections.tryagain) + ", NOSCRIPT " +
           std::to_string(r.redirections.noscript) + "\n";
  }
  std::string reached;
  std::string unreached;
  for (properties::Reached what : properties::all_reached()) {
    const std::uint64_t n = r.reached.count(what);
    std::string& list = n > 0 ? reached : unreached;
    list += std::string(list.empty() ? "" : " ") + properties::reached_name(what) +
            (n > 0 ? "=" + std::to_string(n) : "");
  }
  out += "reached: " + (reached.empty() ? std::string("none") : reached) + "\n";
  if (!unreached.empty()) out += "reached never: " + unreached + "\n";
  std::string checked;
  for (const auto& [name, runs] : r.properties_checked) {
    checked += std::string(checked.empty() ? "" : " ") + name + "(" + std::to_string(runs) + ")";
  }
  out += "properties checked (runs): " + (checked.empty() ? std::string("none") : checked) + "\n";
  const double wall_s = static_cast<double>(r.wall_ms) / 1000.0;
  char line[200];
  std::snprintf(
      line, sizeof line,
      "time: wall %.3f s, simulated %.1f s (%.0fx), %.1f seeds/s on %u job(s), %llu "
      "scheduler steps, %llu redis commands\n",
      wall_s, static_cast<double>(r.sim_ms) / 1000.0,
      r.wall_ms > 0 ? static_cast<double>(r.sim_ms) / static_cast<double>(r.wall_ms) : 0.0,
      r.wall_ms > 0 ? static_cast<double>(r.runs) / wall_s : 0.0, r.jobs,
      static_cast<unsigned long long>(r.scheduler_steps),
      static_cast<unsigned long long>(r.redis_commands));
  out += line;
  if (!r.history_sha256.empty()) out += "history_sha256: " + r.history_sha256 + "\n";
  for (const auto& v : r.violations) out += render_violation(v);
  for (const auto& [seed, d] : r.determinism_failures) out += "nondeterminism: " + d + "\n";
  for (std::uint64_t seed : r.failed_seeds) out += render_seed_replay(r, seed);
  return out;
}

std::string render_violation(const CampaignViolation& v) {
  return "violation: seed " + std::to_string(v.seed) + " " + v.property +
         (v.key.empty() ? "" : " key " + v.key) + ": " + v.explanation + "\n";
}

std::string render_seed_replay(const CampaignResult& r, std::uint64_t seed) {
  std::string out;
  auto saved = r.saved_cases.find(seed);
  if (saved != r.saved_cases.end()) {
    out += "replay: seqby replay " + saved->second + "\n";
  }
  if (auto page = r.saved_timelines.find(seed); page != r.saved_timelines.end()) {
    out += "timeline: " + page->second + "\n";
  }
  out += "rerun:  seqby sim --seed " + std::to_string(seed) + r.rerun_args + "\n";
  return out;
}

std::string render_campaign_json(const CampaignResult& r) {
  nlohmann::ordered_json j;
  j["runs"] = r.runs;
  j["failed"] = r.failed;
  j["failed_seeds"] = r.failed_seeds;
  j["events_published"] = r.events_published;
  j["events_committed"] = r.events_committed;
  j["sim_ms"] = r.sim_ms;
  j["wall_ms"] = r.wall_ms;
  nlohmann::ordered_json faults = nlohmann::ordered_json::object();
  for (const auto& [name, count] : r.faults.by_name()) faults[name] = count;
  j["faults"] = faults;
  if (r.cluster_shards > 0) {
    j["cluster_shards"] = r.cluster_shards;
    j["slot_migrations"] = r.slot_migrations;
    j["failovers"] = r.failovers;
    j["lossy_failovers"] = r.lossy_failovers;
    j["writes_undone"] = r.records_undone;
    j["publishes_lost"] = r.publishes_lost;
    j["commits_lost"] = r.commits_lost;
    j["keys_unindexed"] = r.keys_unindexed;
    j["keys_put_back"] = r.keys_put_back;
    j["redirections"] = {{"moved", r.redirections.moved},
                         {"ask", r.redirections.ask},
                         {"tryagain", r.redirections.tryagain},
                         {"noscript", r.redirections.noscript}};
  }
  nlohmann::ordered_json reached = nlohmann::ordered_json::object();
  for (properties::Reached what : properties::all_reached()) {
    reached[properties::reached_name(what)] = r.reached.count(what);
  }
  j["reached"] = reached;
  nlohmann::ordered_json violations = nlohmann::ordered_json::array();
  for (const auto& v : r.violations) {
    nlohmann::ordered_json item;
    item["property"] = v.property;
    item["key"] = v.key;
    item["seed"] = v.seed;
    item["explanation"] = v.explanation;
    violations.push_back(item);
  }
  j["violations"] = violations;
  if (r.runs == 1) j["history_sha256"] = r.history_sha256;
  return j.dump() + "\n";
}

}  // namespace seqby::scenarios
