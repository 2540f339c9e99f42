// Two real `seqby worker --process-manager` processes over the categories order and payment
// (ADR decision 2) against one redis-server, through the scenario driver: each correlation value
// is owned by one worker, which applies order:X and payment:X one event at a time, each stream in
// publish order; the record handler's in-progress marker is the process manager's one key per
// correlation value; the history checker judges pm_exclusion. Also the worker command's refusals
// of options that do not fit a process manager. Every wait is bounded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli_run.h"
#include "redis_server.h"
#include "seqby/core/naming.h"
#include "seqby/hiredis/worker.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby/testing/record_handler.h"
#include "seqby_binary.h"

namespace seqby::redis {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerSettings;
using seqby::testing::RedisServer;

constexpr std::int64_t kSeqMax = 4;          // events per stream
constexpr std::uint64_t kSlowDelayMs = 400;  // payment:A seq 2, well inside the 1 s lease

TEST(ProcessManagerWorkers, ApplyEachCorrelationValueOneEventAtATimeAcrossCategories) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  // The group is the process manager's name; its leases live under __pm__:G, outside the
  // driver's category, so it is made unique to this process.
  WorkerSettings settings;
  settings.group = "fulfil" + std::to_string(::getpid());
  RedisScenarioDriver d(server.url(), kSeqby, "pm_workers", settings);
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string order = d.category_named("order");
  const std::string payment = d.category_named("payment");
  settings.pm_categories = {order, payment};
  d.set_settings(settings);

  ASSERT_NE(d.start_worker("w1"), nullptr);
  ASSERT_NE(d.start_worker("w2"), nullptr);
  const bool up = d.wait_until([&] { return d.run({"SCARD", d.members_set()}).integer == 2; });
  ASSERT_TRUE(up) << "the workers never announced themselves in " << d.members_set() << "\n"
                  << d.logs();

  // Interleaved: order:A, payment:A, order:B, payment:B for each seq; payment:A seq 2 is slow,
  // so order:A seq 3 waits behind it on the same correlation value while B goes on.
  std::vector<PublishSpec> specs;
  for (std::int64_t seq = 1; seq <= kSeqMax; ++seq) {
    for (const std::string& key : {std::string("A"), std::string("B")}) {
      for (const std::string& category : {order, payment}) {
        const bool slow = key == "A" && category == payment && seq == 2;
        specs.push_back(PublishSpec{key, seq, slow ? kSlowDelayMs : 20, false, category});
      }
    }
  }
  // The slow event is the last one published before the marker is watched: publishing the rest
  // first could outlast the slow event under load, and the marker would be gone when looked for.
  const auto slow = std::find_if(specs.begin(), specs.end(), [](const PublishSpec& spec) {
    return spec.delay_ms == kSlowDelayMs;
  });
  ASSERT_NE(slow, specs.end());
  const std::vector<PublishSpec> before(specs.begin(), slow + 1);
  const std::vector<PublishSpec> after(slow + 1, specs.end());
  Result<std::vector<std::string>> before_ids = d.publish(before);
  ASSERT_TRUE(before_ids.ok()) << before_ids.error().message;

  // While the slow event runs, the marker is the process manager's key for A and names it.
  const std::string slow_id = before_ids.value().back();
  const std::string pm_marker =
      inprogress_key_name(PartitionRef{pm_lease_category(d.group()), "A"}, d.group());
  const bool marked = d.wait_until([&] {
    const std::optional<std::string> marker = d.inprogress_marker("A");
    return marker && marker->ends_with(":" + slow_id);
  });
  EXPECT_TRUE(marked) << pm_marker << " never named the slow event " << slow_id << "\n" << d.logs();
  EXPECT_EQ(pm_marker, "__pm__:" + d.group() + ":A:__inprogress__:" + d.group());

  Result<std::vector<std::string>> after_ids = d.publish(after);
  ASSERT_TRUE(after_ids.ok()) << after_ids.error().message;
  std::vector<std::string> ids = before_ids.value();
  ids.insert(ids.end(), after_ids.value().begin(), after_ids.value().end());
  std::map<std::string, std::vector<std::string>> published;  // stream -> ids in order
  for (std::size_t i = 0; i < specs.size(); ++i) {
    published[specs[i].category + ":" + specs[i].key].push_back(ids[i]);
  }
  ASSERT_EQ(published[payment + ":A"][1], slow_id);

  const bool done = d.wait_until([&] {
    for (const std::string& category : {order, payment}) {
      for (const std::string& key : {std::string("A"), std::string("B")}) {
        if (d.last_seq(key, category) != kSeqMax) return false;
      }
    }
    return true;
  });
  ASSERT_TRUE(done) << "not every stream committed " << kSeqMax << " events\n" << d.logs();
  // (c) both correlation values served, by different workers while both are up.
  const std::string owner_a = d.lease_owner("A");
  const std::string owner_b = d.lease_owner("B");
  EXPECT_FALSE(owner_a.empty()) << d.logs();
  EXPECT_FALSE(owner_b.empty()) << d.logs();
  EXPECT_NE(owner_a, owner_b) << "one worker holds both correlation values\n" << d.logs();
  const std::string logs = d.logs();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
  EXPECT_NE(logs.find("process_manager=" + d.group() + " categories=" + order + "," + payment),
            std::string::npos)
      << logs;

