// `seqby worker --metrics-addr` against a real redis-server (issue 15 item 3): a real worker's
// /metrics, scraped during the run, agrees with what happened (events handled = events
// published, partitions owned = keys, one halt for the poison key, pending and lag 0 once the
// healthy keys are done, every handler run timed), /readyz and /healthz answer 200, and its
// --log-format json lines each parse as a JSON object. A worker whose Redis is not there yet
// answers /readyz 503 (not connected) until a server comes up on its port, 200 then, and 503
// again when the server dies. Servers and workers are the test's own, on free loopback ports,
// stopped by pid; every wait is bounded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "seqby/runtime/free_port.h"
#include "seqby/runtime/subprocess.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "wait_and_read.h"
#include "worker_http.h"

namespace seqby::apps {
namespace {

using redis::Redirect;
using redis::SpawnOptions;
using redis::Subprocess;
using seqby::testing::http_get;
using seqby::testing::HttpAnswer;
using seqby::testing::read_file;
using seqby::testing::RedisServer;
using seqby::testing::sample;
using seqby::testing::wait_for;

struct Dir {
  Dir() {
    char dir_template[] = "/tmp/seqby-worker-metrics-XXXXXX";
    path = ::mkdtemp(dir_template);
  }
  ~Dir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

std::vector<std::string> worker_args(const std::string& url, const std::string& category,
                                     std::uint16_t metrics_port) {
  return {kSeqby,
          "worker",
          "--redis",
          url,
          "--category",
          category,
          "--group",
          "g",
          "--sequential-by",
          "client_id",
          "--owner-id",
          "w1",
          "--lease-ttl-ms",
          "2000",
          "--heartbeat-interval-ms",
          "500",
          "--discovery-interval-ms",
          "200",
          "--retry-count-max",
          "2",
          "--metrics-addr",
          "127.0.0.1:" + std::to_string(metrics_port),
          "--log-format",
          "json"};
}

TEST(WorkerMetricsEndpoint, AScrapeDuringTheRunAgreesWithWhatHappened) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  // The driver gives the run a category of its own and deletes its keys afterwards.
  scenarios::RedisScenarioDriver d(server.url(), kSeqby, "metrics");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string c = d.category();
  const std::vector<std::pair<std::string, int>> healthy{{"k1", 20}, {"k2", 10}, {"k3", 5}};
  int published = 0;
  for (const auto& [key, count] : healthy) {
    const scenarios::CommandRun run =
        scenarios::run_command(kSeqby, {"publish", "--redis", server.url(), "--category", c,
                                        "--key", key, "--count", std::to_string(count)});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    published += count;
  }
  // An event without an integer seq: the record handler fails it until its partition halts.
  const scenarios::CommandRun poison = scenarios::run_command(
      kSeqby,
      {"publish", "--redis", server.url(), "--category", c, "--key", "p", "--data", R"({"n":1})"});
  ASSERT_EQ(poison.exit_code, 0) << poison.err;

  Dir dir;
  const std::string log_path = dir.path + "/worker.log";
  const std::uint16_t port = redis::free_loopback_port();
  ASSERT_NE(port, 0);
  std::vector<std::string> args = worker_args(server.url(), c, port);
  args.insert(args.end(), {"--history-stream", d.history_stream()});
  SpawnOptions o;
  o.in = Redirect::null();
  o.out = Redirect::null();
  o.err = Redirect::file(log_path);
  Result<Subprocess> worker = Subprocess::spawn(args, o);
  ASSERT_TRUE(worker.ok()) << worker.error().message;

