// The plan of a chaos seed (seqby chaos): a pure function of the seed and the parameters, every
// enabled nemesis strikes at least once inside the fault phase, a nemesis switched off does not
// move the others' moments, and the workload is what the record handler understands (per-lane
// seqs 1..n in publish order, at most one poison event per lane, transient failures inside the
// retry budget and never on a poison event).
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "seqby/scenarios/chaos.h"

namespace seqby::scenarios {
namespace {

ChaosParams all_on() {
  ChaosParams p;
  p.duration_ms = 20000;
  p.nemeses.fill(true);
  return p;
}

bool same(const ChaosPlan& a, const ChaosPlan& b) {
  if (a.events.size() != b.events.size() || a.strikes.size() != b.strikes.size()) return false;
  for (std::size_t i = 0; i < a.events.size(); ++i) {
    const PlannedEvent& x = a.events[i];
    const PlannedEvent& y = b.events[i];
    if (x.at_ms != y.at_ms || x.key != y.key || x.seq != y.seq || x.delay_ms != y.delay_ms ||
        x.poison != y.poison || x.category != y.category) {
      return false;
    }
  }
  for (std::size_t i = 0; i < a.strikes.size(); ++i) {
    const Strike& x = a.strikes[i];
    const Strike& y = b.strikes[i];
    if (x.at_ms != y.at_ms || x.kind != y.kind || x.target != y.target ||
        x.duration_ms != y.duration_ms || x.proxy_mode != y.proxy_mode) {
      return false;
    }
  }
  return true;
}

TEST(ChaosPlan, SameSeedSamePlanOtherSeedOtherPlan) {
  EXPECT_TRUE(same(draw_chaos_plan(all_on(), 7), draw_chaos_plan(all_on(), 7)));
  EXPECT_FALSE(same(draw_chaos_plan(all_on(), 7), draw_chaos_plan(all_on(), 8)));
}

TEST(ChaosPlan, EveryEnabledNemesisStrikesInsideTheFaultPhase) {
  const ChaosParams p = all_on();
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const ChaosPlan plan = draw_chaos_plan(p, seed);
    std::map<Nemesis, int> strikes;
    std::uint64_t last_ms = 0;
    for (const Strike& s : plan.strikes) {
      ++strikes[s.kind];
      EXPECT_LT(s.at_ms, p.duration_ms) << "seed " << seed;
      EXPECT_GE(s.at_ms, last_ms) << "strikes are in time order, seed " << seed;
      EXPECT_LT(s.target, p.workers);
      last_ms = s.at_ms;
      if (s.kind == Nemesis::slot_migration || s.kind == Nemesis::failover) {
        EXPECT_LT(s.lane, p.keys) << nemesis_name(s.kind) << " strikes one of the run's lanes";
        EXPECT_LT(s.mode, s.kind == Nemesis::failover ? 3u : 2u);
      }
      if (s.kind == Nemesis::stop || s.kind == Nemesis::client_pause) {
        EXPECT_GT(s.duration_ms, p.lease_ttl_ms) << nemesis_name(s.kind) << " past the lease";
      }
    }
    for (Nemesis kind : nemeses_by_name()) {
      EXPECT_GE(strikes[kind], 1) << nemesis_name(kind) << " seed " << seed;
    }
  }
}

TEST(ChaosPlan, SwitchingANemesisOffKeepsTheOthersMoments) {
  ChaosParams without = all_on();
  without.nemeses[static_cast<std::size_t>(Nemesis::proxy)] = false;
  const ChaosPlan full = draw_chaos_plan(all_on(), 3);
  const ChaosPlan less = draw_chaos_plan(without, 3);
  std::vector<std::pair<std::uint64_t, Nemesis>> expected;
  for (const Strike& s : full.strikes) {
    if (s.kind != Nemesis::proxy) expected.emplace_back(s.at_ms, s.kind);
  }
  std::vector<std::pair<std::uint64_t, Nemesis>> got;
  for (const Strike& s : less.strikes) got.emplace_back(s.at_ms, s.kind);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(full.events.size(), less.events.size());
}

TEST(ChaosPlan, LanesCarrySeqsInPublishOrderAndAtMostOnePoison) {
  ChaosParams p = all_on();
  p.process_manager = true;
  const ChaosPlan plan = draw_chaos_plan(p, 11);
  EXPECT_EQ(plan.categories, 2u);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::int64_t> last_seq;
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> poisons;
  std::uint64_t last_ms = 0;
  std::uint64_t transients = 0;
  for (const PlannedEvent& e : plan.events) {
    const auto lane = std::make_pair(e.category, e.key);
    EXPECT_EQ(e.seq, last_seq[lane] + 1) << "lane " << e.category << "/" << e.key;
    last_seq[lane] = e.seq;
    EXPECT_GE(e.at_ms, last_ms);
    last_ms = e.at_ms;
    EXPECT_LT(e.at_ms, p.duration_ms);
    if (e.poison) ++poisons[lane];
    if (e.fail_deliveries > 0) {
      ++transients;
      EXPECT_FALSE(e.poison) << "a transient event is committable";
      EXPECT_LE(e.fail_deliveries, 1u) << "inside the retry budget";
    }
  }
  EXPECT_GT(transients, 0u);
  EXPECT_EQ(last_seq.size(), 2u * p.keys);
  for (const auto& [lane, n] : poisons) EXPECT_LE(n, 1);
}

TEST(ChaosPlan, NemesisNamesRoundTrip) {
  for (Nemesis kind : nemeses_by_name()) {
    Nemesis parsed;
    ASSERT_TRUE(parse_nemesis(nemesis_name(kind), &parsed));
    EXPECT_EQ(parsed, kind);
  }
  Nemesis unused;
  EXPECT_FALSE(parse_nemesis("crash", &unused));
  EXPECT_EQ(nemeses_by_name().size(), kNemesisCount);
}

}  // namespace
}  // namespace seqby::scenarios
