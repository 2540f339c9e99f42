// What the worker logs about its Redis connections, without a server: which handshake refusals
// end it (refusal_is_final), the connection lines (one per backoff step, then one a minute at
// the maximum; a final refusal; a reconnect), and the refused commands (named by script, the
// protocol's own outcomes left out, one line a minute per kind with the repeats counted).
#include "seqby/hiredis/link_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seqby/broker/scripts.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using Event = HiredisLink::ConnectionEvent;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

TEST(RefusalIsFinal, CredentialsAndPermissionsAreFinalABusyOrFullServerIsNot) {
  EXPECT_TRUE(refusal_is_final("AUTH",
                               "WRONGPASS invalid username-password pair or user is "
                               "disabled."));
  EXPECT_TRUE(refusal_is_final("PING", "NOAUTH Authentication required."));
  EXPECT_TRUE(refusal_is_final("PING",
                               "NOPERM this user has no permissions to run the 'ping' "
                               "command"));
  EXPECT_TRUE(refusal_is_final("AUTH",
                               "ERR AUTH <password> called without any password "
                               "configured for the default user."));
  EXPECT_TRUE(refusal_is_final("SELECT", "ERR DB index is out of range"));
  EXPECT_TRUE(refusal_is_final("CLUSTER|SLOTS", "ERR This instance has cluster support disabled"));
  EXPECT_FALSE(refusal_is_final("PING", "ERR This instance has cluster support disabled"));
  EXPECT_FALSE(refusal_is_final("CLUSTER|SLOTS", "CLUSTERDOWN The cluster is down"));
  EXPECT_FALSE(refusal_is_final("AUTH", "ERR max number of clients reached"));
  EXPECT_FALSE(refusal_is_final("PING", "LOADING Redis is loading the dataset in memory"));
  EXPECT_FALSE(refusal_is_final("PING", "BUSY Redis is busy running a script."));
}

Event unreachable(std::uint64_t attempt, std::uint64_t retry_ms, bool at_max) {
  Event e;
  e.kind = Event::Kind::connect_failed;
  e.error = "connect to redis://127.0.0.1:1/0: I/O error (Connection refused)";
  e.failures_in_row = attempt;
  e.retry_in_ms = retry_ms;
  e.backoff_at_max = at_max;
  return e;
}

struct Reports : ::testing::Test {
  ManualClock clock;
  std::vector<std::string> lines;
  ConnectionReport report{clock, "commands", "redis://127.0.0.1:1/0",
                          [this](const std::string& line) { lines.push_back(line); }};
};

TEST_F(Reports, ALinePerBackoffStepThenOneAMinuteAtTheMaximum) {
  std::uint64_t retry_ms = 20;
  std::uint64_t attempt = 0;
  for (; retry_ms < 2000; retry_ms *= 2) {
    report.on_event(unreachable(++attempt, retry_ms, false));
    clock.advance(retry_ms);
  }
  const std::size_t growing = lines.size();
  EXPECT_EQ(growing, attempt);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(),
            "event=redis_unreachable link=commands redis=redis://127.0.0.1:1/0 attempt=1 "
            "retry_in_ms=20 error=\"connect to redis://127.0.0.1:1/0: I/O error (Connection "
            "refused)\"");
  // Then every 2 s for two minutes: the maximum's first line and one a minute later, not sixty.
  for (int i = 0; i < 60; ++i) {
    report.on_event(unreachable(++attempt, 2000, true));
    clock.advance(2000);
  }
  EXPECT_EQ(lines.size(), growing + 2);
  EXPECT_EQ(report.failed_attempts(), attempt);
  Event connected;
  connected.kind = Event::Kind::connected;
  connected.failures_in_row = attempt;
  report.on_event(connected);
  EXPECT_EQ(lines.back(),
            "event=redis_connected link=commands redis=redis://127.0.0.1:1/0 "
            "after_failed_attempts=" +
                std::to_string(attempt));
  EXPECT_TRUE(report.final_refusal().empty());
}

TEST_F(Reports, AFinalRefusalIsSaidWithTheCommandAndKept) {
  Event refused = unreachable(1, 20, false);
  refused.error = "connect to redis://:***@127.0.0.1:1/0: AUTH refused: WRONGPASS invalid";
  refused.refused_command = "AUTH";
  refused.refusal = "WRONGPASS invalid";
  refused.final = true;
  report.on_event(refused);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "event=redis_refused link=commands redis=redis://127.0.0.1:1/0 command=AUTH "
            "retrying=false error=\"connect to redis://:***@127.0.0.1:1/0: AUTH refused: "
            "WRONGPASS invalid\"");
  EXPECT_EQ(report.final_refusal(), lines[0]);
  // The worker stops on it; the same refusal again (a last try while it stops) is not said twice.
  report.on_event(refused);
  EXPECT_EQ(lines.size(), 1u);
}