  const std::string handled = "seqby_events_handled_total{category=\"" + c + "\"}";
  const std::string failed = "seqby_events_failed_total{category=\"" + c + "\"}";
  auto pending = [&](const std::string& key) {
    return "seqby_partition_pending{category=\"" + c + "\",key=\"" + key + "\"}";
  };
  auto lag = [&](const std::string& key) {
    return "seqby_partition_lag{category=\"" + c + "\",key=\"" + key + "\"}";
  };
  // Scraped during the run until every healthy event is handled, the poison key halted and the
  // lag sampled after that.
  std::string metrics;
  const bool settled = wait_for(
      [&] {
        metrics = http_get(port, "/metrics").body;
        bool done =
            sample(metrics, handled) == published && sample(metrics, "seqby_halts_total") == 1;
        for (const auto& [key, count] : healthy) {
          done = done && sample(metrics, pending(key)) == 0 && sample(metrics, lag(key)) == 0;
        }
        return done && sample(metrics, pending("p")) == 1;
      },
      30'000);
  ASSERT_TRUE(settled) << metrics << "\n" << read_file(log_path);

  EXPECT_EQ(sample(metrics, handled), published);
  EXPECT_EQ(sample(metrics, "seqby_units_owned{kind=\"partition\"}"), healthy.size() + 1);
  EXPECT_EQ(sample(metrics, "seqby_units_halted"), 1);
  EXPECT_GE(sample(metrics, "seqby_lease_events_total{event=\"acquire\"}"), healthy.size() + 1);
  EXPECT_EQ(sample(metrics, "seqby_lease_events_total{event=\"lose\"}"), 0);
  for (const char* op : {"read", "ack", "commit"}) {
    EXPECT_EQ(sample(metrics, "seqby_fenced_refusals_total{op=\"" + std::string(op) + "\"}"), 0);
  }
  // The poison event failed its first delivery and each retry (--retry-count-max 2), then halted.
  EXPECT_EQ(sample(metrics, failed), 3);
  EXPECT_EQ(sample(metrics, lag("p")), 0);
  // Every handler run timed, ok or failed.
  EXPECT_EQ(sample(metrics, "seqby_handler_duration_seconds_count{category=\"" + c + "\"}"),
            published + 3);
  EXPECT_EQ(sample(metrics, "seqby_history_records_total{op=\"exit\"}"), published + 3);
  EXPECT_EQ(sample(metrics, "seqby_redis_connected{link=\"commands\"}"), 1);
  EXPECT_EQ(sample(metrics, "seqby_ready"), 1);
  EXPECT_EQ(sample(metrics, "seqby_redis_command_refusals_total{link=\"commands\"}"), 0);
  const HttpAnswer ready = http_get(port, "/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_EQ(http_get(port, "/healthz").status, 200);
  // Renewals go on while it runs.
  const double renews = sample(metrics, "seqby_lease_events_total{event=\"renew\"}");
  EXPECT_TRUE(wait_for(
      [&] {
        return sample(http_get(port, "/metrics").body,
                      "seqby_lease_events_total{event=\"renew\"}") > renews;
      },
      10'000));

  EXPECT_EQ(worker.value().terminate(20'000), 0) << read_file(log_path);
  // --log-format json: every line one JSON object with ts, owner and event.
  std::istringstream lines(read_file(log_path));
  std::vector<std::string> events;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    EXPECT_TRUE(j.contains("ts")) << line;
    EXPECT_EQ(j.value("owner", ""), "w1") << line;
    events.push_back(j.value("event", ""));
    if (j.value("event", "") == "halt") {
      EXPECT_EQ(j.value("key", ""), "p") << line;
      EXPECT_NE(j.value("detail", "").find("no integer seq"), std::string::npos) << line;
    }
    if (j.value("event", "") == "start") {
      EXPECT_EQ(j.value("metrics_addr", ""), "127.0.0.1:" + std::to_string(port)) << line;
      EXPECT_EQ(j.value("lease_ttl_ms", 0), 2000) << line;
    }
  }
  for (const char* event : {"start", "halt", "halt_figures", "stopping", "stopped"}) {
    EXPECT_NE(std::find(events.begin(), events.end(), event), events.end()) << event;
  }
}

TEST(WorkerMetricsEndpoint, ReadyzIs503UntilRedisIsReachableAndAgainWhenItIsGone) {
  const std::uint16_t redis_port = redis::free_loopback_port();
  const std::uint16_t port = redis::free_loopback_port();
  ASSERT_NE(redis_port, 0);
  ASSERT_NE(port, 0);
  ASSERT_NE(redis_port, port);
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis_port);
  Dir dir;
  const std::string log_path = dir.path + "/worker.log";
  SpawnOptions o;
  o.in = Redirect::null();
  o.out = Redirect::null();
  o.err = Redirect::file(log_path);
  Result<Subprocess> worker = Subprocess::spawn(worker_args(url, "metrics_reach", port), o);
  ASSERT_TRUE(worker.ok()) << worker.error().message;

  // Alive, not ready: nothing listens on the Redis port yet.
  ASSERT_TRUE(wait_for([&] { return http_get(port, "/healthz").status == 200; }, 10'000))
      << read_file(log_path);
  std::string metrics;
  ASSERT_TRUE(wait_for(
      [&] {
        metrics = http_get(port, "/metrics").body;
        return sample(metrics, "seqby_redis_connect_failures_total{link=\"commands\"}") >= 2;
      },
      10'000))
      << metrics;
  HttpAnswer ready = http_get(port, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("not connected to Redis"), std::string::npos) << ready.body;
  EXPECT_EQ(sample(metrics, "seqby_ready"), 0);
  EXPECT_EQ(sample(metrics, "seqby_redis_connected{link=\"commands\"}"), 0);

  // A server comes up on that port: the worker connects, discovers, and is ready.
  SpawnOptions server_options;
  server_options.in = Redirect::null();
  server_options.out = Redirect::null();
  server_options.err = Redirect::null();
  server_options.search_path = true;
  Result<Subprocess> redis_server =
      Subprocess::spawn({"redis-server", "--port", std::to_string(redis_port), "--bind",
                         "127.0.0.1", "--save", "", "--appendonly", "no"},
                        server_options);
  ASSERT_TRUE(redis_server.ok()) << redis_server.error().message;
  EXPECT_TRUE(wait_for([&] { return http_get(port, "/readyz").status == 200; }, 20'000))
      << http_get(port, "/readyz").body << "\n"
      << read_file(log_path);
  metrics = http_get(port, "/metrics").body;
  EXPECT_EQ(sample(metrics, "seqby_redis_connected{link=\"commands\"}"), 1) << metrics;

  // The server dies: not ready again, while the worker stays alive and retries.
  redis_server.value().kill();
  EXPECT_TRUE(wait_for([&] { return http_get(port, "/readyz").status == 503; }, 20'000));
  ready = http_get(port, "/readyz");
  EXPECT_NE(ready.body.find("not connected to Redis"), std::string::npos) << ready.body;
  EXPECT_EQ(http_get(port, "/healthz").status, 200);
  worker.value().kill();
}

}  // namespace
}  // namespace seqby::apps
