// shrink_case: delta debugging (Zeller's ddmin) over a SimCase value. Each reduction builds
// candidates from the current best case and keeps one only when its run still violates the
// property; a round applies every reduction once, rounds repeat to a fixpoint within the budget.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "seqby/core/check.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/hunt.h"
#include "seqby/testing/variant.h"

namespace seqby::scenarios {
namespace {

using properties::Property;
using sim::FaultKind;
using sim::SimCase;
using Indices = std::vector<std::size_t>;
using Test = std::function<bool(const Indices&)>;

constexpr FaultKind kLinkKinds[] = {FaultKind::request_lost, FaultKind::reply_lost,
                                    FaultKind::latency, FaultKind::connection_reset};

// Splits `items` into `parts` contiguous chunks of near-equal size (parts <= items.size()).
std::vector<Indices> split(const Indices& items, std::size_t parts) {
  std::vector<Indices> chunks;
  std::size_t begin = 0;
  for (std::size_t p = 0; p < parts; ++p) {
    const std::size_t end = begin + (items.size() - begin) / (parts - p);
    chunks.emplace_back(items.begin() + static_cast<std::ptrdiff_t>(begin),
                        items.begin() + static_cast<std::ptrdiff_t>(end));
    begin = end;
  }
  return chunks;
}

Indices without(const Indices& items, const Indices& chunk) {
  Indices out;
  std::set_difference(items.begin(), items.end(), chunk.begin(), chunk.end(),
                      std::back_inserter(out));
  return out;
}

// ddmin over the indices 0..n-1, whose full set is known to fail: returns a failing subset,
// 1-minimal unless `test` ran out of budget (it then answers false). The empty set is tried first.
Indices ddmin(std::size_t n, const Test& test) {
  Indices items(n);
  std::iota(items.begin(), items.end(), std::size_t{0});
  if (n == 0 || test({})) return {};
  std::size_t parts = 2;
  // Each pass either shrinks `items` or doubles `parts` up to items.size(): bounded by n log n.
  for (std::size_t pass = 0; items.size() >= 2 && pass < 64 * n + 64; ++pass) {
    const std::vector<Indices> chunks = split(items, std::min(parts, items.size()));
    bool reduced = false;
    for (const Indices& chunk : chunks) {
      if (test(chunk)) {
        items = chunk;
        parts = 2;
        reduced = true;
        break;
      }
    }
    for (std::size_t i = 0; !reduced && chunks.size() > 2 && i < chunks.size(); ++i) {
      const Indices complement = without(items, chunks[i]);
      if (test(complement)) {
        items = complement;
        parts = std::max<std::size_t>(parts - 1, 2);
        reduced = true;
      }
    }
    if (reduced) continue;
    if (parts >= items.size()) break;
    parts = std::min(parts * 2, items.size());
  }
  return items;
}

// `c` with only the events at `keep` (ascending), each stream (category, key) renumbered 1..n in
// publish order (the checker expects no gap), and `keys` the keys that still have events.
SimCase with_events(const SimCase& c, const Indices& keep) {
  SimCase out = c;
  out.events.clear();
  std::map<std::pair<std::string, std::string>, std::int64_t> last_seq;  // (category, key)
  std::set<std::string> keys;
  for (std::size_t i : keep) {
    sim::CaseEvent e = c.events[i];
    const std::pair<std::string, std::string> stream{sim::category_of(c, e), e.key};
    e.seq = ++last_seq[stream];
    keys.insert(e.key);
    out.events.push_back(std::move(e));
  }
  out.keys.assign(keys.begin(), keys.end());
  return out;
}

// `c` with only the events of the keys in `wanted` (with_events).
SimCase with_keys(const SimCase& c, const std::set<std::string>& wanted) {
  Indices keep;
  for (std::size_t i = 0; i < c.events.size(); ++i) {
    if (wanted.count(c.events[i].key) > 0) keep.push_back(i);
  }
  return with_events(c, keep);
}

void clear_handler_faults(sim::EventBehaviour& b) {
  b.poison = false;
  b.transient_failures = 0;
  b.slow_ms = 0;
}

// `c` without instance `gone`: its scheduled faults go, higher targets move down by one.
SimCase without_instance(const SimCase& c, std::uint32_t gone) {
  SimCase out = c;
  out.instance_count = c.instance_count - 1;
  out.schedule.faults.clear();
  for (sim::TimedFault f : c.schedule.faults) {
    if (sim::fault_targets_instance(f.kind)) {
      if (f.target == gone) continue;
      if (f.target > gone) --f.target;
    } else if (f.target >= out.instance_count) {
      f.target = 0;  // unused by this kind, but a case file keeps it in range
    }
    out.schedule.faults.push_back(f);
  }
  return out;
}

class Shrinker {
 public:
  Shrinker(const SimCase& failing, Property property, const ShrinkOptions& options)
      : property_(property), options_(options), best_(failing) {}

