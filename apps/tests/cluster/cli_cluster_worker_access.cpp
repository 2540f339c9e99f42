// A `seqby worker` with the cluster layout under the least privilege README.md "The least
// privilege a worker needs" gives it (tests/support/worker_access.h), granted on every node of a
// real Redis Cluster (3 masters): it serves partitions whose slots are on different masters in
// order, reaps them once they are cold (--reap-idle-ms), and no node denies it anything (each
// node's ACL LOG stays empty). Under the ACL of a worker on one server (no CLUSTER SLOTS), or with
// a wrong password, it cannot route a command: it says which node refused what and exits with
// status 3, as a worker on one server does. With --metrics-addr, once it serves, /readyz answers
// 200 (connected, and a whole discovery cycle done: on a cluster discovery reads the index with
// its reaping set, one SUNION) and /metrics counts what it handled and each partition's pending
// count and lag, 0 once all is handled; a poison event's halt is logged with its stream's
// figures, read from the master of its slot, and `seqby timeline --redis --cluster` draws the
// run's journal from every master. A process manager over two categories is ready
// and reads each of its streams' figures the same way, and `seqby publish --cluster` works under
// the least privilege of a cluster publisher and writes nothing when refused. With a slot caught
// mid-migration (every key moved, the slot still migrating) the worker serves through the ASKs
// and counts them in /metrics, and without +asking it is denied until the move ends; a reap left
// half done by a dead reaper is resumed, and without +sismember denied. Every wait
// is bounded; the nodes, the worker and its metrics port are the test's own, stopped by pid.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "seqby/core/keyspace.h"
#include "seqby/runtime/free_port.h"
#include "seqby/scenarios/redis_cluster.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "wait_and_read.h"
#include "worker_access.h"
#include "worker_http.h"

namespace seqby::apps {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisCluster;
using scenarios::RedisClusterOptions;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;

using seqby::testing::exit_status_of;
using seqby::testing::http_get;
using seqby::testing::kExitRedisRefused;
using seqby::testing::lines_with;
using seqby::testing::sample;

constexpr std::uint64_t kReapIdleMs = 300;
const std::vector<std::string> kKeys = {"A", "B", "C", "D", "E", "F"};
constexpr std::int64_t kEvents = 3;

// A cluster of 3 masters (no replicas: nothing here fails over) and a driver on it with the
// cluster layout; start_worker_with() makes user seqby-worker on every node first.
class ClusterWorker : public ::testing::Test {
 protected:
  static RedisClusterOptions masters_only() {
    RedisClusterOptions options;
    options.replicas_per_master = 0;
    return options;
  }

  void SetUp() override {
    ASSERT_TRUE(cluster_.ok()) << cluster_.error();
    WorkerSettings settings;
    settings.cluster = true;
    settings.reap_idle_ms = kReapIdleMs;
    seed_ = "127.0.0.1:" + std::to_string(cluster_.ports().front());
    driver_.emplace("redis://" + seed_, kSeqby, "cluster_acl", settings);
    ASSERT_TRUE(d().ready().ok()) << d().ready().error().message;
  }

  // Makes user seqby-worker (password w-pass) on every node and starts worker `owner` as that
  // user with `password`.
  WorkerProcess* start_worker_with(const std::vector<std::string>& commands,
                                   const std::string& owner = "w1",
                                   const std::string& password = "w-pass") {
    EXPECT_EQ(seqby::testing::acl_on_every_node(
                  cluster_.ports(), seqby::testing::acl_setuser(
                                        "seqby-worker", "w-pass", commands,
                                        seqby::testing::cluster_worker_acl_keys(d().category()))),
              "");
    return d().start_worker(owner, "redis://seqby-worker:" + password + "@" + seed_);
  }

  // Every node's ACL LOG entries (denials).
  std::vector<std::string> denials() { return seqby::testing::acl_denials(cluster_.ports()); }
  // Whether some node's ACL LOG holds `line` ("PORT reason object").
  bool denied(const std::string& line) {
    const std::vector<std::string> all = denials();
    return std::find(all.begin(), all.end(), line) != all.end();
  }

