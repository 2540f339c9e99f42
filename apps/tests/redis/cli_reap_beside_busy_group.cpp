// A reap while another group has an entry in flight (issue 18), with real processes: a handler
// worker of group billing on category C:order that reaps cold partitions (--reap-idle-ms 300)
// beside a process-manager worker fulfil over C:order and C:payment. Y goes through both and is
// reaped (the reaper works). Then fulfil is stalled (SIGSTOP) inside the one event of X, a slow
// handler as the reaper sees it: billing has acknowledged X and is idle far past its reap time,
// fulfil has been delivered X and not acknowledged it. billing's reap of X is tried (counted from
// the server's SLOWLOG, which this test's own server logs every command to) and refused every
// time: the stream, its groups and index entry stay. Once fulfil resumes and acks, X is reaped.
// The run's journal is judged by the history checker. Every wait is bounded; the workers and
// the server are stopped by pid.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/reached.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::apps {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::testing::RedisServer;
using seqby::testing::RedisServerOptions;

constexpr std::uint64_t kReapIdleMs = 300;
constexpr std::uint64_t kSlowMs = 1500;  // X's time in the record handler
// How long billing stays idle past its ack of X while fulfil is stopped inside X: ten reap times,
// and many times the time between two of its reap tries (its idle wait ends at its reap time).
constexpr std::uint64_t kRefusedWindowMs = 4000;

// The calls of reap.lua on stream `stream` in the server's SLOWLOG: the script's KEYS name the
// stream and the category's subscriber set, which only reap.lua reads.
std::size_t reap_calls_on(RedisScenarioDriver& d, const std::string& stream,
                          const std::string& subscribers) {
  const redis::Reply log = d.run({"SLOWLOG", "GET", "-1"});
  std::size_t calls = 0;
  for (const redis::Reply& entry : log.elements) {
    if (entry.elements.size() < 4) continue;
    bool names_stream = false;
    bool names_subscribers = false;
    for (const redis::Reply& arg : entry.elements[3].elements) {
      names_stream = names_stream || arg.str == stream;
      names_subscribers = names_subscribers || arg.str == subscribers;
    }
    if (names_stream && names_subscribers) ++calls;
  }
  return calls;
}

