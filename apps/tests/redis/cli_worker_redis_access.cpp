// `seqby worker` when Redis is out of reach or refuses it (issue 15 item 0), on real processes
// and a real redis-server: a worker pointed at a port nobody listens on says what it cannot
// reach and that it retries, a line per backoff step, and keeps retrying; a wrong or missing
// password ends it with exit status 3 and the refusal; under the least-privilege ACL of the
// README it processes events and records a halt, and an ACL missing one command a script calls
// (TIME) makes it log the refused script and Redis's error. Index members that are no partition
// are logged once each and get no lease, a process manager's values too. Servers are the test's
// own, on free loopback ports, stopped by pid; every wait is bounded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "seqby/core/engine_options.h"
#include "seqby/core/keyspace.h"
#include "seqby/runtime/free_port.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "worker_access.h"

namespace seqby::apps {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::testing::RedisServer;
using seqby::testing::RedisServerOptions;

using seqby::testing::exit_status_of;
using seqby::testing::kExitRedisRefused;
using seqby::testing::lines_with;

// The integer after " name=" in `line`, or -1.
long long field_of(const std::string& line, const std::string& name) {
  const std::size_t at = line.find(" " + name + "=");
  if (at == std::string::npos) return -1;
  return std::stoll(line.substr(at + name.size() + 2));
}

TEST(WorkerRedisAccess, AWorkerThatCannotReachRedisSaysSoAndKeepsRetrying) {
  RedisServer server;  // the driver's own connection; the worker is pointed elsewhere
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "unreachable");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::uint16_t port = redis::free_loopback_port();  // nothing listens there
  ASSERT_NE(port, 0);
  const std::string nowhere = "redis://127.0.0.1:" + std::to_string(port);
  WorkerProcess* w = d.start_worker("w1", nowhere);
  ASSERT_NE(w, nullptr);
  const std::string head = "event=redis_unreachable link=commands redis=" + nowhere + " ";
  // Retrying: the lines of later attempts come too, up to the backoff's maximum (2000 ms after
  // about 2.5 s), the worker still running.
  ASSERT_TRUE(d.wait_until([&] {
    const std::vector<std::string> lines = lines_with(w->log(), head);
    return !lines.empty() && field_of(lines.back(), "retry_in_ms") == 2000;
  })) << w->log();
  EXPECT_TRUE(w->running()) << w->log();
  const std::string log = w->log();
  const std::vector<std::string> lines = lines_with(log, head);
  // What it cannot reach and why, and after which backoff it tries again.
  EXPECT_NE(lines.front().find(" attempt=1 retry_in_ms=20 error=\"connect to " + nowhere + ": "),
            std::string::npos)
      << lines.front();
  EXPECT_NE(lines.front().find("refused"), std::string::npos) << lines.front();
  // Not a flood: one line per backoff step, each step longer than the one before (at the
  // backoff's maximum of 2000 ms, one line a minute).
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_GT(field_of(lines[i], "attempt"), field_of(lines[i - 1], "attempt")) << log;
    const long long retry_ms = field_of(lines[i], "retry_in_ms");
    EXPECT_TRUE(retry_ms > field_of(lines[i - 1], "retry_in_ms") ||
                (retry_ms == 2000 && field_of(lines[i - 1], "retry_in_ms") < 2000))
        << "two lines for one backoff step\n"
        << log;
  }
  EXPECT_TRUE(lines_with(log, "event=redis_connected").empty()) << log;
  w->kill_now();  // by pid
}

TEST(WorkerRedisAccess, AWrongPasswordEndsTheWorkerWithStatus3AndTheRefusal) {
  RedisServerOptions options;
  options.own = true;
  options.password = "right-secret";
  RedisServer server(options);
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "wrong_password");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string port = std::to_string(server.port());

  WorkerProcess* wrong = d.start_worker("w1", "redis://:wrong-secret@127.0.0.1:" + port);
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(exit_status_of(d, wrong), kExitRedisRefused) << wrong->log();
  const std::string log = wrong->log();
  const std::vector<std::string> refused = lines_with(log, "event=redis_refused link=commands ");
  ASSERT_FALSE(refused.empty()) << log;
  EXPECT_NE(refused.front().find("redis=redis://:***@127.0.0.1:" + port +
                                 " command=AUTH retrying=false error=\""),
            std::string::npos)
      << refused.front();
  EXPECT_NE(refused.front().find("WRONGPASS"), std::string::npos) << refused.front();
  EXPECT_NE(log.find("event=exit status=3 "), std::string::npos) << log;
  EXPECT_EQ(log.find("wrong-secret"), std::string::npos) << "the password is never logged\n" << log;

  // No password at all: the server's NOAUTH, the same ending.
  WorkerProcess* none = d.start_worker("w2", "redis://127.0.0.1:" + port);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(exit_status_of(d, none), kExitRedisRefused) << none->log();
  const std::vector<std::string> noauth = lines_with(none->log(), "event=redis_refused ");
  ASSERT_FALSE(noauth.empty()) << none->log();
  EXPECT_NE(noauth.front().find("command=PING retrying=false"), std::string::npos) << noauth[0];
  EXPECT_NE(noauth.front().find("NOAUTH"), std::string::npos) << noauth.front();
}