  // Makes user seqby-publisher (password p-pass) on every node with a cluster publisher's
  // commands but `without` ("" for none): "" when every node said OK, as acl_on_every_node.
  std::string make_publisher(const std::string& without = "") {
    return seqby::testing::acl_on_every_node(
        cluster_.ports(),
        seqby::testing::acl_setuser(
            "seqby-publisher", "p-pass", seqby::testing::cluster_publisher_acl_commands(),
            seqby::testing::cluster_worker_acl_keys(d().category()), without));
  }
  // `seqby publish --cluster` of one event (or `extra`'s count) to `key`, as seqby-publisher.
  scenarios::CommandRun publish_as_publisher(const std::string& key,
                                             const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "publish",    "--redis",      "redis://seqby-publisher:p-pass@" + seed_,
        "--cluster",  "--key-layout", "cluster",
        "--category", d().category(), "--key",
        key};
    args.insert(args.end(), extra.begin(), extra.end());
    return scenarios::run_command(kSeqby, args);
  }

  std::set<std::uint16_t> masters_of_keys() {
    std::set<std::uint16_t> masters;
    for (const std::string& key : kKeys) {
      const auto master = cluster_.master_of_slot(key_hash_slot(d().partition(key).stream()));
      if (master) masters.insert(*master);
    }
    return masters;
  }

  RedisScenarioDriver& d() { return *driver_; }

  RedisCluster cluster_{masters_only()};
  std::string seed_;
  std::optional<RedisScenarioDriver> driver_;  // declared after cluster_: destroyed before it
};

TEST_F(ClusterWorker, UnderTheLeastPrivilegeAclItServesInOrderAndReapsWithNothingDenied) {
  WorkerProcess* w = start_worker_with(seqby::testing::cluster_worker_acl_all_commands());
  ASSERT_NE(w, nullptr);
  ASSERT_GE(masters_of_keys().size(), 2u) << "the keys' slots are meant to span masters";
  std::vector<PublishSpec> events;
  for (std::int64_t seq = 1; seq <= kEvents; ++seq) {
    for (const std::string& key : kKeys) events.push_back(PublishSpec{key, seq, 0, false});
  }
  ASSERT_TRUE(d().publish(events).ok());
  EXPECT_TRUE(d().wait_until([&] {
    for (const std::string& key : kKeys) {
      if (d().last_seq(key) != kEvents) return false;
    }
    return true;
  })) << d().logs();
  // Cold for reap_idle_ms, each partition is reaped: its stream is gone and its key is out of
  // the index and of the reaping set.
  const std::string index = partition_index_name(d().category());
  const std::string reaping = reaping_set_name(d().category());
  EXPECT_TRUE(d().wait_until([&] {
    for (const std::string& key : kKeys) {
      if (d().run({"EXISTS", d().partition(key).stream()}).integer != 0) return false;
      if (d().run({"SISMEMBER", index, key}).integer != 0) return false;
      if (d().run({"SISMEMBER", reaping, key}).integer != 0) return false;
    }
    return true;
  })) << d().logs();
  EXPECT_TRUE(lines_with(w->log(), "event=redis_command_refused").empty()) << w->log();
  EXPECT_TRUE(denials().empty()) << ::testing::PrintToString(denials());
  EXPECT_TRUE(d().stop_all().empty()) << d().logs();
}

