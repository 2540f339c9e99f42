// A script's compiled form is remembered process-wide (lua_scripting.cpp, CompiledMemo): every
// simulated server after the first loads the bytecode instead of the text. A server that loads
// the remembered form must run the very same function: the same replies, the same error naming
// the script's own line, and a script that does not compile is refused on every server alike.
#include <gtest/gtest.h>

#include <string>

#include "seqby/sim/sha1.h"
#include "seqby/sim/sim_redis.h"
#include "sim_redis_test_util.h"

namespace seqby::sim {
namespace {

using namespace testing;

// Unique to this test, so no other test in the process compiled it first.
const std::string kScript =
    "-- compiled_scripts test\n"
    "local n = redis.call('INCRBY', KEYS[1], ARGV[1])\n"
    "if n > 10 then\n"
    "  return redis.call('NO_SUCH_COMMAND_IN_COMPILED_SCRIPTS')\n"
    "end\n"
    "return {n, ARGV[2]}\n";

TEST(CompiledScripts, EveryServerRunsTheSameFunctionFromTheRememberedForm) {
  const std::string sha = sha1_hex(kScript);
  for (int server = 0; server < 3; ++server) {
    SCOPED_TRACE("server " + std::to_string(server));
    ManualClock clock{1'000};
    SimRedis redis{clock};
    EXPECT_EQ(redis.execute({"SCRIPT", "LOAD", kScript}), bulk(sha));
    EXPECT_EQ(redis.execute({"EVALSHA", sha, "1", "n", "4", "x"}), arr({integer(4), bulk("x")}));
    EXPECT_EQ(redis.execute({"EVALSHA", sha, "1", "n", "5", "y"}), arr({integer(9), bulk("y")}));
    const Reply failed = redis.execute({"EVALSHA", sha, "1", "n", "2", "z"});
    ASSERT_TRUE(failed.is_error());
    EXPECT_NE(failed.str.find("Unknown Redis command called from script"), std::string::npos)
        << failed.str;
    EXPECT_NE(failed.str.find("user_script:4"), std::string::npos) << failed.str;
    // After a flush the server compiles it again, and it is still the same function.
    EXPECT_EQ(redis.execute({"SCRIPT", "FLUSH"}), ok());
    EXPECT_EQ(redis.execute({"EVAL", kScript, "1", "m", "1", "w"}), arr({integer(1), bulk("w")}));
  }
}

TEST(CompiledScripts, AScriptThatDoesNotCompileIsRefusedOnEveryServer) {
  const std::string broken = "-- compiled_scripts test, broken\nreturn (1 +\n";
  for (int server = 0; server < 2; ++server) {
    ManualClock clock{1'000};
    SimRedis redis{clock};
    const Reply refused = redis.execute({"SCRIPT", "LOAD", broken});
    ASSERT_TRUE(refused.is_error()) << "server " << server;
    EXPECT_NE(refused.str.find("Error compiling script"), std::string::npos) << refused.str;
  }
}

}  // namespace
}  // namespace seqby::sim