// --cluster given for a server that is no cluster node: no slot map to route by, which retrying
// cannot change. The worker says which server answered what, once, and exits 3.
TEST(WorkerRedisAccess, AClusterWorkerOnAServerWithoutClusterSupportExits3AndSaysSo) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  WorkerSettings settings;
  settings.extra_flags = {"--cluster", "--key-layout", "cluster"};
  RedisScenarioDriver d(server.url(), kSeqby, "not_a_cluster", settings);
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  WorkerProcess* w = d.start_worker("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(exit_status_of(d, w), kExitRedisRefused) << w->log();
  const std::vector<std::string> refused = lines_with(w->log(), "event=redis_refused ");
  ASSERT_EQ(refused.size(), 1u) << w->log();
  EXPECT_NE(refused.front().find(
                "link=commands redis=redis://127.0.0.1:" + std::to_string(server.port()) +
                " command=CLUSTER|SLOTS retrying=false error=\"ERR This instance "
                "has cluster support disabled\""),
            std::string::npos)
      << refused.front();
  EXPECT_NE(w->log().find("event=exit status=3 "), std::string::npos) << w->log();
}

// A cluster worker whose lease TTL is at or below its command timeout (2,000 ms) says so at start
// (event=lease_ttl_at_risk): one stopped master would hold a heartbeat round past every lease.
// Just above it, or on one server, no such line. The cluster workers here exit 3 on their own
// (the server has no cluster support); the one-server worker is stopped once it has started.
TEST(WorkerRedisAccess, AClusterWorkerWhoseLeaseTtlIsAtOrBelowItsCommandTimeoutSaysSoAtStart) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const auto log_of = [&](std::uint64_t ttl, bool cluster) -> std::string {
    WorkerSettings settings;
    settings.lease_ttl_ms = ttl;
    if (cluster) settings.extra_flags = {"--cluster", "--key-layout", "cluster"};
    RedisScenarioDriver d(server.url(), kSeqby, "ttl_" + std::to_string(ttl), settings);
    EXPECT_TRUE(d.ready().ok()) << d.ready().error().message;
    WorkerProcess* w = d.start_worker("w1");
    EXPECT_NE(w, nullptr);
    if (w == nullptr) return "";
    if (cluster) {
      EXPECT_EQ(exit_status_of(d, w), kExitRedisRefused) << w->log();
    } else {
      EXPECT_TRUE(d.wait_until([&] { return !lines_with(w->log(), "event=start ").empty(); }))
          << w->log();
      EXPECT_TRUE(d.stop_all().empty()) << d.logs();
    }
    return w->log();
  };
  const std::string at = log_of(2000, true);
  const std::vector<std::string> warned = lines_with(at, "event=lease_ttl_at_risk ");
  ASSERT_EQ(warned.size(), 1u) << at;
  EXPECT_NE(warned.front().find("lease_ttl_ms=2000 command_timeout_ms=2000 warning=\""),
            std::string::npos)
      << warned.front();
  EXPECT_NE(warned.front().find("set --lease-ttl-ms well above 2000"), std::string::npos)
      << warned.front();
  const std::string below = log_of(1000, true);
  EXPECT_EQ(lines_with(below, "event=lease_ttl_at_risk ").size(), 1u) << below;
  const std::string above = log_of(2001, true);
  EXPECT_TRUE(lines_with(above, "event=lease_ttl_at_risk ").empty()) << above;
  EXPECT_FALSE(lines_with(above, "event=start ").empty()) << above;
  const std::string one_server = log_of(1000, false);
  EXPECT_TRUE(lines_with(one_server, "event=lease_ttl_at_risk ").empty()) << one_server;
  EXPECT_FALSE(lines_with(one_server, "event=start ").empty()) << one_server;
}