TEST(ReapBesideBusyGroupWorkers, TheReapOfAPartitionAnotherGroupHasInFlightIsRefused) {
  RedisServerOptions options;
  options.own = true;  // its SLOWLOG logs every command
  options.extra_args = {"--slowlog-log-slower-than", "0", "--slowlog-max-len", "1000000"};
  RedisServer server(options);
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "reap_busy");
  ASSERT_TRUE(d.ready().ok());
  const std::string order = d.category_named("order");
  WorkerSettings pm;  // the driver's workers: process manager fulfil over order and payment
  pm.group = "fulfil";
  pm.pm_categories = {order, d.category_named("payment")};
  pm.lease_ttl_ms = 10'000;  // the stall below stays inside its lease
  pm.heartbeat_interval_ms = 1000;
  d.set_settings(pm);
  WorkerSettings billing;
  billing.group = "billing";
  billing.reap_idle_ms = kReapIdleMs;
  char dir_template[] = "/tmp/seqby-reap-busy-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);

  WorkerProcess handler(kSeqby, d.url(), order, d.history_stream(), "billing-1", billing,
                        dir + "/billing.log");
  ASSERT_TRUE(handler.started());
  ASSERT_NE(d.start_worker("fulfil-1"), nullptr);
  auto billing_seq = [&](const std::string& key) {
    const redis::Reply r =
        d.run({"HGET", redis::sink_key_name(PartitionRef{order, key}, "billing"), "last_seq"});
    return r.kind == redis::Reply::Kind::bulk ? std::stoll(r.str) : 0;
  };
  auto exists = [&](const std::string& key) {
    return d.run({"EXISTS", PartitionRef{order, key}.stream()}).integer == 1;
  };

  // Y: handled by both groups, then reaped by billing.
  ASSERT_TRUE(d.publish({PublishSpec{"Y", 1, 0, false, order}}).ok());
  const bool y_reaped = d.wait_until(
      [&] { return billing_seq("Y") == 1 && d.last_seq("Y", order) == 1 && !exists("Y"); });
  ASSERT_TRUE(y_reaped) << handler.log() << d.logs();

  // X: fulfil is stopped inside it; billing handles it and goes idle.
  ASSERT_TRUE(d.publish({PublishSpec{"X", 1, kSlowMs, false, order}}).ok());
  const bool inside = d.wait_until([&] { return d.inprogress_marker("X").has_value(); });
  ASSERT_TRUE(inside) << d.logs();
  d.stall("fulfil-1");
  const PartitionRef x{order, "X"};
  const bool billing_done = d.wait_until([&] {
    return billing_seq("X") == 1 &&
           d.run({"XPENDING", x.stream(), "billing"}).elements.size() > 0 &&
           d.run({"XPENDING", x.stream(), "billing"}).elements[0].integer == 0;
  });
  ASSERT_TRUE(billing_done) << handler.log();
  const std::size_t calls_before = reap_calls_on(d, x.stream(), x.subscribers());
  std::this_thread::sleep_for(std::chrono::milliseconds(kRefusedWindowMs));
  const std::size_t refused = reap_calls_on(d, x.stream(), x.subscribers()) - calls_before;
  const redis::Reply fulfil_pending = d.run({"XPENDING", x.stream(), "fulfil"});
  const bool intact = exists("X") && d.run({"XLEN", x.stream()}).integer == 1 &&
                      d.run({"SISMEMBER", x.index(), "X"}).integer == 1;
  std::printf(
      "reap of %s while fulfil had its entry in flight (billing idle for %llu ms after its ack): "
      "%zu reap calls by billing, stream %s, fulfil pending %s\n",
      x.stream().c_str(), static_cast<unsigned long long>(kRefusedWindowMs), refused,
      intact ? "intact (XLEN 1, indexed)" : "GONE", redis::to_string(fulfil_pending).c_str());
  EXPECT_GE(refused, 1u) << "billing never tried to reap X: the test proves nothing\n"
                         << handler.log();
  EXPECT_TRUE(intact) << "X was reaped while fulfil had it in flight";
  ASSERT_FALSE(fulfil_pending.elements.empty());
  EXPECT_EQ(fulfil_pending.elements[0].integer, 1);

  // fulfil resumes, commits and acks X: then billing reaps it.
  d.resume("fulfil-1");
  const bool x_reaped = d.wait_until([&] { return d.last_seq("X", order) == 1 && !exists("X"); });
  EXPECT_TRUE(x_reaped) << handler.log() << d.logs();
  std::printf("after fulfil acked: %s %s\n", x.stream().c_str(),
              exists("X") ? "still there" : "reaped");

  EXPECT_EQ(handler.terminate(), 0) << handler.log();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
  Result<std::vector<HistoryRecord>> history = d.read_history();
  ASSERT_TRUE(history.ok()) << history.error().message;
  properties::CheckOptions check;
  check.skip = {properties::Property::parallel};  // one instance per group: nothing to overlap
  const properties::CheckReport report = properties::check_history(history.value(), check);
  EXPECT_TRUE(report.violations.empty()) << properties::render_report_text(report);
  const std::uint64_t waits = properties::count_reached(history.value())
                                  .count(properties::Reached::reap_refused_for_other_group);
  std::printf(
      "checker on the journal (%zu records): %zu violations; reached "
      "reap_refused_for_other_group=%llu\n",
      history.value().size(), report.violations.size(), static_cast<unsigned long long>(waits));
  EXPECT_GE(waits, 1u) << "the journal does not show the reap waiting for fulfil";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seqby::apps