  void run() {
    const std::optional<bool> given = violates(best_);  // and learns the witness keys
    SEQBY_CHECK(given.value_or(true));                  // unknown only with no budget at all
    for (rounds_ = 0; rounds_ < options_.rounds_max && budget_left(); ++rounds_) {
      const std::uint64_t accepted_before = accepted_;
      reduce_keys();
      reduce_instances();
      reduce_schedule();
      reduce_link_kinds();
      reduce_handler_faults();
      reduce_events();
      reduce_time();
      if (accepted_ == accepted_before && !drop_one_reseeded() && !reseed()) {
        fixpoint_ = budget_left();
        ++rounds_;
        break;
      }
    }
  }

  const SimCase& best() const { return best_; }
  std::uint64_t runs() const { return runs_; }
  std::uint32_t rounds() const { return rounds_; }
  bool fixpoint() const { return fixpoint_; }

 private:
  bool budget_left() const { return runs_ < options_.runs_max; }

  // Whether `c` violates the property when run (remembered per case value).
  std::optional<bool> violates(const SimCase& c) {
    const std::string text = case_to_json(c);
    const auto key = std::make_pair(std::hash<std::string>{}(text), text.size());
    if (auto it = verdicts_.find(key); it != verdicts_.end()) return it->second;
    if (!budget_left()) return std::nullopt;
    ++runs_;
    RunOptions options;
    options.compute_history_sha256 = false;
    const RunResult r = run_case(c, options);
    const bool violated = r.report.status(property_).violated();
    if (violated) {
      witness_keys_.clear();
      for (const auto& f : r.report.violations) {
        if (f.property == property_ && !f.key.empty()) witness_keys_.insert(f.key);
      }
    }
    verdicts_[key] = violated;
    return violated;
  }

  // Keeps `candidate` as the best case when it violates the property. With `guard_correct`, the
  // `correct` variant must also hold the property on it: a run cut too short must not pass for a
  // counterexample (used when shortening time, which could starve liveness by itself).
  bool attempt(const SimCase& candidate, bool guard_correct = false) {
    const std::optional<bool> v = violates(candidate);
    if (!v.value_or(false)) return false;
    if (guard_correct) {
      if (candidate.variant == testing::Variant::correct) return false;
      SimCase correct = candidate;
      correct.variant = testing::Variant::correct;
      const std::optional<bool> c = violates(correct);
      if (!c.has_value() || *c) return false;
    }
    best_ = candidate;
    ++accepted_;
    return true;
  }

  void reduce_keys() {
    const SimCase base = best_;
    std::vector<std::string> keys = base.keys;
    if (!witness_keys_.empty() && witness_keys_.size() < keys.size() &&
        attempt(with_keys(base, witness_keys_))) {
      return;
    }
    ddmin(keys.size(), [&](const Indices& subset) {
      std::set<std::string> wanted;
      for (std::size_t i : subset) wanted.insert(keys[i]);
      return attempt(with_keys(base, wanted));
    });
  }

  void reduce_instances() {
    for (std::uint32_t gone = best_.instance_count; gone-- > 0 && best_.instance_count > 1;) {
      attempt(without_instance(best_, gone));
    }
  }

  void reduce_schedule() {
    const SimCase base = best_;
    ddmin(base.schedule.faults.size(), [&](const Indices& subset) {
      SimCase c = base;
      c.schedule.faults.clear();
      for (std::size_t i : subset) c.schedule.faults.push_back(base.schedule.faults[i]);
      return attempt(c);
    });
  }

  void reduce_link_kinds() {
    const SimCase base = best_;
    std::vector<FaultKind> on;
    for (FaultKind kind : kLinkKinds) {
      if (base.swarm.rate_ppm(kind) > 0) on.push_back(kind);
    }
    ddmin(on.size(), [&](const Indices& subset) {
      SimCase c = base;
      for (std::size_t i = 0; i < on.size(); ++i) {
        if (std::find(subset.begin(), subset.end(), i) == subset.end())
          c.swarm.set(on[i], false, 0);
      }
      return attempt(c);
    });
  }