// The least-privilege ACL of README.md "seqby worker" (worker_access.h), on the category's keys
// and the history stream. `without` leaves one command out.
std::vector<std::string> worker_acl(const std::string& user, const std::string& password,
                                    const RedisScenarioDriver& d, const std::string& without) {
  return seqby::testing::acl_setuser(user, password, seqby::testing::worker_acl_commands(),
                                     {d.category() + ":*", d.history_stream()}, without);
}

// A redis-server of its own (its own ACL users) and worker "w1" running as user seqby-worker
// under the least-privilege ACL less `without` (worker_acl).
struct WorkerUnderAcl {
  explicit WorkerUnderAcl(std::string label) : label_(std::move(label)) {}

  ::testing::AssertionResult start(const std::string& without) {
    if (!server_.ok()) return ::testing::AssertionFailure() << server_.error();
    driver_.emplace(server_.url(), kSeqby, label_);
    if (!d().ready().ok()) return ::testing::AssertionFailure() << d().ready().error().message;
    const redis::Reply made = d().run(worker_acl("seqby-worker", "w-pass", d(), without));
    if (made.str != "OK") return ::testing::AssertionFailure() << redis::to_string(made);
    w = d().start_worker("w1",
                         "redis://seqby-worker:w-pass@127.0.0.1:" + std::to_string(server_.port()));
    if (w == nullptr) return ::testing::AssertionFailure() << "worker w1 did not start";
    return ::testing::AssertionSuccess();
  }
  // REQUIRES: start() was called.
  RedisScenarioDriver& d() { return *driver_; }
  std::uint16_t port() const { return server_.port(); }

  WorkerProcess* w = nullptr;

 private:
  static RedisServerOptions own_users() {
    RedisServerOptions options;
    options.own = true;
    return options;
  }
  const std::string label_;
  RedisServer server_{own_users()};
  std::optional<RedisScenarioDriver> driver_;  // declared after server_: destroyed before it
};

// A poison event halts its partition: the halt record is written, which needs TIME.
TEST(WorkerRedisAccess, UnderTheLeastPrivilegeAclAWorkerProcessesEventsAndRecordsAHalt) {
  WorkerUnderAcl acl("least_privilege");
  ASSERT_TRUE(acl.start(""));
  RedisScenarioDriver& d = acl.d();
  WorkerProcess* w = acl.w;
  std::vector<PublishSpec> events;
  for (std::int64_t seq = 1; seq <= 5; ++seq) events.push_back(PublishSpec{"A", seq, 0, false});
  events.push_back(PublishSpec{"B", 1, 0, false});
  events.push_back(PublishSpec{"B", 2, 0, true});  // poison: B halts at seq 2
  ASSERT_TRUE(d.publish(events).ok());
  const std::string halt_key = halt_key_name(PartitionRef{d.category(), "B"}, d.group());
  EXPECT_TRUE(d.wait_until([&] {
    return d.last_seq("A") == 5 && d.run({"EXISTS", halt_key}).integer == 1;
  })) << "A committed up to "
      << d.last_seq("A") << "\n"
      << d.logs();
  EXPECT_EQ(d.last_seq("B"), 1);
  EXPECT_FALSE(lines_with(w->log(), "event=halt category=" + d.category() + " key=B ").empty())
      << w->log();
  // The halted entry stays pending, and nothing after it is left unread.
  EXPECT_TRUE(d.wait_until([&] {
    return !lines_with(w->log(), "event=halt_figures category=" + d.category() + " key=B ").empty();
  })) << w->log();
  const std::vector<std::string> figures =
      lines_with(w->log(), "event=halt_figures category=" + d.category() + " key=B ");
  ASSERT_FALSE(figures.empty()) << w->log();
  EXPECT_NE(figures.front().find(" pending=1 lag=0"), std::string::npos) << figures.front();
  EXPECT_TRUE(lines_with(w->log(), "event=redis_command_refused").empty()) << w->log();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

// `seqby publish` under the least privilege README.md gives a publisher: it appends and indexes,
// journal included, and nothing is denied; a worker then serves what it published.
TEST(WorkerRedisAccess, UnderItsLeastPrivilegeAclSeqbyPublishAppendsAndIndexes) {
  WorkerUnderAcl acl("publisher_acl");
  ASSERT_TRUE(acl.start(""));
  RedisScenarioDriver& d = acl.d();
  const redis::Reply made = d.run(
      seqby::testing::acl_setuser("seqby-publisher", "p-pass",
                                  seqby::testing::publisher_acl_commands(), {d.category() + ":*"}));
  ASSERT_EQ(made.str, "OK") << redis::to_string(made);
  ASSERT_EQ(d.run({"ACL", "LOG", "RESET"}).str, "OK");
  const std::string url = "redis://seqby-publisher:p-pass@127.0.0.1:" + std::to_string(acl.port());
  const scenarios::CommandRun published =
      scenarios::run_command(kSeqby, {"publish", "--redis", url, "--category", d.category(),
                                      "--key", "A", "--count", "3", "--journal-maxlen", "100"});
  ASSERT_EQ(published.exit_code, 0) << published.err;
  EXPECT_EQ(d.run({"XLEN", d.partition("A").stream()}).integer, 3);
  EXPECT_EQ(d.run({"SISMEMBER", d.partition("A").index(), "A"}).integer, 1);
  EXPECT_TRUE(d.run({"ACL", "LOG"}).elements.empty()) << redis::to_string(d.run({"ACL", "LOG"}));
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("A") == 3; })) << acl.w->log();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

