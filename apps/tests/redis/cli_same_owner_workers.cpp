// Two live `seqby worker` processes with ONE --owner-id (issue 18): an operator's fixed owner id
// (a pod name) and a replacement started while the first process is stalled. The first worker
// (pod-0) is SIGSTOPped inside a handler past its lease; a second worker with the same id starts
// and takes the partitions over as pod-0:N+1; the first is SIGCONTed, runs beside it for a while
// (its fenced steps under pod-0:N refused), and is then SIGKILLed as an operator would. The
// decision journal is judged by `seqby check --redis URL --category C`, and read again to assert
// what the checker implies in this situation, said in the test's output: every step of a
// superseded generation of pod-0 after its supersession was refused, at least one was tried,
// and none entered a next event. Every wait is bounded; the workers are stopped by pid.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "redis_server.h"
#include "seqby/properties/history_io.h"
#include "seqby/properties/reached.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "wait_and_read.h"

namespace seqby::apps {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::testing::read_file;
using seqby::testing::RedisServer;

constexpr const char* kOwner = "pod-0";
constexpr std::int64_t kSeqMax = 8;
constexpr std::uint64_t kDelayMs = 250;  // each event's time in the record handler

// The generation in a lease value "O:N" (0 when there is none).
std::uint64_t generation_of(const std::string& token) {
  const auto colon = token.rfind(':');
  return colon == std::string::npos ? 0 : std::stoull(token.substr(colon + 1));
}

bool is_refusal(HistoryOp op) {
  return op == HistoryOp::read_fenced || op == HistoryOp::ack_fenced ||
         op == HistoryOp::commit_fenced || op == HistoryOp::lose;
}

bool is_accepted_step(HistoryOp op) {
  return op == HistoryOp::read || op == HistoryOp::ack || op == HistoryOp::commit ||
         op == HistoryOp::renew || op == HistoryOp::reclaim || op == HistoryOp::halt;
}

// What the superseded generations of `owner` did after a newer generation of the same owner id
// acquired their unit.
struct StaleSteps {
  std::map<std::string, std::uint64_t> refused;  // op -> count
  std::vector<std::string> accepted;             // "op #index" (must stay empty)
  std::vector<std::string> entered;              // enters (must stay empty)
  std::uint64_t superseded_by_same_owner = 0;    // generations of owner superseded by owner
};

StaleSteps stale_steps_of(const std::vector<HistoryRecord>& history, const std::string& owner) {
  StaleSteps out;
  // (category, key, group) -> generation -> node, in acquire order.
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::uint64_t, std::string>>
      acquired;
  // (category, key, group, generation) -> the event its last accepted read returned: the one
  // event a stale generation may still enter (the read came before the newer acquire, the
  // handler's enter after it: the ADR's admitted residue, DESIGN section 6 "exclusion").
  std::map<std::tuple<std::string, std::string, std::string, std::uint64_t>, std::string> last_read;
  for (const HistoryRecord& r : history) {
    const auto unit = std::make_tuple(r.category, r.key, r.group);
    if (r.op == HistoryOp::acquire) {
      auto& generations = acquired[unit];
      // The newest generation so far was owner's, and owner acquires a newer one.
      if (r.node == owner && !generations.empty() && generations.rbegin()->second == owner &&
          generations.rbegin()->first < r.generation) {
        ++out.superseded_by_same_owner;
      }
      generations[r.generation] = r.node;
      continue;
    }
    if (r.node != owner || r.generation == 0) continue;
    const auto lane = std::make_tuple(r.category, r.key, r.group, r.generation);
    if (r.op == HistoryOp::read) last_read[lane] = r.event_id;
    const auto found = acquired.find(unit);
    if (found == acquired.end()) continue;
    // Superseded: a newer generation of this unit was acquired (by anyone) before this record.
    if (found->second.upper_bound(r.generation) == found->second.end()) continue;
    const std::string what = std::string(history_op_name(r.op)) + " #" + std::to_string(r.index) +
                             " " + r.category + ":" + r.key + " under " + r.node + ":" +
                             std::to_string(r.generation);
    if (is_refusal(r.op)) ++out.refused[history_op_name(r.op)];
    if (is_accepted_step(r.op)) out.accepted.push_back(what);
    if (r.op == HistoryOp::enter && last_read[lane] != r.event_id) out.entered.push_back(what);
  }
  return out;
}

TEST(SameOwnerWorkers, AReplacementWithTheSameOwnerIdFencesTheStalledProcess) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  WorkerSettings settings;  // lease 1000 ms, heartbeat and discovery 250 ms, the journal on
  RedisScenarioDriver d(server.url(), kSeqby, "same_owner", settings);
  ASSERT_TRUE(d.ready().ok());
  char dir_template[] = "/tmp/seqby-same-owner-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);