// A reap resumed: a reaper that died between its first step and its last left key A in the
// reaping set (the SMOVE below plays it). Discovery still finds A there; the worker serves it and,
// once A is cold, its reap_begin takes the key as it is (SISMEMBER: the README's +sismember) and
// finishes the reap. Without +sismember the index's master denies it, and A stays in the
// reaping set.
TEST_F(ClusterWorker, AReapLeftHalfDoneIsResumedUnderTheClusterAclAndDeniedWithoutSismember) {
  const std::string index = partition_index_name(d().category());
  const std::string reaping = reaping_set_name(d().category());
  for (const bool with_sismember : {true, false}) {
    std::vector<std::string> commands;
    for (const std::string& command : seqby::testing::cluster_worker_acl_all_commands()) {
      if (with_sismember || command != "sismember") commands.push_back(command);
    }
    const std::string owner = with_sismember ? "w1" : "w2";
    const std::string key = with_sismember ? "A" : "B";
    WorkerProcess* w = start_worker_with(commands, owner);
    ASSERT_NE(w, nullptr);
    ASSERT_TRUE(d().publish({PublishSpec{key, 1, 0, false}}).ok());
    const std::uint16_t index_master = cluster_.master_of_slot(key_hash_slot(index)).value_or(0);
    const Result<redis::Reply> moved =
        RedisCluster::run(index_master, {"SMOVE", index, reaping, key});
    ASSERT_TRUE(moved.ok()) << moved.error().message;
    ASSERT_EQ(moved.value().integer, 1) << redis::to_string(moved.value());
    EXPECT_TRUE(d().wait_until([&] { return d().last_seq(key) == 1; })) << w->log();
    if (with_sismember) {
      EXPECT_TRUE(d().wait_until([&] {
        return d().run({"EXISTS", d().partition(key).stream()}).integer == 0 &&
               d().run({"SISMEMBER", reaping, key}).integer == 0 &&
               d().run({"SISMEMBER", index, key}).integer == 0;
      })) << w->log();
      EXPECT_TRUE(denials().empty()) << ::testing::PrintToString(denials());
    } else {
      const std::string sismember = std::to_string(index_master) + " command sismember";
      EXPECT_TRUE(d().wait_until([&] { return denied(sismember); }))
          << ::testing::PrintToString(denials());
      EXPECT_EQ(d().run({"SISMEMBER", reaping, key}).integer, 1);
    }
    EXPECT_TRUE(d().stop_all().empty()) << d().logs();
  }
}

// The ACL of a worker on one server has no CLUSTER SLOTS: the worker cannot learn which master
// serves a slot, so it routes nothing. It names the node and the refusal and exits 3, and so does
// a worker with a wrong password, which every node refuses at AUTH.
TEST_F(ClusterWorker, WithoutTheSlotMapOrWithAWrongPasswordTheWorkerExits3AndSaysWhy) {
  WorkerProcess* w = start_worker_with(seqby::testing::worker_acl_commands());
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(d().publish({PublishSpec{"A", 1, 0, false}}).ok());
  EXPECT_EQ(exit_status_of(d(), w), kExitRedisRefused) << w->log();
  std::vector<std::string> refused = lines_with(w->log(), "event=redis_refused link=commands ");
  ASSERT_EQ(refused.size(), 1u) << w->log();
  EXPECT_NE(refused.front().find("redis=redis://seqby-worker:***@" + seed_ +
                                 " command=CLUSTER|SLOTS retrying=false error=\"NOPERM"),
            std::string::npos)
      << refused.front();
  EXPECT_NE(w->log().find("event=exit status=3 "), std::string::npos) << w->log();
  EXPECT_EQ(d().last_seq("A"), 0);

  WorkerProcess* wrong = start_worker_with(seqby::testing::worker_acl_commands(), "w2", "wrong");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(exit_status_of(d(), wrong), kExitRedisRefused) << wrong->log();
  refused = lines_with(wrong->log(), "event=redis_refused link=commands ");
  ASSERT_EQ(refused.size(), 1u) << wrong->log();
  EXPECT_NE(refused.front().find("redis=redis://seqby-worker:***@" + seed_ + " command=AUTH "),
            std::string::npos)
      << refused.front();
  EXPECT_NE(refused.front().find("WRONGPASS"), std::string::npos) << refused.front();
  EXPECT_EQ(wrong->log().find(":wrong@"), std::string::npos) << "the password is never logged\n"
                                                             << wrong->log();
}