// A publisher whose ACL lacks one command of the publish (SADD: the index), or one of its keys
// (the journal's), is refused whole: nothing appended, nothing indexed. Redis does not undo a
// script's writes before a refused call, so publish.lua asks for each command it will run before
// its first write (redis.acl_check_cmd), and the error names the command and its key; without
// that the entry was appended and never indexed, and a publisher retrying after the ACL was
// mended appended it twice.
TEST(WorkerRedisAccess, APublishRefusedByTheAclWritesNothing) {
  WorkerUnderAcl acl("publisher_without_sadd");
  ASSERT_TRUE(acl.start(""));
  RedisScenarioDriver& d = acl.d();
  const redis::Reply made = d.run(seqby::testing::acl_setuser(
      "seqby-publisher", "p-pass", seqby::testing::publisher_acl_commands(), {d.category() + ":*"},
      "sadd"));
  ASSERT_EQ(made.str, "OK") << redis::to_string(made);
  const std::string url = "redis://seqby-publisher:p-pass@127.0.0.1:" + std::to_string(acl.port());
  for (const char* journal : {"0", "100"}) {
    const scenarios::CommandRun published =
        scenarios::run_command(kSeqby, {"publish", "--redis", url, "--category", d.category(),
                                        "--key", "A", "--journal-maxlen", journal});
    EXPECT_NE(published.exit_code, 0) << published.out;
    EXPECT_NE(published.err.find("'sadd'"), std::string::npos) << published.err;
    EXPECT_NE(published.err.find(d.partition("A").index()), std::string::npos) << published.err;
    EXPECT_EQ(d.run({"EXISTS", d.partition("A").stream()}).integer, 0) << "journal " << journal;
    EXPECT_EQ(d.run({"SISMEMBER", d.partition("A").index(), "A"}).integer, 0);
    EXPECT_EQ(d.run({"EXISTS", journal_stream_name(d.partition("A"))}).integer, 0);
  }
  // Every command granted, but keys only the stream and the index: Redis checks a script's
  // KEYS before it runs, so the journal's key outside the ACL refuses the whole publish (what
  // lib/permitted.lua leaves to Redis).
  const redis::Reply narrowed = d.run(seqby::testing::acl_setuser(
      "seqby-publisher", "p-pass", seqby::testing::publisher_acl_commands(),
      {d.partition("B").stream(), d.partition("B").index()}));
  ASSERT_EQ(narrowed.str, "OK") << redis::to_string(narrowed);
  const scenarios::CommandRun journaled =
      scenarios::run_command(kSeqby, {"publish", "--redis", url, "--category", d.category(),
                                      "--key", "B", "--journal-maxlen", "100"});
  EXPECT_NE(journaled.exit_code, 0) << journaled.out;
  EXPECT_NE(journaled.err.find("NOPERM"), std::string::npos) << journaled.err;
  EXPECT_EQ(d.run({"EXISTS", d.partition("B").stream()}).integer, 0);
  EXPECT_EQ(d.run({"SISMEMBER", d.partition("B").index(), "B"}).integer, 0);
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

// The least privilege of the releases before renew_many read its leases with MGET, kept through
// a rolling upgrade: the heartbeat still renews every lease (one GET each), so the worker keeps
// its leases well past their TTL (1000 ms) and nothing is refused or denied.
TEST(WorkerRedisAccess, UnderAnAclWithoutMgetLeasesAreStillRenewed) {
  WorkerUnderAcl acl("acl_without_mget");
  ASSERT_TRUE(acl.start("mget"));
  RedisScenarioDriver& d = acl.d();
  WorkerProcess* w = acl.w;
  ASSERT_TRUE(d.publish({PublishSpec{"A", 1, 0, false}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("A") == 1; })) << w->log();
  const std::string token = d.run({"GET", d.lease_key("A")}).str;
  ASSERT_FALSE(token.empty());
  // Three TTLs: without a renewal the lease would have lapsed and been taken again.
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  EXPECT_EQ(d.run({"GET", d.lease_key("A")}).str, token) << w->log();
  ASSERT_TRUE(d.publish({PublishSpec{"A", 2, 0, false}}).ok());
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("A") == 2; })) << w->log();
  EXPECT_TRUE(lines_with(w->log(), "event=redis_command_refused").empty()) << w->log();
  // Nor denied each heartbeat: renew_many asks whether it may MGET before it does, so the
  // server's ACL LOG holds no denial.
  const redis::Reply denials = d.run({"ACL", "LOG"});
  EXPECT_TRUE(denials.elements.empty()) << redis::to_string(denials);
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