  const std::vector<std::string> keys = {"A", "B", "C"};
  std::vector<PublishSpec> events;
  for (std::int64_t seq = 1; seq <= kSeqMax; ++seq) {
    for (const std::string& key : keys) events.push_back(PublishSpec{key, seq, kDelayMs});
  }
  ASSERT_TRUE(d.publish(events).ok());

  auto first = std::make_unique<WorkerProcess>(kSeqby, d.url(), d.category(), d.history_stream(),
                                               kOwner, settings, dir + "/first.log");
  ASSERT_TRUE(first->started());
  // Inside a handler of A, after at least one commit: then stalled past its lease.
  const bool inside = d.wait_until([&] {
    const auto marker = d.inprogress_marker("A");
    return d.last_seq("A") >= 1 && marker.has_value() &&
           marker->rfind(std::string(kOwner) + ":", 0) == 0;
  });
  ASSERT_TRUE(inside) << first->log();
  const std::string old_token = d.run({"GET", d.lease_key("A")}).str;
  first->stop_now();
  HistoryRecord stall;
  stall.node = kOwner;
  stall.op = HistoryOp::fault;
  stall.detail = "stall sigstop (the first process with owner id pod-0)";
  d.append_history(stall);
  const std::int64_t seq_at_stall = d.last_seq("A");
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * settings.lease_ttl_ms));

  // The replacement, same owner id: it takes A over as pod-0:N+1 and commits on.
  auto second = std::make_unique<WorkerProcess>(kSeqby, d.url(), d.category(), d.history_stream(),
                                                kOwner, settings, dir + "/second.log");
  ASSERT_TRUE(second->started());
  const bool taken = d.wait_until([&] {
    const std::string token = d.run({"GET", d.lease_key("A")}).str;
    return token.rfind(std::string(kOwner) + ":", 0) == 0 &&
           generation_of(token) > generation_of(old_token) && d.last_seq("A") > seq_at_stall;
  });
  ASSERT_TRUE(taken) << second->log();
  const std::string new_token = d.run({"GET", d.lease_key("A")}).str;

  // The first resumes beside it for two lease periods, then is killed (an operator's cleanup).
  first->continue_now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * settings.lease_ttl_ms));
  first->kill_now();

  const bool all = d.wait_until([&] {
    for (const std::string& key : keys) {
      if (d.last_seq(key) < kSeqMax) return false;
    }
    return true;
  });
  EXPECT_TRUE(all) << second->log();
  EXPECT_EQ(second->terminate(), 0) << second->log();
  for (const std::string& key : keys) {
    const std::vector<std::string> effects = d.effects(key);
    EXPECT_EQ(effects.size(), static_cast<std::size_t>(kSeqMax)) << key;
  }

  // The checker, as an operator runs it, judges the journal.
  const std::string saved = dir + "/journal.jsonl";
  const scenarios::CommandRun check = scenarios::run_command(
      kSeqby, {"check", "--redis", d.url(), "--category", d.category(), "--save", saved});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  std::printf("seqby check --redis URL --category %s (exit %d):\n%s", d.category().c_str(),
              check.exit_code, check.out.c_str());

  Result<std::vector<HistoryRecord>> history = properties::read_history_file(saved);
  ASSERT_TRUE(history.ok()) << history.error().message;
  const StaleSteps stale = stale_steps_of(history.value(), kOwner);
  std::string refused;
  std::uint64_t refused_total = 0;
  for (const auto& [op, n] : stale.refused) {
    refused += " " + op + "=" + std::to_string(n);
    refused_total += n;
  }
  std::printf(
      "same owner id %s at two generations: A held as %s when stopped, taken over as %s; "
      "generations of %s superseded by %s itself: %llu; steps of superseded generations after "
      "their supersession: refused%s (total %llu), accepted %zu, next events entered %zu\n",
      kOwner, old_token.c_str(), new_token.c_str(), kOwner, kOwner,
      static_cast<unsigned long long>(stale.superseded_by_same_owner), refused.c_str(),
      static_cast<unsigned long long>(refused_total), stale.accepted.size(), stale.entered.size());
  const std::uint64_t reached = properties::count_reached(history.value())
                                    .count(properties::Reached::same_owner_two_generations);
  std::printf("reached same_owner_two_generations=%llu (counted by the campaigns' code)\n",
              static_cast<unsigned long long>(reached));
  EXPECT_GE(reached, 1u);
  EXPECT_GE(stale.superseded_by_same_owner, 1u) << "the run never reached the situation";
  EXPECT_GE(refused_total, 1u) << "the stalled process never tried a fenced step";
  for (const std::string& step : stale.accepted) ADD_FAILURE() << "accepted: " << step;
  for (const std::string& step : stale.entered) ADD_FAILURE() << "entered a next event: " << step;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace seqby::apps
