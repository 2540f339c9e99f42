// `seqby worker --unsafe-variant NAME` against a real redis-server (issue 13 item 5): a worker
// started with a KNOWN-BROKEN variant says so loudly on stderr before anything else it logs
// (event=unsafe_variant, naming the variant and the broker options it runs with), still serves
// its partitions, and stops cleanly; a worker started without the flag runs the design and logs
// no such line. Every wait is bounded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redis_server.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::apps {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::testing::RedisServer;

// Starts one worker with `settings`, has it commit one event of key A, stops it; its log.
std::string log_of_one_event(const std::string& url, const std::string& label,
                             const WorkerSettings& settings) {
  RedisScenarioDriver d(url, kSeqby, label, settings);
  EXPECT_TRUE(d.ready().ok()) << d.ready().error().message;
  WorkerProcess* w = d.start_worker("w1");
  EXPECT_NE(w, nullptr);
  if (w == nullptr) return "";
  Result<std::vector<std::string>> ids = d.publish({PublishSpec{"A", 1, 10, false}});
  EXPECT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("A") == 1; }))
      << "the worker never committed A seq 1\n"
      << d.logs();
  const std::string log = w->log();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
  return log;
}

TEST(WorkerUnsafeVariant, NoFenceLogsTheLoudWarningFirstAndStillServes) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  WorkerSettings settings;
  settings.unsafe_variant = "no_fence";
  const std::string log = log_of_one_event(server.url(), "unsafe_no_fence", settings);
  const std::size_t warning = log.find(
      "component=worker owner=w1 event=unsafe_variant variant=no_fence unfenced_scripts=true "
      "group_start_id=0 warning=\"KNOWN-BROKEN design, for testing the real-Redis harness only");
  ASSERT_NE(warning, std::string::npos) << log;
  const std::size_t start = log.find("event=start ");
  ASSERT_NE(start, std::string::npos) << log;
  EXPECT_LT(warning, start) << "the warning comes before the start line\n" << log;
  EXPECT_NE(log.find(" variant=no_fence", start), std::string::npos) << log;
}

TEST(WorkerUnsafeVariant, WithoutTheFlagTheWorkerRunsTheDesignAndWarnsOfNothing) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const std::string log = log_of_one_event(server.url(), "unsafe_none", WorkerSettings{});
  EXPECT_EQ(log.find("event=unsafe_variant"), std::string::npos) << log;
  EXPECT_NE(log.find(" variant=correct"), std::string::npos) << log;
}

}  // namespace
}  // namespace seqby::apps