// The least privilege of the releases before discovery counted the index (no +scard), kept
// through a rolling upgrade: past kDiscoveryCountedIndexMin keys the worker's first count is
// refused, once, and it reads the whole index every cycle as before, so a key published later is
// found and served. Sent each cycle, the refused count was an ACL LOG denial and a log line a
// cycle.
TEST(WorkerRedisAccess, UnderAnAclWithoutScardTheIndexIsReadWholeAsBefore) {
  WorkerUnderAcl acl("acl_without_scard");
  ASSERT_TRUE(acl.start("scard"));
  RedisScenarioDriver& d = acl.d();
  WorkerProcess* w = acl.w;
  const auto keys = static_cast<int>(kDiscoveryCountedIndexMin);
  for (int i = 0; i < keys; ++i) {
    const PartitionRef partition = d.partition("p" + std::to_string(i));
    d.run({"XGROUP", "CREATE", partition.stream(), d.group(), "0", "MKSTREAM"});
    d.run({"SADD", partition.index(), partition.key});
  }
  const std::string last = "p" + std::to_string(keys - 1);
  ASSERT_TRUE(d.wait_until([&] {
    return d.run({"EXISTS", d.lease_key("p0")}).integer == 1 &&
           d.run({"EXISTS", d.lease_key(last)}).integer == 1;
  })) << w->log();
  // Discovery cycles with 1,000 keys in the index: each would count it.
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));
  ASSERT_TRUE(d.publish({PublishSpec{"Z", 1, 0, false}}).ok());
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("Z") == 1; })) << w->log();

  const redis::Reply denials = d.run({"ACL", "LOG"});
  ASSERT_EQ(denials.elements.size(), 1u) << redis::to_string(denials);
  const redis::Reply& entry = denials.elements[0];
  for (std::size_t i = 0; i + 1 < entry.elements.size(); i += 2) {
    if (entry.elements[i].str == "object") {
      EXPECT_EQ(entry.elements[i + 1].str, "scard");
    }
    if (entry.elements[i].str == "count") {
      EXPECT_EQ(entry.elements[i + 1].integer, 1);
    }
  }
  EXPECT_EQ(lines_with(w->log(), "event=redis_command_refused").size(), 1u) << w->log();
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