// Answers every command with the next canned reply.
class CannedLink final : public RedisLink {
 public:
  std::vector<Reply> replies;
  std::size_t next = 0;
  Task<Result<Reply>> execute(Command) override { co_return replies.at(next++); }
};

TEST(ReportingLink, NamesTheRefusedScriptLeavesTheProtocolsOutcomesAndThrottles) {
  ManualClock clock;
  CannedLink inner;
  std::vector<std::string> lines;
  ReportingLink link(inner, clock, "commands",
                     [&lines](const std::string& line) { lines.push_back(line); });
  const char* source = script_source("record_halt");
  ASSERT_NE(source, nullptr);
  const std::string noperm =
      "NOPERM User w has no permissions to run the 'time' command script: abc, on "
      "@user_script:20.";
  inner.replies = {Reply::bulk("abc"),
                   Reply::error(noperm),
                   Reply::error("FENCED lease not held by w:1"),
                   Reply::error("BUSYGROUP Consumer Group name already exists"),
                   Reply::error(noperm),
                   Reply::error(noperm),
                   Reply::error("NOPERM this user has no permissions to run the 'xread' command"),
                   Reply::of_int(1)};
  auto run = [&link](Command command) { return run_now(link.execute(std::move(command))); };
  EXPECT_EQ(run({"SCRIPT", "LOAD", source}).value().str, "abc");
  EXPECT_TRUE(run({"EVALSHA", "abc", "1", "k"}).value().is_error());  // the reply is unchanged
  (void)run({"EVALSHA", "sha-of-check-lease", "1", "k"});
  (void)run({"XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"});
  (void)run({"EVALSHA", "abc", "1", "k"});  // within the minute: counted, not logged
  clock.advance(ReportingLink::kRepeatMs);
  (void)run({"EVALSHA", "abc", "1", "k"});
  (void)run({"XREAD", "COUNT", "1", "BLOCK", "2000", "STREAMS", "s", "0-0"});
  (void)run({"GET", "k"});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "event=redis_command_refused link=commands script=record_halt error=\"" +
                          noperm + "\"");
  EXPECT_EQ(lines[1],
            "event=redis_command_refused link=commands script=record_halt "
            "repeats_since_last_line=1 error=\"" +
                noperm + "\"");
  EXPECT_EQ(lines[2],
            "event=redis_command_refused link=commands command=XREAD error=\"NOPERM this user "
            "has no permissions to run the 'xread' command\"");
  EXPECT_EQ(link.refusals(), 4u);
}

// A pipelined batch (execute_many, the lease link's renew_many batches) is reported as its
// commands one by one would be: the refused one named, the protocol's outcomes left out, every
// reply passed on unchanged and in order.
TEST(ReportingLink, ReportsTheRefusalsOfABatchAsOfItsCommandsOneByOne) {
  ManualClock clock;
  CannedLink inner;
  std::vector<std::string> lines;
  ReportingLink link(inner, clock, "leases",
                     [&lines](const std::string& line) { lines.push_back(line); });
  const char* source = script_source("renew_many");
  ASSERT_NE(source, nullptr);
  const std::string noperm = "NOPERM User w has no permissions to run the 'pexpire' command";
  inner.replies = {Reply::bulk("sha-renew"), Reply::of_int(1), Reply::error(noperm),
                   Reply::error("NOSCRIPT No matching script."), Reply::of_int(1)};
  ASSERT_EQ(run_now(link.execute({"SCRIPT", "LOAD", source})).value().str, "sha-renew");
  std::vector<Result<Reply>> replies =
      run_now(link.execute_many({{"EVALSHA", "sha-renew", "1", "a"},
                                 {"EVALSHA", "sha-renew", "1", "b"},
                                 {"EVALSHA", "sha-renew", "1", "c"},
                                 {"GET", "d"}}));
  ASSERT_EQ(replies.size(), 4u);
  EXPECT_EQ(replies[0].value(), Reply::of_int(1));
  EXPECT_EQ(replies[1].value(), Reply::error(noperm));
  EXPECT_TRUE(replies[2].value().is_error_with("NOSCRIPT"));
  EXPECT_EQ(replies[3].value(), Reply::of_int(1));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "event=redis_command_refused link=leases script=renew_many error=\"" + noperm + "\"");
  EXPECT_EQ(link.refusals(), 1u);
}

}  // namespace
}  // namespace seqby::redis
