// The simulated cluster (RunOptions::cluster_shards): the engines reach 3 shards through the real
// ClusterLink over one simulated connection per node while slots migrate and shards fail over
// mid-run (some losing the writes their lagging replica lacked), amid the swarm's faults. Every
// property holds on what survived, the nodes did answer MOVED, ASK, TRYAGAIN and NOSCRIPT (the link
// followed them), each seed gives one history, and a known-broken variant is still caught there.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "seqby/properties/checker.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/run.h"
#include "seqby/scenarios/sim_commands.h"

namespace seqby::scenarios {
namespace {

sim::SimCase small_case(std::uint64_t seed) {
  sim::CaseTemplate t;
  t.key_count = 8;
  t.event_count = 200;
  t.publish_span_ms = 5000;
  t.run_ms = 8000;
  return sim::generate_case(seed, t);
}

CampaignOptions cluster_campaign(std::uint64_t seeds) {
  CampaignOptions o;
  o.seed_first = 1;
  o.seed_last = seeds;
  o.jobs = 2;
  o.make_case = small_case;
  o.run.key_layout = KeyLayout::cluster;
  o.run.cluster_shards = 3;
  return o;
}

TEST(ClusterNodesCampaign, MigrationsAndFailoversMidRunHoldEveryPropertyDeterministically) {
  CampaignOptions o = cluster_campaign(30);
  o.check_determinism = true;
  const CampaignResult r = run_campaign(o);
  std::cout << render_campaign_text(r);
  EXPECT_EQ(r.failed, 0u) << render_campaign_text(r);
  EXPECT_TRUE(r.determinism_failures.empty());
  EXPECT_EQ(r.properties_checked.at("order"), 30u);
  EXPECT_EQ(r.properties_checked.at("exclusion"), 30u);
  EXPECT_GT(r.slot_migrations, 30u);
  EXPECT_GT(r.failovers, 0u);
  EXPECT_GT(r.redirections.moved, 0u);
  EXPECT_GT(r.redirections.ask, 0u);
  EXPECT_GT(r.redirections.tryagain, 0u);
  EXPECT_GT(r.redirections.noscript, 0u);
  // Lossy failovers lost writes, publishes among them, and the checker judged what survived.
  EXPECT_GT(r.lossy_failovers, 0u);
  EXPECT_GT(r.records_undone, 0u);
  EXPECT_GT(r.publishes_lost, 0u);
}

// A commit a lossy failover undid whose entry an ack then took is gone for good: the loss a user
// of the campaign asks about first. Default case 146 loses two (`seqby sim --seed 146
// --key-layout cluster --cluster-shards 3`; 152 and 153 one each before a script's first use by
// many calls at once came to send one SCRIPT LOAD, 22 and 39 before a stopped master came to
// hold back no other master's renewals, 39 and 50 before a lane came to reclaim again after a
// failover); the summary and its JSON count them with the runs'.
TEST(ClusterNodesCampaign, TheSummaryCountsTheCommitsALossyFailoverLost) {
  CampaignOptions o = cluster_campaign(0);
  o.make_case = nullptr;  // the default case, as `seqby sim` runs it
  o.seed_first = 146;
  o.seed_last = 146;
  const CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.failed, 0u) << render_campaign_text(r);
  EXPECT_GE(r.commits_lost, 2u) << render_campaign_text(r);
  EXPECT_LE(r.commits_lost, r.records_undone);
  EXPECT_NE(render_campaign_text(r).find("; " + std::to_string(r.commits_lost) + " commits lost"),
            std::string::npos)
      << render_campaign_text(r);
  EXPECT_EQ(nlohmann::json::parse(render_campaign_json(r)).at("commits_lost"), r.commits_lost);
}

// The markers are what the checker needs: the same histories judged without them break order,
// fence or no_loss, because the failovers really did take writes back (not every one: a lag that
// undid only renews changes nothing the checker judges).
TEST(ClusterNodesCampaign, WithoutItsMarkersALossyFailoverIsAViolation) {
  RunOptions options;
  options.key_layout = KeyLayout::cluster;
  options.cluster_shards = 3;
  std::uint64_t lossy = 0;
  std::uint64_t violated_unmarked = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const RunResult r = run_case(small_case(seed), options);
    EXPECT_TRUE(r.report.ok()) << "seed " << seed << "\n"
                               << properties::render_report_text(r.report);
    if (r.report.counters.records_undone == 0) continue;
    ++lossy;
    std::vector<HistoryRecord> unmarked;
    for (const HistoryRecord& record : r.history) {
      if (!properties::parse_failover_marker(record)) unmarked.push_back(record);
    }
    violated_unmarked += properties::check_history(unmarked, {}).ok() ? 0 : 1;
  }
  EXPECT_GT(lossy, 1u);
  EXPECT_GT(violated_unmarked, 0u);
}