  // (a) every stream's effects are its published ids, in publish order.
  for (const auto& [stream, stream_ids] : published) {
    const std::size_t colon = stream.rfind(':');
    EXPECT_EQ(d.effects(stream.substr(colon + 1), stream.substr(0, colon)), stream_ids) << stream;
  }

  // (b) the marker never saw two instances inside one correlation value, and the checker judged
  // pm_exclusion (the run header names the process manager) and found it holding.
  Result<std::vector<HistoryRecord>> history = d.read_history();
  ASSERT_TRUE(history.ok()) << history.error().message;
  std::map<std::string, std::set<std::string>> committers;  // key -> nodes
  std::vector<std::vector<std::string>> header_categories;
  for (const HistoryRecord& r : history.value()) {
    if (properties::is_run_header(r)) {
      header_categories.push_back(properties::parse_run_header(r).pm_categories[d.group()]);
    }
    EXPECT_FALSE(r.op == HistoryOp::warn &&
                 properties::detail_starts_with_word(r.detail, testing::kInProgressOverlap))
        << "record " << r.index << " " << r.node << " " << r.key << " " << r.detail;
    if (r.op == HistoryOp::commit) committers[r.key].insert(r.node);
  }
  const std::vector<std::string> both = {order, payment};
  EXPECT_EQ(header_categories, std::vector<std::vector<std::string>>{both})
      << "one run header naming the process manager and its categories";
  EXPECT_EQ(committers["A"], std::set<std::string>{owner_a});
  EXPECT_EQ(committers["B"], std::set<std::string>{owner_b});
  properties::CheckOptions options;
  options.skip = {properties::Property::parallel};  // overlap in time is not this test's point
  const properties::CheckReport report = properties::check_history(history.value(), options);
  EXPECT_TRUE(report.status(properties::Property::pm_exclusion).checked)
      << report.status(properties::Property::pm_exclusion).note;
  EXPECT_TRUE(report.ok()) << properties::render_report_text(report, &history.value());
}

// (d) Port 1 would refuse a connection: the options are judged before any is made.
struct Refusal {
  std::vector<std::string> args;
  std::string message;
};

TEST(ProcessManagerWorkers, TheWorkerRefusesOptionsThatDoNotFitAndNamesTheFlag) {
  const std::vector<Refusal> refusals = {
      {{"--category", "order", "--category", "payment", "--sequential-by", "id"},
       "seqby worker: --category: 2 categories given (order,payment); several categories need "
       "--process-manager"},
      {{"--category", "order"},
       "seqby worker: --sequential-by is required (the event field holding the partition key), "
       "unless --process-manager"},
      {{"--category", "order", "--sequential-by", "true"},
       "seqby worker: --sequential-by: 'true' declares a process manager; add --process-manager"},
      {{"--category", "order", "--category", "payment", "--process-manager", "--sequential-by",
        "id"},
       "seqby worker: --sequential-by: a process manager is sequential by its correlation value; "
       "give 'true' or leave it out, not 'id'"},
      {{"--category", "order", "--category", "order", "--process-manager"},
       "seqby worker: --category: 'order' is given twice"},
      {{"--category", "order", "--process-manager", "--reap-idle-ms", "500"},
       "seqby worker: --reap-idle-ms: does not apply to a process manager"},
      {{"--category", "__pm__:x", "--process-manager"}, "rule not_reserved"},
  };
  for (const Refusal& refusal : refusals) {
    std::vector<std::string> args{"worker", "--redis", "redis://127.0.0.1:1", "--group", "fulfil"};
    args.insert(args.end(), refusal.args.begin(), refusal.args.end());
    const auto run = apps::testing::run_seqby(args);
    EXPECT_EQ(run.exit_code, 2) << refusal.message << "\n" << run.err;
    EXPECT_NE(run.err.find(refusal.message), std::string::npos) << run.err;
  }
  // What still fits: a process manager with `--sequential-by true` gets past the options (and
  // then fails only on the poll interval, still before connecting).
  const auto fits =
      apps::testing::run_seqby({"worker", "--redis", "redis://127.0.0.1:1", "--group", "fulfil",
                                "--category", "order", "--category", "payment", "--process-manager",
                                "--sequential-by", "true", "--poll-interval-ms", "0"});
  EXPECT_EQ(fits.exit_code, 2);
  EXPECT_NE(fits.err.find("poll_interval_ms is 0"), std::string::npos) << fits.err;
}

}  // namespace
}  // namespace seqby::redis
