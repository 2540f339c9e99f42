// Two real `seqby worker` processes against one redis-server: the ADR's ordering, exclusion and
// cross-key parallelism with both instances alive, and failover when the owner of a partition is
// killed (SIGKILL) or stalled past its lease (SIGSTOP, SIGCONT). The history is the Redis history
// stream both workers and the publisher append to; it is judged by the history checker. Every
// wait is bounded; nothing asserts a duration.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../../../apps/tests/unit/cli_run.h"
#include "redis_server.h"
#include "seqby/core/json_flat.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/markers.h"
#include "seqby/redis/blocking_redis.h"
#include "seqby/redis/hiredis_link.h"
#include "seqby/redis/real_runtime.h"
#include "seqby/redis/redis_broker.h"
#include "seqby/redis/redis_history.h"
#include "seqby/redis/worker.h"

namespace seqby::redis {
namespace {

using seqby::testing::RedisServer;

constexpr std::uint64_t kWaitMaxMs = 30000;

// One `seqby worker` child process; SIGKILLed when the test process dies or the object goes.
class WorkerProcess {
 public:
  WorkerProcess(const std::string& url, const std::string& category, const std::string& owner,
                const std::string& history_stream)
      : owner_(owner), log_path_("/tmp/seqby-two-instance-" + owner + ".log") {
    const std::vector<std::string> args{
        SEQBY_BINARY_DIR "/seqby", "worker", "--redis", url, "--category", category,
        "--group", "billing", "--sequential-by", "client_id", "--owner-id", owner,
        "--lease-ttl-ms", "1000", "--heartbeat-interval-ms", "250",
        "--discovery-interval-ms", "250", "--history-stream", history_stream};
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) ::dup2(fd, STDERR_FILENO);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~WorkerProcess() {
    if (!reaped_ && pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }
  const std::string& owner() const { return owner_; }

  // SIGTERM, then waits (bounded) for the exit status; -1 when it had to be killed.
  int terminate() {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 1500; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    reaped_ = true;
    return -1;
  }
  void stop_now() { RedisServer::stop_process(pid_); }
  void continue_now() { RedisServer::continue_process(pid_); }
  void kill_now() {
    RedisServer::kill_process(pid_);
    ::waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }
  std::string log() const {
    std::ifstream in(log_path_);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string owner_;
  std::string log_path_;
  pid_t pid_ = -1;
  bool reaped_ = false;
};

class TwoInstance : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(server_.ok()) << server_.error();
    category_ = "orders" + std::to_string(::getpid()) + "x" + std::to_string(++test_number_);
    history_ = "seqby:history:" + category_;
    Result<RedisConfig> config = parse_redis_url(server_.url());
    ASSERT_TRUE(config.ok());
    config_ = config.value();
    ASSERT_EQ(::access(SEQBY_BINARY_DIR "/seqby", X_OK), 0)
        << "build the seqby target first: " SEQBY_BINARY_DIR "/seqby";
  }

  Reply run(const Command& command) {
    BlockingRedis redis(config_);
    Result<Reply> reply = redis.execute(command);
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return reply.ok() ? reply.value() : Reply::nil();
  }

  // Publishes seq 1..count for every key, interleaved across keys, each with its publish record.
  void publish_interleaved(const std::vector<std::string>& keys, std::int64_t count,
                           std::int64_t delay_ms, const std::string& poison_key = "",
                           std::int64_t poison_seq = 0) {
    RealRuntime runtime;
    HiredisLink link(runtime, config_);
    for (std::int64_t seq = 1; seq <= count; ++seq) {
      for (const std::string& key : keys) {
        JsonObject data;
        data["client_id"] = key;
        data["seq"] = seq;
        data["delay_ms"] = delay_ms;
        const bool poison = key == poison_key && seq == poison_seq;
        if (poison) data["poison"] = true;
        Result<std::string> id = runtime.block_on(
            publish_recorded(link, PartitionRef{category_, key}, "charge",
                             encode_json_object(data), history_, "publisher", seq,
                             poison ? "poison" : ""));
        ASSERT_TRUE(id.ok()) << id.error().message;
      }
    }
  }

  std::int64_t last_seq(const std::string& key) {
    const Reply r = run({"HGET", sink_key_name(PartitionRef{category_, key}, "billing"), "last_seq"});
    return r.kind == Reply::Kind::bulk ? std::stoll(r.str) : 0;
  }

