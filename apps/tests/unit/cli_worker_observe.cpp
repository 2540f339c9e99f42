// `seqby worker --metrics-addr` and `--log-format` at the command line (issue 15 item 3): a bad
// address, one nothing can listen on (a port this test holds) and an unknown log format each
// exit 2 naming the flag and what is wrong, before the worker starts anything (no event=start
// line, no connection attempt: the Redis it is given listens nowhere).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

const std::vector<std::string> kWorker{"worker",     "--redis",         "redis://127.0.0.1:1",
                                       "--category", "billing",         "--group",
                                       "g",          "--sequential-by", "client_id"};

testing::RunResult worker_with(const std::vector<std::string>& extra) {
  std::vector<std::string> args = kWorker;
  args.insert(args.end(), extra.begin(), extra.end());
  return run_seqby(args);
}

TEST(CliWorkerObserve, ABadMetricsAddressExitsTwoNamingWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"9464", "--metrics-addr: '9464' is not HOST:PORT"},
      {"localhost:9464", "'localhost' is not an IPv4 address"},
      {"127.0.0.1:0", "the port '0' is not a number from 1 to 65535"},
      {"127.0.0.1:http", "the port 'http' is not a number"},
  };
  for (const auto& [address, message] : cases) {
    const testing::RunResult run = worker_with({"--metrics-addr", address});
    EXPECT_EQ(run.exit_code, 2) << address << ": " << run.err;
    EXPECT_EQ(run.err.rfind("seqby worker: --metrics-addr: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("event=start"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("redis_unreachable"), std::string::npos) << run.err;
  }
}

TEST(CliWorkerObserve, AnAddressNothingCanListenOnExitsTwoBeforeAnythingStarts) {
  // A port this test listens on.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = 0;
  ::inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t length = sizeof(at);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&at), &length), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(at.sin_port));

  const testing::RunResult run = worker_with({"--metrics-addr", address});
  ::close(fd);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("seqby worker: --metrics-addr: cannot listen on " + address +
                         ": Address already in use"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("event=start"), std::string::npos) << run.err;
}

TEST(CliWorkerObserve, AnUnknownLogFormatExitsTwo) {
  const testing::RunResult run = worker_with({"--log-format", "yaml"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--log-format: 'yaml' is no log format; known: text, json"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("event=start"), std::string::npos) << run.err;
}

TEST(CliWorkerObserve, HelpNamesTheFlags) {
  const testing::RunResult run = run_seqby({"worker", "--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("--metrics-addr HOST:PORT"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--log-format text|json"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace seqby::apps
