// `seqby publish --wait-replicas N` on a real redis-server that has no replica: the publish runs
// on the server but WAIT confirms it on none, so the command says so on stderr, naming the
// durability option, and exits 1 (a publisher must not take it as acknowledged); without the flag
// the same publish exits 0. A bad value or a combination that would bypass the option exits 2
// with nothing written.
#include <gtest/gtest.h>

#include <string>

#include "redis_server.h"
#include "seqby/core/keyspace.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::apps {
namespace {

using scenarios::CommandRun;
using scenarios::RedisScenarioDriver;
using seqby::testing::RedisServer;

TEST(CliDurability, APublishNoReplicaConfirmedExitsOneAndSaysSo) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "durability_cli");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const PartitionRef k1{d.category(), "k1"};
  const CommandRun told = scenarios::run_command(
      kSeqby, {"publish", "--redis", d.url(), "--category", d.category(), "--key", "k1",
               "--wait-replicas", "1", "--wait-timeout-ms", "50"});
  EXPECT_EQ(told.exit_code, 1) << told.err;
  EXPECT_NE(told.err.find("0 of the 1 replicas asked within 50 ms (the durability option)"),
            std::string::npos)
      << told.err;
  EXPECT_EQ(told.out, "");                             // no id: the publish is not acknowledged
  EXPECT_EQ(d.run({"XLEN", k1.stream()}).integer, 1);  // it ran on the server all the same

  const CommandRun plain = scenarios::run_command(
      kSeqby, {"publish", "--redis", d.url(), "--category", d.category(), "--key", "k1"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(d.run({"XLEN", k1.stream()}).integer, 2);
}

TEST(CliDurability, ABadWaitValueOrAPublishThatWouldBypassItExitsTwoWritingNothing) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  RedisScenarioDriver d(server.url(), kSeqby, "durability_bad");
  ASSERT_TRUE(d.ready().ok()) << d.ready().error().message;
  const PartitionRef k1{d.category(), "k1"};
  const CommandRun zero = scenarios::run_command(
      kSeqby, {"publish", "--redis", d.url(), "--category", d.category(), "--key", "k1",
               "--wait-replicas", "1", "--wait-timeout-ms", "0"});
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_NE(zero.err.find("--wait-timeout-ms"), std::string::npos) << zero.err;
  const CommandRun history = scenarios::run_command(
      kSeqby, {"publish", "--redis", d.url(), "--category", d.category(), "--key", "k1",
               "--wait-replicas", "1", "--history-stream", "h"});
  EXPECT_EQ(history.exit_code, 2) << history.err;
  EXPECT_NE(history.err.find("--history-stream and --wait-replicas"), std::string::npos)
      << history.err;
  EXPECT_EQ(d.run({"EXISTS", k1.stream()}).integer, 0);
  const CommandRun worker = scenarios::run_command(
      kSeqby, {"worker", "--redis", d.url(), "--category", d.category(), "--group", "g",
               "--sequential-by", "id", "--wait-replicas", "-1"});
  EXPECT_EQ(worker.exit_code, 2) << worker.err;
  EXPECT_NE(worker.err.find("--wait-replicas"), std::string::npos) << worker.err;
}

}  // namespace
}  // namespace seqby::apps