  // Polls `done` every 20 ms for at most kWaitMaxMs; false when it never held.
  bool wait_until(const std::function<bool()>& done) {
    for (std::uint64_t waited_ms = 0; waited_ms < kWaitMaxMs; waited_ms += 20) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  // True when `key` committed at least `seq` and a handler is inside the next event: the
  // in-progress marker names an event other than the last committed one.
  bool inside_after_commit(const std::string& key, std::int64_t seq) {
    const PartitionRef partition{category_, key};
    const std::int64_t last = last_seq(key);
    if (last < seq) return false;
    const Reply marker = run({"GET", inprogress_key_name(partition, "billing")});
    const Reply effect =
        run({"HGET", effects_hash_name(partition, "billing"), std::to_string(last)});
    if (marker.kind != Reply::Kind::bulk || effect.kind != Reply::Kind::bulk) return false;
    return marker.str.substr(marker.str.find(':') + 1) != effect.str;
  }

  // The owner id in the lease key's value O:N ("" when nobody holds it).
  std::string lease_owner(const std::string& key) {
    const Reply r = run({"GET", PartitionRef{category_, key}.lease()});
    if (r.kind != Reply::Kind::bulk) return "";
    return r.str.substr(0, r.str.rfind(':'));
  }

  void append_history(const HistoryRecord& record) {
    Command command{"XADD", history_, "*"};
    for (auto& [name, value] : history_fields(record)) {
      command.push_back(name);
      command.push_back(value);
    }
    run(command);
  }

  std::vector<HistoryRecord> read_history() {
    Result<std::vector<HistoryRecord>> history = history_from_xrange(run({"XRANGE", history_, "-", "+"}));
    EXPECT_TRUE(history.ok()) << history.error().message;
    return history.ok() ? history.value() : std::vector<HistoryRecord>{};
  }

  static std::string logs(const WorkerProcess& a, const WorkerProcess& b) {
    return "--- " + a.owner() + " ---\n" + a.log() + "--- " + b.owner() + " ---\n" + b.log();
  }

  // `stale_holder`: a node whose marker may be met because it stalled past its lease (the ADR's
  // admitted residue: a handler entered under a lease that then lapsed is not un-run).
  static void expect_checked_ok(const std::vector<HistoryRecord>& history,
                                const std::string& stale_holder = "") {
    const properties::CheckReport report = properties::check_history(history, {});
    EXPECT_TRUE(report.ok()) << properties::render_report_text(report, &history);
    // A killed instance leaves its marker until the marker's ttl: not an overlap (it is dead).
    std::set<std::string> crashed;
    for (const HistoryRecord& r : history) {
      if (r.op == HistoryOp::fault && properties::detail_starts_with_word(r.detail, "crash")) {
        crashed.insert(r.node);
        continue;
      }
      if (r.op != HistoryOp::warn || r.detail.rfind(kInProgressOverlapWord, 0) != 0) continue;
      const std::size_t at = r.detail.find("holder=");
      const std::string holder =
          at == std::string::npos ? "" : r.detail.substr(at + 7, r.detail.find(':', at) - at - 7);
      EXPECT_TRUE(crashed.count(holder) > 0 || (!stale_holder.empty() && holder == stale_holder))
          << "two instances were inside one partition at once: record " << r.index << " "
          << r.node << " " << r.key << " " << r.detail;
    }
  }

  static constexpr const char* kInProgressOverlapWord = "inprogress_overlap";
  static inline int test_number_ = 0;
  RedisServer server_;
  RedisConfig config_;
  std::string category_;
  std::string history_;
};

TEST_F(TwoInstance, OrderExclusionAndCrossKeyParallelismWithTwoWorkers) {
  constexpr std::int64_t kCount = 8;
  WorkerProcess w1(server_.url(), category_, "w1", history_);
  WorkerProcess w2(server_.url(), category_, "w2", history_);
  publish_interleaved({"client-A", "client-B"}, kCount, 80);

  const bool done = wait_until([&] { return last_seq("client-A") == kCount && last_seq("client-B") == kCount; });
  ASSERT_TRUE(done) << "not every event was committed within " << kWaitMaxMs << " ms: client-A at "
                    << last_seq("client-A") << ", client-B at " << last_seq("client-B") << "\n"
                    << logs(w1, w2);
  EXPECT_EQ(w1.terminate(), 0) << logs(w1, w2);
  EXPECT_EQ(w2.terminate(), 0) << logs(w1, w2);

  const std::vector<HistoryRecord> history = read_history();
  expect_checked_ok(history);
  const properties::CheckReport report = properties::check_history(history, {});
  EXPECT_EQ(report.counters.events_committed, static_cast<std::uint64_t>(2 * kCount));
  // Cross-key parallelism: some handler entered one key while another key's execution was open.
  std::map<std::string, int> open;  // key -> executions entered and not exited
  bool overlapped = false;
  for (const HistoryRecord& r : history) {
    if (r.op == HistoryOp::enter) {
      for (const auto& [key, n] : open) overlapped = overlapped || (key != r.key && n > 0);
      ++open[r.key];
    } else if (r.op == HistoryOp::exit) {
      --open[r.key];
    }
  }
  EXPECT_TRUE(overlapped) << "no two keys were ever handled at the same time";
}

TEST_F(TwoInstance, CrashOfTheOwnerFailsOverWithoutLossOrReorder) {
  constexpr std::int64_t kCount = 10;
  WorkerProcess w1(server_.url(), category_, "w1", history_);
  WorkerProcess w2(server_.url(), category_, "w2", history_);
  publish_interleaved({"client-A", "client-B"}, kCount, 150);

  // Strike while the owner sleeps inside a handler, after its last commit: a kill between a
  // commit and its history append would lose the commit record (the history is not atomic with
  // the sink), which the checker would rightly report as a gap.
  ASSERT_TRUE(wait_until([&] { return inside_after_commit("client-A", 3); }))
      << "client-A never reached seq 3 with a handler inside\n" << logs(w1, w2);
  const std::string owner = lease_owner("client-A");
  ASSERT_TRUE(owner == "w1" || owner == "w2") << "lease owner '" << owner << "'";
  WorkerProcess& victim = owner == "w1" ? w1 : w2;
  WorkerProcess& survivor = owner == "w1" ? w2 : w1;
  victim.kill_now();
  HistoryRecord crash;
  crash.node = owner;
  crash.op = HistoryOp::fault;
  crash.detail = "crash sigkill";
  append_history(crash);

  const bool done = wait_until([&] { return last_seq("client-A") == kCount && last_seq("client-B") == kCount; });
  ASSERT_TRUE(done) << "the survivor did not finish within " << kWaitMaxMs << " ms: client-A at "
                    << last_seq("client-A") << ", client-B at " << last_seq("client-B") << "\n"
                    << logs(w1, w2);
  EXPECT_EQ(survivor.terminate(), 0) << logs(w1, w2);

  const std::vector<HistoryRecord> history = read_history();
  expect_checked_ok(history);
  bool survivor_acquired = false;
  bool recovered = false;  // pending entries reclaimed, or the in-flight entry read again
  for (const HistoryRecord& r : history) {
    if (r.node != survivor.owner() || r.key != "client-A") continue;
    if (r.op == HistoryOp::acquire) survivor_acquired = true;
    if (r.op == HistoryOp::reclaim && r.detail != "count=0") recovered = true;
    if (r.op == HistoryOp::read && r.detail != "delivery=1") recovered = true;
  }
  EXPECT_TRUE(survivor_acquired) << "the survivor never acquired client-A";
  EXPECT_TRUE(recovered) << "no reclaim with count>0 and no re-read of the in-flight entry";
}

TEST_F(TwoInstance, StallOfTheOwnerPastItsLeaseIsFencedAndFailsOver) {
  constexpr std::int64_t kCount = 10;
  WorkerProcess w1(server_.url(), category_, "w1", history_);
  WorkerProcess w2(server_.url(), category_, "w2", history_);
  publish_interleaved({"client-A", "client-B"}, kCount, 150);

  // Stall inside a handler, after its last commit: a stall between a commit and its history
  // append would put the commit record after the survivor's acquire (history order is not
  // decision order across that gap).
  ASSERT_TRUE(wait_until([&] { return inside_after_commit("client-A", 3); }))
      << "client-A never reached seq 3 with a handler inside\n" << logs(w1, w2);
  const std::string owner = lease_owner("client-A");
  ASSERT_TRUE(owner == "w1" || owner == "w2") << "lease owner '" << owner << "'";
  WorkerProcess& stalled = owner == "w1" ? w1 : w2;
  WorkerProcess& survivor = owner == "w1" ? w2 : w1;
  stalled.stop_now();
  const bool taken = wait_until([&] { return lease_owner("client-A") == survivor.owner(); });
  stalled.continue_now();
  ASSERT_TRUE(taken) << "the survivor never took client-A from the stalled owner\n"
                     << logs(w1, w2);

  const bool done = wait_until([&] { return last_seq("client-A") == kCount && last_seq("client-B") == kCount; });
  ASSERT_TRUE(done) << "not every event was committed within " << kWaitMaxMs << " ms: client-A at "
                    << last_seq("client-A") << ", client-B at " << last_seq("client-B") << "\n"
                    << logs(w1, w2);
  EXPECT_EQ(w1.terminate(), 0) << logs(w1, w2);
  EXPECT_EQ(w2.terminate(), 0) << logs(w1, w2);

  const std::vector<HistoryRecord> history = read_history();
  expect_checked_ok(history, stalled.owner());
  bool stalled_learned = false;  // the stalled owner found its client-A lease gone
  for (const HistoryRecord& r : history) {
    if (r.node != stalled.owner() || r.key != "client-A") continue;
    if (r.op == HistoryOp::lose || r.op == HistoryOp::read_fenced || r.op == HistoryOp::ack_fenced ||
        r.op == HistoryOp::commit_fenced) {
      stalled_learned = true;
    }
  }
  EXPECT_TRUE(stalled_learned) << "the stalled owner never saw its client-A lease refused";
}

TEST_F(TwoInstance, PoisonHaltsItsPartitionOnlyWhileOtherKeysGoOn) {
  constexpr std::int64_t kCount = 4;
  WorkerProcess w1(server_.url(), category_, "w1", history_);
  WorkerProcess w2(server_.url(), category_, "w2", history_);
  publish_interleaved({"client-A", "client-B"}, kCount, 20, "client-A", 2);

  const auto halted = [&] {
    for (const HistoryRecord& r : read_history()) {
      if (r.op == HistoryOp::halt && r.key == "client-A") return true;
    }
    return false;
  };
  const bool done = wait_until([&] { return last_seq("client-B") == kCount && halted(); });
  ASSERT_TRUE(done) << "client-B at " << last_seq("client-B") << ", client-A halted " << halted()
                    << "\n" << logs(w1, w2);
  EXPECT_EQ(w1.terminate(), 0) << logs(w1, w2);
  EXPECT_EQ(w2.terminate(), 0) << logs(w1, w2);

  EXPECT_EQ(last_seq("client-A"), 1) << "nothing after the poison event may be committed";
  const std::vector<HistoryRecord> history = read_history();
  properties::CheckOptions options;
  options.require_halt_record = true;
  const properties::CheckReport report = properties::check_history(history, options);
  EXPECT_TRUE(report.ok()) << properties::render_report_text(report, &history);
  EXPECT_EQ(run({"XLEN", PartitionRef{category_, "client-A"}.dlq()}).integer, 0)
      << "the engine must not move a poison event to the DLQ";
}

TEST_F(TwoInstance, PublishRefusesABadKeyNamingTheRuleAndWritesNothing) {
  const auto result = apps::testing::run_seqby(
      {"publish", "--redis", server_.url(), "--category", category_, "--key", "a:b"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("rule no_colon"), std::string::npos) << result.err;
  EXPECT_EQ(run({"EXISTS", partition_index_name(category_)}).integer, 0);
}

TEST_F(TwoInstance, PublishCountWritesNumberedEventsAndPrintsTheirIds) {
  const auto result = apps::testing::run_seqby({"publish", "--redis", server_.url(), "--category",
                                                category_, "--key", "client-A", "--count", "3",
                                                "--field", "delay_ms=5", "--type", "charge"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const Reply entries = run({"XRANGE", PartitionRef{category_, "client-A"}.stream(), "-", "+"});
  ASSERT_EQ(entries.elements.size(), 3u) << to_string(entries);
  std::string ids;
  for (std::size_t i = 0; i < entries.elements.size(); ++i) {
    const Reply& entry = entries.elements[i];
    ids += entry.elements[0].str + "\n";
    const std::vector<Reply>& fields = entry.elements[1].elements;
    ASSERT_EQ(fields.size(), 4u);
    EXPECT_EQ(fields[1].str, "charge");
    EXPECT_EQ(fields[3].str, "{\"delay_ms\":5,\"seq\":" + std::to_string(i + 1) + "}");
  }
  EXPECT_EQ(result.out, ids);
  const Reply members = run({"SMEMBERS", PartitionRef{category_, "client-A"}.index()});
  ASSERT_EQ(members.elements.size(), 1u);
  EXPECT_EQ(members.elements[0].str, "client-A");
}

}  // namespace
}  // namespace seqby::redis
