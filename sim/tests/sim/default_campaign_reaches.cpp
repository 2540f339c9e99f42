// The default campaign (what `seqby sim` and `make run` generate) reaches a reap while another
// group has an entry in flight (issue 18): some seeds run the process manager `fulfil` beside the
// handler group on its category (SimCase::beside_group), the handler group reaps and the process
// manager is slow on some events. Asserted over a fixed range of default seeds: every run holds
// every property, the checker judged the process manager (pm_exclusion) and
// Reached::reap_refused_for_other_group was reached, counted from the histories as the campaign
// counts it and the summary's reached line prints it. A seed with a beside group is
// deterministic and its case file keeps what replays it.
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "seqby/properties/reached.h"
#include "seqby/scenarios/case_io.h"
#include "seqby/scenarios/run.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {
namespace {

constexpr std::uint64_t kSeedFirst = 0;
constexpr std::uint64_t kSeedLast = 39;

// The first default seed at or after `seed` whose case has a beside group (within 100 seeds).
std::uint64_t first_beside_seed(std::uint64_t seed) {
  for (std::uint64_t s = seed; s < seed + 100; ++s) {
    if (!sim::generate_case(s).beside_group.empty()) return s;
  }
  ADD_FAILURE() << "no default seed in " << seed << ".." << seed + 99 << " has a beside group";
  return seed;
}

TEST(DefaultCampaignReaches, AReapRefusedForAnotherGroupsEntryInFlight) {
  CampaignOptions o;
  o.seed_first = kSeedFirst;
  o.seed_last = kSeedLast;
  o.run.compute_history_sha256 = false;
  const CampaignResult r = run_campaign(o);
  const std::string text = render_campaign_text(r);
  std::cout << text;
  EXPECT_EQ(r.failed, 0u) << "rerun: seqby sim --seeds " << kSeedFirst << ".." << kSeedLast;
  const auto pm_judged = r.properties_checked.find("pm_exclusion");
  EXPECT_TRUE(pm_judged != r.properties_checked.end() && pm_judged->second > 0)
      << "no seed of " << kSeedFirst << ".." << kSeedLast << " ran a group beside the handler's";
  EXPECT_GT(r.reached.count(properties::Reached::reap_refused_for_other_group), 0u)
      << "no default seed of " << kSeedFirst << ".." << kSeedLast
      << " reached a reap refused for another group's entry in flight";
  // The summary's reached line (what `seqby sim` prints) counts it.
  const std::size_t line = text.find("\nreached: ");
  ASSERT_NE(line, std::string::npos) << text;
  const std::string reached = text.substr(line + 1, text.find('\n', line + 1) - line - 1);
  EXPECT_NE(reached.find(" reap_refused_for_other_group="), std::string::npos) << reached;
}

TEST(DefaultCampaignReaches, ASeedWithABesideGroupIsDeterministic) {
  const std::uint64_t seed = first_beside_seed(kSeedFirst);
  const sim::SimCase c = sim::generate_case(seed);
  ASSERT_EQ(c.beside_group, "fulfil");
  EXPECT_GT(c.engine.reap_idle_ms, 0u);
  const DeterminismResult d = check_determinism(c);
  EXPECT_TRUE(d.same) << "first difference at record " << d.position.value_or(0) << "\n  "
                      << d.first_line << "\n  " << d.second_line << "\nrerun: seqby sim --seed "
                      << seed << " --check-determinism";
}

TEST(DefaultCampaignReaches, ACaseFileKeepsTheBesideGroupAndItsSlowEvents) {
  const sim::SimCase c = sim::generate_case(first_beside_seed(kSeedFirst));
  std::uint64_t slow = 0;
  for (const sim::CaseEvent& e : c.events) slow += e.behaviour.beside_slow_ms > 0 ? 1 : 0;
  EXPECT_GT(slow, 0u);
  const Result<sim::SimCase> read = case_from_json(case_to_json(c), "beside.json");
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read.value().beside_group, c.beside_group);
  EXPECT_EQ(read.value().engine, c.engine);
  EXPECT_EQ(read.value().events, c.events);
  // A case without a beside group writes neither field.
  for (std::uint64_t s = 0; s < 100; ++s) {
    const sim::SimCase plain = sim::generate_case(s);
    if (!plain.beside_group.empty()) continue;
    const std::string text = case_to_json(plain);
    EXPECT_EQ(text.find("beside"), std::string::npos) << "seed " << s;
    break;
  }
}

}  // namespace
}  // namespace seqby::scenarios