  void reduce_handler_faults() {
    const SimCase base = best_;
    Indices faulty;
    for (std::size_t i = 0; i < base.events.size(); ++i) {
      const sim::EventBehaviour& b = base.events[i].behaviour;
      if (has_handler_fault(b)) faulty.push_back(i);
    }
    ddmin(faulty.size(), [&](const Indices& subset) {
      SimCase c = base;
      for (std::size_t j = 0; j < faulty.size(); ++j) {
        if (std::find(subset.begin(), subset.end(), j) != subset.end()) continue;
        clear_handler_faults(c.events[faulty[j]].behaviour);
      }
      return attempt(c);
    });
    // What is left: one handler fault kind at a time.
    for (std::size_t i = 0; i < best_.events.size() && budget_left(); ++i) {
      const sim::EventBehaviour b = best_.events[i].behaviour;
      const bool kinds[] = {b.poison, b.transient_failures > 0, b.slow_ms > 0};
      if (kinds[0] + kinds[1] + kinds[2] < 2) continue;
      for (int kind = 0; kind < 3; ++kind) {
        if (!kinds[kind]) continue;
        SimCase c = best_;
        sim::EventBehaviour& cb = c.events[i].behaviour;
        if (kind == 0) cb.poison = false;
        if (kind == 1) cb.transient_failures = 0;
        if (kind == 2) cb.slow_ms = 0;
        attempt(c);
      }
    }
  }

  // Each case one step smaller than `c`: one scheduled fault, one link kind, one handler fault,
  // one instance or one key fewer (faults first: the targets count them).
  static std::vector<SimCase> one_smaller(const SimCase& c) {
    std::vector<SimCase> out;
    for (std::size_t i = 0; i < c.schedule.faults.size(); ++i) {
      SimCase d = c;
      d.schedule.faults.erase(d.schedule.faults.begin() + static_cast<std::ptrdiff_t>(i));
      out.push_back(std::move(d));
    }
    for (FaultKind kind : kLinkKinds) {
      if (c.swarm.rate_ppm(kind) == 0) continue;
      SimCase d = c;
      d.swarm.set(kind, false, 0);
      out.push_back(std::move(d));
    }
    for (std::size_t i = 0; i < c.events.size(); ++i) {
      if (!has_handler_fault(c.events[i].behaviour)) continue;
      SimCase d = c;
      clear_handler_faults(d.events[i].behaviour);
      out.push_back(std::move(d));
    }
    for (std::uint32_t gone = 0; gone < c.instance_count && c.instance_count > 1; ++gone) {
      out.push_back(without_instance(c, gone));
    }
    for (std::size_t k = 0; k < c.keys.size() && c.keys.size() > 1; ++k) {
      std::set<std::string> others(c.keys.begin(), c.keys.end());
      others.erase(c.keys[k]);
      out.push_back(with_keys(c, others));
    }
    return out;
  }

  // The seeds a stuck case is tried under: other link latencies and link faults, the only
  // things a run draws.
  static std::uint64_t other_seed(const SimCase& c, std::uint64_t k) {
    return c.seed + k * 1'000'003;
  }

  // Stuck (no single reduction fails under this seed): each of them under a few other seeds. A
  // witness can need a fault only for the draw of its seed (a latency that put two steps in the
  // order the bug needs), and under another draw the same case without it may fail too. At most
  // kReseedsMax times per shrink, so the rounds still end.
  bool drop_one_reseeded() {
    if (drops_reseeded_ >= kReseedsMax) return false;
    ++drops_reseeded_;
    const std::vector<SimCase> smaller = one_smaller(best_);
    for (std::uint64_t k = 1; k <= kTriesPerReseed; ++k) {
      for (const SimCase& candidate : smaller) {
        if (!budget_left()) return false;
        SimCase c = candidate;
        c.seed = other_seed(best_, k);
        if (attempt(c)) return true;
      }
    }
    return false;
  }