TEST(WorkerRedisAccess, AnAclWithoutTimeMakesTheRefusedHaltScriptALogLine) {
  WorkerUnderAcl acl("acl_without_time");
  ASSERT_TRUE(acl.start("time"));
  RedisScenarioDriver& d = acl.d();
  WorkerProcess* w = acl.w;
  ASSERT_TRUE(d.publish({PublishSpec{"A", 1, 0, false}, PublishSpec{"A", 2, 0, true}}).ok());
  const std::string refused = "event=redis_command_refused link=commands script=record_halt ";
  EXPECT_TRUE(d.wait_until([&] { return !lines_with(w->log(), refused).empty(); })) << w->log();
  const std::vector<std::string> lines = lines_with(w->log(), refused);
  ASSERT_FALSE(lines.empty());
  // Redis 7.0 says "ERR The user executing the script can't run this command or subcommand";
  // later versions answer NOPERM naming the command.
  EXPECT_TRUE(lines.front().find("can't run this command") != std::string::npos ||
              lines.front().find("NOPERM") != std::string::npos)
      << lines.front();
  EXPECT_EQ(d.last_seq("A"), 1);  // the events before the poison one were processed
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

// Members of the index that cannot be partitions: a:b and __partitions__ (no partition key), one
// with no stream, one whose key is a string. Each is logged once, none gets a lease, no empty
// stream is created, and the good partition is served meanwhile.
TEST(WorkerRedisAccess, IndexMembersThatAreNoPartitionAreLoggedOnceAndGetNoLease) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "bad_members");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string index = partition_index_name(d.category());
  d.run({"SADD", index, "a:b", "__partitions__", "nostream", "text"});
  d.run({"SET", partition_stream_name(d.category(), "text"), "a string"});
  WorkerProcess* w = d.start_worker("w1");
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(d.publish({PublishSpec{"A", 1, 0, false}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("A") == 1; })) << w->log();
  // Several discovery cycles (250 ms each) pass: still one line per member.
  ASSERT_TRUE(d.publish({PublishSpec{"A", 2, 0, false}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("A") == 2; })) << w->log();
  const std::string log = w->log();
  const std::map<std::string, std::string> why = {
      {"nostream", "no stream " + d.category() + ":nostream"},
      {"text", d.category() + ":text is a string, not a stream"}};
  for (const auto& [key, reason] : why) {
    const std::vector<std::string> lines =
        lines_with(log, "event=index_member_skipped category=" + d.category() + " key=\"" + key);
    ASSERT_EQ(lines.size(), 1u) << log;
    EXPECT_NE(lines.front().find("reason=\"" + reason), std::string::npos) << lines.front();
    EXPECT_EQ(d.lease_owner(key), "") << key;
  }
  for (const std::string key : {"a:b", "__partitions__"}) {
    const std::vector<std::string> lines = lines_with(log, "index member of " + index);
    std::size_t count = 0;
    for (const std::string& line : lines) {
      count += line.find("key \"" + key + "\": rule") != std::string::npos;
    }
    EXPECT_EQ(count, 1u) << key << "\n" << log;
  }
  EXPECT_EQ(d.run({"EXISTS", partition_stream_name(d.category(), "nostream")}).integer, 0);
  EXPECT_EQ(d.run({"TYPE", partition_stream_name(d.category(), "text")}).str, "string");
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

// A process manager's correlation value X is served while one of its categories holds a stream
// C:X; a value in an index with no stream in any category, or whose C:X is a string, gets no
// lease, and is logged once.
TEST(WorkerRedisAccess, AProcessManagerTakesNoLeaseForAValueWithoutAnyStream) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  WorkerSettings settings;
  settings.group = "pmbad" + std::to_string(::getpid());  // __pm__:G is outside the category
  RedisScenarioDriver d(server.url(), kSeqby, "pm_bad_members", settings);
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string order = d.category_named("order");
  const std::string payment = d.category_named("payment");
  settings.pm_categories = {order, payment};
  d.set_settings(settings);
  d.run({"SADD", partition_index_name(order), "ghost", "text"});
  d.run({"SET", partition_stream_name(payment, "text"), "a string"});
  WorkerProcess* w = d.start_worker("w1");
  ASSERT_NE(w, nullptr);
  ASSERT_TRUE(d.publish({PublishSpec{"A", 1, 0, false, payment}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("A", payment) == 1; })) << w->log();
  ASSERT_TRUE(d.publish({PublishSpec{"A", 1, 0, false, order}}).ok());
  ASSERT_TRUE(d.wait_until([&] { return d.last_seq("A", order) == 1; })) << w->log();
  const std::string log = w->log();
  const std::map<std::string, std::string> why = {
      {"ghost", "no stream " + order + ":ghost, " + payment + ":ghost"},
      {"text", payment + ":text is a string, not a stream"}};
  for (const auto& [key, reason] : why) {
    const std::vector<std::string> lines = lines_with(log, " key=\"" + key + "\" ");
    ASSERT_EQ(lines.size(), 1u) << log;
    EXPECT_NE(lines.front().find("event=index_member_skipped category=" +
                                 pm_lease_category(settings.group)),
              std::string::npos)
        << lines.front();
    EXPECT_NE(lines.front().find("reason=\"" + reason), std::string::npos) << lines.front();
    EXPECT_EQ(d.lease_owner(key), "") << key;
  }
  EXPECT_EQ(d.run({"EXISTS", partition_stream_name(payment, "ghost")}).integer, 0);
  EXPECT_TRUE(d.stop_all().empty()) << d.logs();
}

}  // namespace
}  // namespace seqby::apps
