// `seqby chaos` usage (DESIGN.md section 8): its help names the design's options, and bad usage
// exits 2 with a message naming the option and the value, before any process or server starts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_run.h"

namespace seqby::apps {
namespace {

using testing::run_seqby;

void expect_usage_error(const std::vector<std::string>& args, const std::string& message) {
  const auto run = run_seqby(args);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(CliChaos, HelpShowsTheDesignOptions) {
  const auto top = run_seqby({"--help"});
  EXPECT_NE(top.out.find("\n  chaos "), std::string::npos) << top.out;
  const auto run = run_seqby({"chaos", "--help"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* option : {"--redis ", "--seed ", "--seeds ", "--duration-s ", "--workers ",
                             "--keys ", "--nemesis ", "--variant ", "--json", "--save-failures ",
                             "--process-manager", "--cluster", "--wait-replicas "}) {
    EXPECT_NE(run.out.find(option), std::string::npos) << option << " in\n" << run.out;
  }
}

TEST(CliChaos, BadUsageExitsTwoNamingWhatWasWrong) {
  expect_usage_error({"chaos", "--nemesis", "kill,frobnicate"},
                     "--nemesis 'frobnicate': unknown nemesis (known: client_kill, client_pause, "
                     "failover, kill, proxy, script_flush, server_restart, slot_migration, stop, "
                     "or all)");
  expect_usage_error({"chaos", "--nemesis", "kill,failover"},
                     "--nemesis failover: not available without --cluster");
  expect_usage_error({"chaos", "--cluster", "--nemesis", "proxy"},
                     "--nemesis proxy: not available with --cluster");
  expect_usage_error({"chaos", "--cluster", "--nemesis", "server_restart"},
                     "--nemesis server_restart: not available with --cluster");
  expect_usage_error({"chaos", "--cluster", "--redis", "redis://127.0.0.1:1"},
                     "--cluster and --redis exclude each other");
  expect_usage_error({"chaos", "--wait-replicas", "1"}, "--wait-replicas 1: the durability option");
  expect_usage_error({"chaos", "--cluster", "--wait-replicas", "2"},
                     "--wait-replicas 2: the cluster chaos starts has 1 replica per master");
  expect_usage_error({"chaos", "--workers", "0"}, "--workers 0: expected 1..32");
  expect_usage_error({"chaos", "--keys", "0"}, "--keys 0: expected 1..");
  expect_usage_error({"chaos", "--duration-s", "0"}, "--duration-s 0: expected 1..");
  expect_usage_error({"chaos", "--seed", "1", "--seeds", "1..2"}, "--seed");
  expect_usage_error({"chaos", "--seeds", "5..1"}, "--seeds: '5..1' is not a seed range");
  expect_usage_error({"chaos", "--redis", "http://x"}, "--redis");
  expect_usage_error({"chaos", "--variant", "frobnicate"},
                     "--variant 'frobnicate': unknown variant");
  expect_usage_error({"chaos", "--redis", "redis://127.0.0.1:1", "--nemesis", "server_restart"},
                     "--nemesis server_restart: not available with --redis");
  expect_usage_error({"chaos", "--redis", "redis://example.invalid:6379"},
                     "the fault proxies need a numeric IPv4 address");
}

}  // namespace
}  // namespace seqby::apps