// A worker as the default user (readiness, not privilege).
TEST_F(ClusterWorker, AServingClusterWorkerIsReadyAndCountsWhatItHandled) {
  const std::uint16_t metrics_port = redis::free_loopback_port();
  ASSERT_NE(metrics_port, 0);
  WorkerSettings settings = d().settings();
  settings.reap_idle_ms = 0;  // the partitions stay, and so do their gauges
  settings.extra_flags = {"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port)};
  d().set_settings(settings);
  WorkerProcess* w = d().start_worker("w1");
  ASSERT_NE(w, nullptr);

  std::vector<PublishSpec> events;
  for (std::int64_t seq = 1; seq <= kEvents; ++seq) {
    for (const std::string& key : kKeys) events.push_back(PublishSpec{key, seq, 0, false});
  }
  ASSERT_TRUE(d().publish(events).ok());
  ASSERT_TRUE(d().publish({PublishSpec{"P", 1, 0, true}}).ok());  // poison: P halts
  EXPECT_TRUE(d().wait_until([&] {
    for (const std::string& key : kKeys) {
      if (d().last_seq(key) != kEvents) return false;
    }
    return true;
  })) << d().logs();

  std::string readyz;
  EXPECT_TRUE(d().wait_until([&] {
    const testing::HttpAnswer answer = http_get(metrics_port, "/readyz");
    readyz = std::to_string(answer.status) + " " + answer.body;
    return answer.status == 200;
  })) << "/readyz: "
      << readyz << "\n"
      << w->log();
  // Each partition's pending count and lag, read from its own master (XINFO GROUPS), every 2 s.
  std::string metrics;
  EXPECT_TRUE(d().wait_until([&] {
    metrics = http_get(metrics_port, "/metrics").body;
    for (const std::string& key : kKeys) {
      const std::string labels = "{category=\"" + d().category() + "\",key=\"" + key + "\"}";
      if (sample(metrics, "seqby_partition_pending" + labels) != 0 ||
          sample(metrics, "seqby_partition_lag" + labels) != 0) {
        return false;
      }
    }
    return true;
  })) << metrics;
  EXPECT_EQ(sample(metrics, "seqby_units_owned{kind=\"partition\"}"),
            static_cast<double>(kKeys.size() + 1))
      << metrics;
  EXPECT_EQ(sample(metrics, "seqby_units_halted"), 1) << metrics;
  // The halt's figures, read from P's own master: its entry stays pending, nothing is unread.
  const std::string halt = "event=halt_figures category=" + d().category() + " key=P ";
  EXPECT_TRUE(d().wait_until([&] { return !lines_with(w->log(), halt).empty(); })) << w->log();
  const std::vector<std::string> figures = lines_with(w->log(), halt);
  ASSERT_FALSE(figures.empty()) << w->log();
  EXPECT_NE(figures.front().find(" pending=1 lag=0"), std::string::npos) << figures.front();
  EXPECT_EQ(sample(metrics, "seqby_redis_connected{link=\"commands\"}"), 1) << metrics;
  EXPECT_EQ(sample(metrics, "seqby_ready"), 1) << metrics;
  EXPECT_EQ(sample(metrics, "seqby_events_handled_total{category=\"" + d().category() + "\"}"),
            static_cast<double>(events.size()))
      << metrics;
  EXPECT_TRUE(d().stop_all().empty()) << d().logs();

  // The run's journal, read from every master, drawn as the page of `seqby timeline`: a lane for
  // each key, the halted one included.
  const std::string page = cluster_.dir() + "/timeline.html";
  const scenarios::CommandRun drawn =
      scenarios::run_command(kSeqby, {"timeline", "--redis", "redis://" + seed_, "--cluster",
                                      "--category", d().category(), "-o", page});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  const std::string html = seqby::testing::read_file(page);
  std::vector<std::string> lanes = kKeys;
  lanes.push_back("P");
  for (const std::string& key : lanes) {
    EXPECT_NE(html.find("\"" + d().category() + ":" + key), std::string::npos)
        << "no lane for key " << key;
  }
}

// A process manager on a cluster: each correlation value has a stream in two categories, each on
// the master of its own slot. It is ready once a discovery cycle has read both indexes (one SUNION
// each), and samples every stream's figures by its cluster name.
TEST_F(ClusterWorker, AProcessManagerOnAClusterIsReadyAndReadsEachStreamsFigures) {
  const std::uint16_t metrics_port = redis::free_loopback_port();
  ASSERT_NE(metrics_port, 0);
  const std::string order = d().category_named("order");
  const std::string payment = d().category_named("payment");
  WorkerSettings pm = d().settings();
  pm.group = "fulfil";
  pm.pm_categories = {order, payment};
  pm.reap_idle_ms = 0;  // no reaping for a process manager
  pm.extra_flags = {"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port)};
  d().set_settings(pm);
  WorkerProcess* w = d().start_worker("fulfil-1");
  ASSERT_NE(w, nullptr);
  const std::vector<std::string> values = {"A", "B", "C"};
  std::vector<PublishSpec> events;
  for (const std::string& value : values) {
    events.push_back(PublishSpec{value, 1, 0, false, order});
    events.push_back(PublishSpec{value, 1, 0, false, payment});
  }
  ASSERT_TRUE(d().publish(events).ok());
  EXPECT_TRUE(d().wait_until([&] {
    for (const std::string& value : values) {
      if (d().last_seq(value, order) != 1 || d().last_seq(value, payment) != 1) return false;
    }
    return true;
  })) << d().logs();

  std::string metrics;
  EXPECT_TRUE(d().wait_until([&] {
    if (http_get(metrics_port, "/readyz").status != 200) return false;
    metrics = http_get(metrics_port, "/metrics").body;
    for (const std::string& category : {order, payment}) {
      for (const std::string& value : values) {
        const std::string labels = "{category=\"" + category + "\",key=\"" + value + "\"}";
        if (sample(metrics, "seqby_partition_pending" + labels) != 0 ||
            sample(metrics, "seqby_partition_lag" + labels) != 0) {
          return false;
        }
      }
    }
    return true;
  })) << "/readyz "
      << http_get(metrics_port, "/readyz").body << metrics << "\n"
      << w->log();
  EXPECT_EQ(sample(metrics, "seqby_units_owned{kind=\"process_manager\"}"),
            static_cast<double>(values.size()))
      << metrics;
  EXPECT_TRUE(d().stop_all().empty()) << d().logs();
}

// `seqby publish --cluster` under the least privilege README.md gives a cluster publisher, on
// every node: it appends to partitions on every master, through the publish intents in the
// index's slot, and no node denies it anything.
TEST_F(ClusterWorker, UnderItsLeastPrivilegeAclSeqbyPublishReachesEveryMaster) {
  ASSERT_EQ(make_publisher(), "");
  ASSERT_GE(masters_of_keys().size(), 2u) << "the keys' slots are meant to span masters";
  for (const std::string& key : kKeys) {
    const scenarios::CommandRun published =
        publish_as_publisher(key, {"--count", "2", "--journal-maxlen", "100"});
    ASSERT_EQ(published.exit_code, 0) << key << ": " << published.err;
    EXPECT_EQ(d().run({"XLEN", d().partition(key).stream()}).integer, 2) << key;
    EXPECT_EQ(d().run({"SISMEMBER", partition_index_name(d().category()), key}).integer, 1) << key;
  }
  EXPECT_TRUE(denials().empty()) << ::testing::PrintToString(denials());
}

// A slot caught mid-migration: every key of partition K's slot has moved to the importing master
// while the slot is still MIGRATING on the old one, so each of the worker's commands for K meets
// ASK there and goes again to the new one after an ASKING. `commands` is the worker's ACL on every
// node; it serves with --metrics-addr and without reaping (K's keys stay where they moved).
class SlotMidMigration : public ClusterWorker {
 protected:
  // Starts the worker, has it handle K's first event, then moves every key of K's slot.
  void begin(const std::vector<std::string>& commands) {
    metrics_port_ = redis::free_loopback_port();
    ASSERT_NE(metrics_port_, 0);
    WorkerSettings settings = d().settings();
    settings.reap_idle_ms = 0;
    settings.extra_flags = {"--metrics-addr", "127.0.0.1:" + std::to_string(metrics_port_)};
    d().set_settings(settings);
    w_ = start_worker_with(commands);
    ASSERT_NE(w_, nullptr);
    // A key outside the index's slot: discovery goes on as before.
    const std::uint16_t index_slot = key_hash_slot(partition_index_name(d().category()));
    for (const std::string& key : kKeys) {
      if (key_hash_slot(d().partition(key).stream()) != index_slot) {
        key_ = key;
        break;
      }
    }
    ASSERT_FALSE(key_.empty());
    ASSERT_TRUE(d().publish({PublishSpec{key_, 1, 0, false}}).ok());
    ASSERT_TRUE(d().wait_until([&] { return d().last_seq(key_) == 1; })) << w_->log();
    slot_ = key_hash_slot(d().partition(key_).stream());
    from_ = cluster_.master_of_slot(slot_).value_or(0);
    for (const std::uint16_t master : cluster_.masters()) {
      if (master != from_) to_ = master;
    }
    ASSERT_NE(from_, 0);
    ASSERT_NE(to_, 0);
    ASSERT_TRUE(cluster_.begin_slot_move(slot_, from_, to_)) << cluster_.error();
    ASSERT_TRUE(cluster_.migrate_slot_keys(slot_, from_, to_)) << cluster_.error();
  }

  double asks() {
    return sample(http_get(metrics_port_, "/metrics").body,
                  "seqby_cluster_redirections_total{kind=\"ask\"}");
  }

  WorkerProcess* w_ = nullptr;
  std::string key_;
  std::uint16_t slot_ = 0, from_ = 0, to_ = 0, metrics_port_ = 0;
};

// Under the cluster worker's ACL (+asking) the worker serves K through the ASKs, in order, no node
// denies it anything, and /metrics counts the ASKs it followed; once the move ends it serves K on
// the new master.
TEST_F(SlotMidMigration, UnderTheClusterAclTheWorkerServesThroughAskAndCountsIt) {
  begin(seqby::testing::cluster_worker_acl_all_commands());
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(d().publish({PublishSpec{key_, 2, 0, false}, PublishSpec{key_, 3, 0, false}}).ok());
  EXPECT_TRUE(d().wait_until([&] { return d().last_seq(key_) == 3; })) << w_->log();
  double followed = -1;
  EXPECT_TRUE(d().wait_until([&] {
    followed = asks();
    return followed > 0;
  })) << "seqby_cluster_redirections_total{kind=\"ask\"} "
      << followed;
  EXPECT_TRUE(denials().empty()) << ::testing::PrintToString(denials());
  ASSERT_TRUE(cluster_.finish_slot_move(slot_, from_, to_)) << cluster_.error();
  ASSERT_TRUE(d().publish({PublishSpec{key_, 4, 0, false}}).ok());
  EXPECT_TRUE(d().wait_until([&] { return d().last_seq(key_) == 4; })) << w_->log();
  EXPECT_EQ(d().effects(key_).size(), 4u);
  EXPECT_TRUE(denials().empty()) << ::testing::PrintToString(denials());
  EXPECT_TRUE(d().stop_all().empty()) << d().logs();
}

// Without +asking the new master refuses the worker's ASKING (a denial in its ACL LOG), so K is
// not served while the slot migrates: what the README's +asking is for. Once the move ends, K is
// served again.
TEST_F(SlotMidMigration, WithoutAskingInTheAclTheWorkerIsDeniedUntilTheMoveEnds) {
  std::vector<std::string> commands;
  for (const std::string& command : seqby::testing::cluster_worker_acl_all_commands()) {
    if (command != "asking") commands.push_back(command);
  }
  begin(commands);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(d().publish({PublishSpec{key_, 2, 0, false}}).ok());
  const std::string asking = std::to_string(to_) + " command asking";
  EXPECT_TRUE(d().wait_until([&] { return denied(asking); }))
      << ::testing::PrintToString(denials());
  EXPECT_EQ(d().last_seq(key_), 1) << w_->log();
  ASSERT_TRUE(cluster_.finish_slot_move(slot_, from_, to_)) << cluster_.error();
  EXPECT_TRUE(d().wait_until([&] { return d().last_seq(key_) == 2; })) << w_->log();
  EXPECT_TRUE(d().stop_all().empty()) << d().logs();
}

// A cluster publisher whose ACL lacks HINCRBY (the publish intent) is refused at the first step
// with nothing written: the key is not indexed, no intent is open, no entry appended, and the
// error names the command. Without the check before the first write, the key was indexed by the
// SADD that came before the refused HINCRBY.
TEST_F(ClusterWorker, APublishRefusedByTheAclWritesNothing) {
  ASSERT_EQ(make_publisher("hincrby"), "");
  const std::string key = kKeys.front();
  const scenarios::CommandRun published = publish_as_publisher(key);
  EXPECT_NE(published.exit_code, 0) << published.out;
  EXPECT_NE(published.err.find("'hincrby'"), std::string::npos) << published.err;
  EXPECT_EQ(d().run({"SISMEMBER", partition_index_name(d().category()), key}).integer, 0);
  EXPECT_EQ(d().run({"HEXISTS", publishing_hash_name(d().category()), key}).integer, 0);
  EXPECT_EQ(d().run({"EXISTS", d().partition(key).stream()}).integer, 0);
}

}  // namespace
}  // namespace seqby::apps