  // Stuck still: the same case under another seed may fail and shrink further where this draw
  // did not. At most kReseedsMax times per shrink.
  bool reseed() {
    if (reseeds_ >= kReseedsMax) return false;
    ++reseeds_;
    for (std::uint64_t k = 1; k <= kTriesPerReseed && budget_left(); ++k) {
      SimCase c = best_;
      c.seed = other_seed(best_, k);
      if (attempt(c)) return true;
    }
    return false;
  }

  // Per key: the shortest failing prefix of its events, then the longest droppable head; then
  // ddmin over every event left.
  void reduce_events() {
    for (std::size_t k = 0; k < best_.keys.size() && budget_left(); ++k) {
      const std::string key = best_.keys[k];
      shrink_key_tail(key);
      shrink_key_head(key);
    }
    const SimCase base = best_;
    ddmin(base.events.size(),
          [&](const Indices& keep) { return attempt(with_events(base, keep)); });
  }

  // Indices of `base`'s events, keeping of `key` only its events number [from, to) (0-based).
  static Indices keep_range(const SimCase& base, const std::string& key, std::size_t from,
                            std::size_t to) {
    Indices keep;
    std::size_t n = 0;
    for (std::size_t i = 0; i < base.events.size(); ++i) {
      if (base.events[i].key != key) {
        keep.push_back(i);
        continue;
      }
      if (n >= from && n < to) keep.push_back(i);
      ++n;
    }
    return keep;
  }

  static std::size_t count_of(const SimCase& c, const std::string& key) {
    return static_cast<std::size_t>(std::count_if(c.events.begin(), c.events.end(),
                                                  [&](const auto& e) { return e.key == key; }));
  }

  void shrink_key_tail(const std::string& key) {
    const SimCase base = best_;
    std::size_t lo = 0;
    std::size_t hi = count_of(base, key);  // keeping all `hi` fails
    while (lo < hi && budget_left()) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (attempt(with_events(base, keep_range(base, key, 0, mid)))) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
  }

  void shrink_key_head(const std::string& key) {
    const SimCase base = best_;
    const std::size_t n = count_of(base, key);
    std::size_t lo = 0;  // dropping `lo` fails
    std::size_t hi = n;
    while (lo < hi && budget_left()) {
      const std::size_t mid = lo + (hi - lo + 1) / 2;
      if (attempt(with_events(base, keep_range(base, key, mid, n)))) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
  }

  // Shorter active and liveness phases, never cutting off an event or a scheduled fault.
  void reduce_time() {
    std::uint64_t floor_ms = 1;
    for (const auto& e : best_.events) floor_ms = std::max(floor_ms, e.at_ms + 1);
    for (const auto& f : best_.schedule.faults) floor_ms = std::max(floor_ms, f.at_ms + 1);
    std::uint64_t lo = floor_ms;
    std::uint64_t hi = best_.run_ms;
    while (lo < hi && budget_left()) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      SimCase c = best_;
      c.run_ms = mid;
      if (attempt(c, true)) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    constexpr std::uint64_t kLivenessMinMs = 5'000;
    while (best_.liveness_ms / 2 >= kLivenessMinMs && budget_left()) {
      SimCase c = best_;
      c.liveness_ms = best_.liveness_ms / 2;
      if (!attempt(c, true)) break;
    }
  }

  const Property property_;
  const ShrinkOptions options_;
  SimCase best_;
  std::map<std::pair<std::size_t, std::size_t>, bool> verdicts_;  // (hash, size) of case JSON
  std::set<std::string> witness_keys_;  // keys of the last violating run's findings
  std::uint64_t runs_ = 0;
  std::uint64_t accepted_ = 0;
  std::uint32_t rounds_ = 0;
  static constexpr std::uint32_t kReseedsMax = 3;
  static constexpr std::uint64_t kTriesPerReseed = 4;
  std::uint32_t reseeds_ = 0;
  std::uint32_t drops_reseeded_ = 0;
  bool fixpoint_ = false;
};

}  // namespace

ShrinkResult shrink_case(const SimCase& failing, Property property, const ShrinkOptions& options) {
  Shrinker shrinker(failing, property, options);
  shrinker.run();
  ShrinkResult out;
  out.shrunk = shrinker.best();
  out.runs = shrinker.runs() + 1;
  out.rounds = shrinker.rounds();
  out.fixpoint = shrinker.fixpoint();
  out.run = run_case(out.shrunk);
  SEQBY_CHECK(out.run.report.status(property).violated());  // deterministic runs
  return out;
}

}  // namespace seqby::scenarios