// Five default seeds (`seqby sim --seed S --key-layout cluster --cluster-shards 3`) each once
// failed on a loss the failover semantics did not explain: 312, an owner kept its lease while a
// failover took back its acks and never read its pending entries again (it now does once its
// link saw a failover: Broker::failovers_seen); 349, fenced_commit_next answered NOGROUP after
// its commit stood (the commit is now told beside the error); 365, the world's view of what was
// accepted kept commits a failover undid and ended the liveness phase early; 878 and 998, a
// failover undid the reclaim an owner made when it acquired (the entry it had moved was the old
// consumer's again, where no read of the owner finds it: seq 54 never committed, and every later
// commit refused out of order until the lane halted). A lane now reclaims again once its link
// saw a failover. 600990 and 601794 (a campaign of seeds 600000..602999) lost the checker, not
// the engine: the lossy failover of the shard serving the category's index undid the publish
// that had indexed a reaped key again, while its entries stayed on the key's own shard, so the
// key's holders released it as reaped and the process manager's last events were owed to
// nobody. The replica_lag marker now names the indexes the shard serves, and the checker owes
// such a key's lanes no commit they did not make (docs/ARCHITECTURE.md "What a failover keeps");
// and a holder now puts such a key back (600990: "A key the index lost"). 602287 (the same
// campaign, once holders came to put keys back) lost the world: its liveness phase ended while a
// replica lagged, and the failover after it undid a process manager's last eight commits; the
// phase now ends only with no lag under way.
TEST(ClusterNodesCampaign, TheSeedsOfTheLossesOnceUnexplainedHold) {
  RunOptions options;
  options.key_layout = KeyLayout::cluster;
  options.cluster_shards = 3;
  for (const std::uint64_t seed : {312u, 349u, 365u, 878u, 998u, 600990u, 601794u, 602287u}) {
    const RunResult r = run_case(sim::generate_case(seed), options);
    EXPECT_TRUE(r.passed) << "seed " << seed << "\n" << r.summary;
    EXPECT_GT(r.lossy_failovers, 0u) << "seed " << seed;
    if (seed == 600990 || seed == 601794) {
      EXPECT_GT(r.report.counters.keys_unindexed, 0u) << "seed " << seed;
    }
    if (seed == 600990) {
      EXPECT_GT(r.report.counters.keys_put_back, 0u) << "seed " << seed;
    }
  }
}

// One owner id in two processes (the swarm's stall_replace: a replacement under the stalled
// process's id) beside a lossy failover is the hole docs/ARCHITECTURE.md "What a failover keeps"
// states for the fence: the failover undid an acquire, the fence counter went back, the
// replacement was given the generation the stalled process still held, and the two held one
// token. The campaign does not draw the two together; drawn together, the checker sees the
// overlap in seed 450 of `seqby sim --key-layout cluster --cluster-shards 3` (1445 showed it too
// until a script's first use by many calls came to send one SCRIPT LOAD; it stays, as a seed that
// must pass without the two drawn together. 842 and 946 showed it before a stopped master came to
// hold back no other master's renewals, 41 before a master that stops answering cost only its
// own leases, and 419 and 463 before a lane came to reclaim again after a failover: their
// histories changed, and they hold apart now).
TEST(ClusterNodesCampaign, OneOwnerIdInTwoProcessesBesideALossyFailoverBreaksExclusion) {
  for (const bool together : {false, true}) {
    RunOptions options;
    options.key_layout = KeyLayout::cluster;
    options.cluster_shards = 3;
    options.lossy_failover_beside_replacement = together;
    std::uint64_t exclusion_broken = 0;
    for (const std::uint64_t seed : {450u, 1445u}) {
      const sim::SimCase c = sim::generate_case(seed);
      ASSERT_TRUE(std::any_of(
          c.schedule.faults.begin(), c.schedule.faults.end(),
          [](const sim::TimedFault& f) { return f.kind == sim::FaultKind::stall_replace; }))
          << "seed " << seed << " draws no stall_replace any more";
      const RunResult r = run_case(c, options);
      if (!together) {
        EXPECT_TRUE(r.passed) << "seed " << seed << "\n" << r.summary;
      }
      for (const properties::Finding& v : r.report.violations) {
        if (v.property == properties::Property::exclusion) ++exclusion_broken;
      }
    }
    if (together) {
      EXPECT_GT(exclusion_broken, 0u);
    }
  }
}

