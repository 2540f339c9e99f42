// The benchmark programs' command lines, which need no Redis server: --help prints the program's
// options on stdout and exits 0 (before looking for a server), and a bad argument exits 2 with an
// error naming it and the options on stderr, having printed nothing on stdout.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_program;

// The programs with a command line of their own (bench_redis_poll_cost, bench_sim_bench and
// bench_lua_script_closures are Google Benchmark's).
const std::vector<std::string> kPrograms = {
    "bench_cluster_failover_leases", "bench_failover_latency",   "bench_redis_durability",
    "bench_redis_fenced_whatif",     "bench_redis_idle_cost",    "bench_redis_step_cost",
    "bench_redis_throughput",        "bench_redis_wake_latency",
};

std::string path_of(const std::string& program) {
  std::string path = SEQBY_BINARY_DIR "/";
  path += program;
  return path;
}

class BenchCommandLine : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
#ifndef SEQBY_BENCH_BUILT
    GTEST_SKIP() << "the benchmarks are not built (SEQBY_BUILD_BENCH, Google Benchmark)";
#endif
  }
};

TEST_P(BenchCommandLine, HelpPrintsItsOptionsAndExitsZero) {
  const auto run = run_program(path_of(GetParam()), {"--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.rfind("usage: ", 0), 0U) << run.out;
  EXPECT_NE(run.out.find(GetParam()), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" [--"), std::string::npos) << "no option named: " << run.out;
  EXPECT_EQ(run.err, "");
}

TEST_P(BenchCommandLine, AnUnknownOptionIsNamedWithExitTwo) {
  const auto run = run_program(path_of(GetParam()), {"--no-such-option", "1"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("--no-such-option"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("usage: "), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "") << "nothing is printed on stdout before the arguments are read";
}

INSTANTIATE_TEST_SUITE_P(Programs, BenchCommandLine, ::testing::ValuesIn(kPrograms),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// A value the option does not take is named, with exit status 2 and nothing on stdout.
TEST(BenchCommandLineValues, ABadValueIsNamedWithExitTwo) {
#ifndef SEQBY_BENCH_BUILT
  GTEST_SKIP() << "the benchmarks are not built";
#endif
  struct Case {
    std::string program;
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {"bench_redis_throughput", {"--repetitions", "three"}, "--repetitions"},
      {"bench_cluster_failover_leases", {"--fault", "pause"}, "--fault 'pause'"},
  };
  for (const Case& c : cases) {
    const auto run = run_program(path_of(c.program), c.args);
    EXPECT_EQ(run.exit_code, 2) << c.program << ": " << run.err;
    EXPECT_NE(run.err.find(c.named), std::string::npos) << c.program << ": " << run.err;
    EXPECT_EQ(run.out, "") << c.program;
  }
}

}  // namespace
}  // namespace seqby::apps
