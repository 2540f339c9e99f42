// The benchmark programs' command lines, which need no Redis server: --help prints the program's
// options on stdout and exits 0 (before looking for a server), and a bad argument exits 2 with an
// error naming it and the options on stderr, having printed nothing on stdout.
#include <gtest/gtest.h>

#include <sstream>
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

// bench/compare_builds.sh, the script that times builds against each other: a bad argument is
// named with exit status 2 and nothing on stdout, and two builds of the simulator compare.
testing::RunResult run_compare_builds(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {SEQBY_SOURCE_DIR "/bench/compare_builds.sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program("/bin/bash", argv);
}

TEST(CompareBuilds, ABadArgumentIsNamedWithExitTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  const std::vector<Case> cases = {
      {{"--rounds", "0", "sim", SEQBY_BINARY_DIR}, "--rounds"},
      {{"--seeds", "7", "sim", SEQBY_BINARY_DIR}, "--seeds"},
      {{"walltime", SEQBY_BINARY_DIR}, "'walltime'"},
      {{"sim", "no-such-build-or-revision"}, "'no-such-build-or-revision'"},
      {{"sim"}, "at least one BUILD"},
  };
  for (const Case& c : cases) {
    const auto run = run_compare_builds(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.named << ": " << run.err;
    EXPECT_NE(run.err.find(c.named), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("usage: "), std::string::npos) << run.err;
    EXPECT_EQ(run.out, "") << c.named;
  }
  const auto help = run_compare_builds({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  EXPECT_EQ(help.out.rfind("usage: bench/compare_builds.sh", 0), 0U) << help.out;
}

// The whitespace-separated fields of the table row of `out` that starts with `name` and a space.
std::vector<std::string> row_of(const std::string& out, const std::string& name) {
  const std::size_t at = out.find("\n" + name + " ");
  if (at == std::string::npos) return {};
  std::istringstream row(out.substr(at + 1, out.find('\n', at + 1) - at - 1));
  std::vector<std::string> fields;
  for (std::string field; row >> field;) fields.push_back(field);
  return fields;
}

TEST(CompareBuilds, TimesTwoBuildsOfTheSimulatorRoundAfterRound) {
  // One build named two ways: two rows, alternated over two rounds.
  const std::string first = SEQBY_BINARY_DIR;
  const std::string second = first + "/";
  const auto run = run_compare_builds({"--rounds", "2", "--seeds", "0..1", "sim", first, second});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("seqby sim --seeds 0..1 --jobs 1, 2 rounds alternated"), std::string::npos)
      << run.out;
  for (const std::string& line :
       {"round 1 of 2: " + first + " ", "round 1 of 2: " + second + " ",
        "round 2 of 2: " + first + " ", "round 2 of 2: " + second + " "}) {
    EXPECT_NE(run.err.find(line), std::string::npos) << line << " in: " << run.err;
  }
  // name, CPU min, /, median, simulated s, speed min, /, median, against min, /, median
  const auto a = row_of(run.out, first);
  const auto b = row_of(run.out, second);
  ASSERT_EQ(a.size(), 11U) << run.out;
  ASSERT_EQ(b.size(), 11U) << run.out;
  EXPECT_GT(std::stod(a[4]), 0.0) << run.out;
  EXPECT_EQ(a[4], b[4]) << "one binary, the same seeds: the same simulated time\n" << run.out;
  EXPECT_EQ(a[8] + " " + a[9] + " " + a[10], "1.00x / 1.00x") << "the baseline against itself";
}

}  // namespace
}  // namespace seqby::apps