// The two variants that serve a partition without a lease (shared_group, message_lock) take
// their keys from the index, not from an acquire: the broker lays them out
// (Broker::laid_out), so they run on the cluster and are caught there (they used to abort on
// the broker's layout check).
TEST(ClusterNodesCampaign, TheVariantsWithoutALeaseRunAndAreCaughtOnTheClusterToo) {
  for (const testing::Variant variant :
       {testing::Variant::shared_group, testing::Variant::message_lock}) {
    CampaignOptions o = cluster_campaign(6);
    o.make_case = [variant](std::uint64_t seed) {
      sim::SimCase c = small_case(seed);
      c.variant = variant;
      return c;
    };
    const CampaignResult r = run_campaign(o);
    EXPECT_GT(r.failed, 0u) << testing::variant_name(variant) << "\n" << render_campaign_text(r);
  }
}

TEST(ClusterNodesCampaign, TheStaleOwnerWithoutAFenceIsCaughtOnTheClusterToo) {
  CampaignOptions o = cluster_campaign(20);
  o.make_case = [](std::uint64_t seed) {
    sim::SimCase c = small_case(seed);
    c.variant = testing::Variant::no_fence;
    return c;
  };
  const CampaignResult r = run_campaign(o);
  EXPECT_GT(r.failed, 0u) << render_campaign_text(r);
  EXPECT_GT(r.slot_migrations, 0u);
}

// `seqby sim --key-layout cluster --cluster-shards 3`: the summary says what the cluster did and
// a failing seed's rerun line keeps the flags; without the cluster layout, or with too many
// shards, it is bad usage and nothing runs.
TEST(ClusterNodesCampaign, TheSimCommandRunsTheClusterAndRefusesItWithoutTheClusterLayout) {
  SimArgs args;
  args.seeds = "1..2";
  args.key_layout = "cluster";
  args.cluster_shards = 3;
  std::ostringstream out, err;
  EXPECT_EQ(sim_main(args, out, err), kExitHeld) << out.str() << err.str();
  EXPECT_NE(out.str().find("cluster: 3 shards, "), std::string::npos) << out.str();

  args.variant = "no_fence";
  args.seeds = "1..6";
  args.save_failures_dir = ::testing::TempDir() + "cluster_nodes_failures";
  std::ostringstream failed_out, failed_err;
  EXPECT_NE(sim_main(args, failed_out, failed_err), kExitHeld);
  EXPECT_NE(failed_out.str().find("--key-layout cluster --cluster-shards 3"), std::string::npos)
      << failed_out.str();

  for (const auto& [layout, shards] : {std::pair{"flat", 3u}, std::pair{"cluster", 17u}}) {
    SimArgs bad;
    bad.seed = 1;
    bad.key_layout = layout;
    bad.cluster_shards = shards;
    std::ostringstream bad_out, bad_err;
    EXPECT_EQ(sim_main(bad, bad_out, bad_err), kExitBadInput) << layout;
    EXPECT_NE(bad_err.str().find("--cluster-shards " + std::to_string(shards)), std::string::npos)
        << bad_err.str();
    EXPECT_EQ(bad_out.str(), "");
  }
}

}  // namespace
}  // namespace seqby::scenarios
