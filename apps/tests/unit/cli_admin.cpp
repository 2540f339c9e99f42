// `seqby admin` usage and bad input that need no Redis server: every case exits 2 with a message
// naming the argument, the value or the unreachable server, and changes nothing (nothing is
// reachable to change). What the commands do on a server is adapters/tests/redis/admin_commands.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

// Nothing listens on port 1 of the loopback interface: a connect is refused at once.
constexpr const char* kNowhere = "redis://127.0.0.1:1";

TEST(CliAdmin, RedisIsRequired) {
  const auto run = run_seqby({"admin", "partitions", "orders"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--redis is required"), std::string::npos) << run.err;
}

TEST(CliAdmin, ABadRedisUrlIsNamed) {
  const auto run = run_seqby({"admin", "--redis", "http://localhost", "partitions", "orders"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--redis"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("http://localhost"), std::string::npos) << run.err;
}

TEST(CliAdmin, EachActionNamesItsMissingArgument) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"partitions"}, "category"},
      {{"inspect", "orders"}, "key"},
      {{"skip", "orders", "client-A"}, "id"},
      {{"dlq", "orders", "client-A"}, "id"},
  };
  for (const auto& [args, missing] : cases) {
    std::vector<std::string> argv = {"admin", "--redis", kNowhere};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto run = run_seqby(argv);
    EXPECT_EQ(run.exit_code, 2) << args.front();
    EXPECT_NE(run.err.find(missing + " is required"), std::string::npos)
        << args.front() << ": " << run.err;
  }
}

TEST(CliAdmin, AnUnknownActionIsNamed) {
  const auto run = run_seqby({"admin", "--redis", kNowhere, "reap", "orders"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown command 'reap'; expected one of: partitions, inspect, skip, dlq"),
            std::string::npos)
      << run.err;
}

TEST(CliAdmin, AWarnThresholdMustBeANumber) {
  const auto run =
      run_seqby({"admin", "--redis", kNowhere, "partitions", "orders", "--warn-threshold", "many"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--warn-threshold"), std::string::npos) << run.err;
}

TEST(CliAdmin, AnInvalidKeyIsRejectedBeforeAnyServerIsAsked) {
  const auto run = run_seqby({"admin", "--redis", kNowhere, "skip", "orders", "a:b", "1-1"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("seqby admin skip: invalid partition key \"a:b\": rule no_colon"),
            std::string::npos)
      << run.err;
}

TEST(CliAdmin, AMalformedIdIsRejectedBeforeAnyServerIsAsked) {
  const auto run = run_seqby({"admin", "--redis", kNowhere, "dlq", "orders", "client-A", "head"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("seqby admin dlq: \"head\" is not a stream entry id (MS-SEQ)"),
            std::string::npos)
      << run.err;
}

TEST(CliAdmin, AnUnreachableRedisExitsTwoNamingTheServer) {
  for (const char* action : {"partitions", "inspect", "skip", "dlq"}) {
    std::vector<std::string> argv = {"admin", "--redis", kNowhere, action, "orders"};
    if (std::string(action) != "partitions") argv.push_back("client-A");
    if (std::string(action) == "skip" || std::string(action) == "dlq") argv.push_back("1-1");
    const auto run = run_seqby(argv);
    EXPECT_EQ(run.exit_code, 2) << action;
    EXPECT_NE(run.err.find(std::string("seqby admin ") + action +
                           ": Redis unreachable: connect to redis://127.0.0.1:1"),
              std::string::npos)
        << action << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

TEST(CliAdmin, WithJsonAnErrorIsOneJsonObjectOnStdout) {
  const auto run = run_seqby({"admin", "--redis", kNowhere, "--json", "partitions", "orders"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(run.out.rfind("{\"error\":{\"code\":\"closed\",\"message\":\"Redis unreachable: "
                          "connect to redis://127.0.0.1:1",
                          0),
            0u)
      << run.out;
  EXPECT_EQ(run.out.back(), '\n');
  EXPECT_EQ(run.out.find('\n'), run.out.size() - 1) << "one line: " << run.out;
}

}  // namespace
}  // namespace seqby::apps
