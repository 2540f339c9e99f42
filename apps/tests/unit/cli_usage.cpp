// The seqby command's usage contract (DESIGN.md section 8): --help lists every subcommand and
// exits 0, each subcommand has its own --help, and bad usage exits 2 naming what was wrong.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

const std::vector<std::string> kSubcommands = {"sim",      "hunt",   "replay",  "check",
                                               "scenario", "worker", "publish", "admin"};

TEST(CliUsage, HelpListsEverySubcommandAndExitsZero) {
  const auto run = run_seqby({"--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const auto& name : kSubcommands) {
    EXPECT_NE(run.out.find("\n  " + name + " "), std::string::npos) << name << " in\n" << run.out;
  }
}

TEST(CliUsage, EverySubcommandHasItsOwnHelp) {
  for (const auto& name : kSubcommands) {
    const auto run = run_seqby({name, "--help"});
    EXPECT_EQ(run.exit_code, 0) << name << ": " << run.err;
    EXPECT_NE(run.out.find("Usage: seqby " + name), std::string::npos) << run.out;
  }
  for (const auto& path : std::vector<std::vector<std::string>>{{"scenario", "list"},
                                                                {"scenario", "run"},
                                                                {"admin", "partitions"},
                                                                {"admin", "inspect"},
                                                                {"admin", "skip"},
                                                                {"admin", "dlq"}}) {
    const auto run = run_seqby({path[0], path[1], "--help"});
    EXPECT_EQ(run.exit_code, 0) << path[0] << " " << path[1] << ": " << run.err;
    EXPECT_NE(run.out.find("Usage: seqby " + path[0] + " " + path[1]), std::string::npos)
        << run.out;
  }
}

TEST(CliUsage, SimHelpShowsTheDesignOptions) {
  const auto run = run_seqby({"sim", "--help"});
  ASSERT_EQ(run.exit_code, 0);
  for (const char* option : {"--seed ", "--seeds ", "--scenario ", "--variant ", "--jobs ",
                             "--json", "--save-failures ", "--check-determinism"}) {
    EXPECT_NE(run.out.find(option), std::string::npos) << option << " in\n" << run.out;
  }
}

TEST(CliUsage, UnknownSubcommandExitsTwoNamingIt) {
  const auto run = run_seqby({"frobnicate"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("unknown command 'frobnicate'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("sim, hunt, replay, check, scenario, worker, publish, admin"),
            std::string::npos)
      << run.err;
}

TEST(CliUsage, MissingSubcommandExitsTwo) {
  const auto run = run_seqby({});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("subcommand is required"), std::string::npos) << run.err;
}

TEST(CliUsage, UnknownOptionExitsTwoNamingIt) {
  const auto run = run_seqby({"sim", "--frobnicate"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--frobnicate"), std::string::npos) << run.err;
}

TEST(CliUsage, BadSeedRangeExitsTwoNamingOptionAndValue) {
  const auto run = run_seqby({"sim", "--seeds", "9..3"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--seeds: '9..3' is not a seed range A..B"), std::string::npos) << run.err;
}

TEST(CliUsage, SeedAndSeedsExcludeEachOther) {
  const auto run = run_seqby({"sim", "--seed", "1", "--seeds", "0..3"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--seed excludes --seeds"), std::string::npos) << run.err;
}

TEST(CliUsage, MissingRequiredOptionExitsTwoNamingIt) {
  const auto run = run_seqby({"worker", "--redis", "redis://127.0.0.1:6379"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--category is required"), std::string::npos) << run.err;
}

TEST(CliUsage, WorkerRefusesAZeroPollIntervalBeforeConnecting) {
  // Port 1 would refuse a connection: the options are judged first.
  const auto run = run_seqby({"worker", "--redis", "redis://127.0.0.1:1", "--category", "c",
                              "--group", "g", "--sequential-by", "id", "--poll-interval-ms", "0"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("poll_interval_ms is 0"), std::string::npos) << run.err;
}

TEST(CliUsage, WorkerRefusesAnUnknownUnsafeVariantNamingTheKnownOnesBeforeConnecting) {
  // Port 1 would refuse a connection: the variant's name is judged first.
  for (const char* name : {"no_fencing", ""}) {
    const auto run = run_seqby({"worker", "--redis", "redis://127.0.0.1:1", "--category", "c",
                                "--group", "g", "--sequential-by", "id", "--unsafe-variant", name});
    EXPECT_EQ(run.exit_code, 2) << name;
    EXPECT_NE(run.err.find("--unsafe-variant: unknown variant '" + std::string(name) +
                           "'; known: "
                           "correct, shared_group, message_lock, no_fence, dlq_continue, "
                           "no_reclaim, batch_unfenced, group_at_dollar"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(run.err.find("event=unsafe_variant"), std::string::npos) << run.err;
  }
}

TEST(CliUsage, WorkerHelpListsTheUnsafeVariantFlagAsUnsafe) {
  const auto run = run_seqby({"worker", "--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("--unsafe-variant NAME"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("UNSAFE: run a KNOWN-BROKEN engine variant"), std::string::npos)
      << run.out;
}

TEST(CliUsage, BadRedisUrlExitsTwoNamingIt) {
  const auto run = run_seqby({"publish", "--redis", "http://x", "--category", "c", "--key", "k"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--redis"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("http://x"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace seqby::apps
