// `seqby worker --exec` against a real redis-server (issue 15 item 1): two children written in
// POSIX sh handle two partitions' events, each partition's in stream order and each event once;
// a child's stderr reaches the worker's log prefixed with the child; a child that exits inside
// an event fails that event only, is started again, and the event's retry succeeds; a child's
// failed reply is retried and then halts its partition alone. Bad flag combinations exit 2.
// Every wait is bounded; the worker and the server are stopped by pid.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.h"
#include "seqby/runtime/subprocess.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"
#include "wait_and_read.h"

namespace seqby::apps {
namespace {

using redis::Redirect;
using redis::SpawnOptions;
using redis::Subprocess;
using seqby::testing::read_file;
using seqby::testing::RedisServer;
using seqby::testing::wait_for;

// Records every request it handles ok in $EXEC_LOG; fails "do":"fail" events; exits inside the
// first delivery of a "do":"exit_once" event.
constexpr const char* kChild = R"(
echo '{"protocol":1}'
while IFS= read -r line; do
  n=$(printf '%s' "$line" | sed 's/^{"n":\([0-9]*\),.*/\1/')
  echo "child $SEQBY_HANDLER_CHILD handling request $n" >&2
  case "$line" in
    *'"do":"fail"'*) echo "{\"n\":$n,\"ok\":false,\"reason\":\"the ledger refused it\"}";;
    *'"do":"exit_once"'*'"delivery_count":1}'*) exit 4;;
    *) printf '%s\n' "$line" >>"$EXEC_LOG"; echo "{\"n\":$n,\"ok\":true}";;
  esac
done
)";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

// The value of "field":"..." (or a number) in one request line.
std::string field(const std::string& line, const std::string& name) {
  const std::string tag = "\"" + name + "\":";
  const std::size_t at = line.find(tag);
  if (at == std::string::npos) return "";
  std::size_t begin = at + tag.size();
  if (line[begin] == '"') {
    ++begin;
    return line.substr(begin, line.find('"', begin) - begin);
  }
  return line.substr(begin, line.find_first_of(",}", begin) - begin);
}

// A stream entry id "MS-SEQ" as the pair it orders by.
std::pair<std::uint64_t, std::uint64_t> id_order(const std::string& id) {
  const std::size_t dash = id.find('-');
  return {std::stoull(id.substr(0, dash)), std::stoull(id.substr(dash + 1))};
}

struct Dir {
  Dir() {
    char dir_template[] = "/tmp/seqby-worker-exec-XXXXXX";
    path = ::mkdtemp(dir_template);
  }
  ~Dir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

TEST(WorkerExec, ChildrenHandleEachPartitionInOrderOnceAndAFaultFailsOnlyItsEvent) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  Dir dir;
  const std::string script = dir.path + "/child.sh";
  const std::string handled = dir.path + "/handled.log";
  const std::string worker_log = dir.path + "/worker.log";
  std::ofstream(script) << kChild;
  ::setenv("EXEC_LOG", handled.c_str(), 1);  // the worker's children inherit it

  const std::vector<std::vector<std::string>> publishes{
      {"--key", "c1", "--count", "20"},
      {"--key", "c2", "--count", "20"},
      {"--key", "c3", "--data", R"({"do":"exit_once","n":1})"},
      {"--key", "c4", "--data", R"({"do":"fail"})"},
  };
  for (const std::vector<std::string>& what : publishes) {
    std::vector<std::string> args{"publish", "--redis", server.url(), "--category", "billing"};
    args.insert(args.end(), what.begin(), what.end());
    const scenarios::CommandRun published = scenarios::run_command(kSeqby, args);
    ASSERT_EQ(published.exit_code, 0) << published.err;
  }

  SpawnOptions o;
  o.in = Redirect::null();
  o.out = Redirect::null();
  o.err = Redirect::file(worker_log);
  Result<Subprocess> worker = Subprocess::spawn({kSeqby,
                                                 "worker",
                                                 "--redis",
                                                 server.url(),
                                                 "--category",
                                                 "billing",
                                                 "--group",
                                                 "g",
                                                 "--sequential-by",
                                                 "client_id",
                                                 "--owner-id",
                                                 "w1",
                                                 "--exec",
                                                 "sh '" + script + "'",
                                                 "--exec-concurrency",
                                                 "2",
                                                 "--lease-ttl-ms",
                                                 "2000",
                                                 "--heartbeat-interval-ms",
                                                 "500",
                                                 "--discovery-interval-ms",
                                                 "200",
                                                 "--retry-count-max",
                                                 "2"},
                                                o);
  ASSERT_TRUE(worker.ok()) << worker.error().message;

  // 41 events handled ok: 20 + 20 + c3's retry; c4 halts.
  const bool all = wait_for(
      [&] {
        return lines_of(read_file(handled)).size() >= 41 &&
               read_file(worker_log).find("event=halt") != std::string::npos;
      },
      30'000);
  const std::string log = read_file(worker_log);
  EXPECT_TRUE(all) << read_file(handled) << "\n" << log;
  EXPECT_EQ(worker.value().terminate(20'000), 0) << log;

  std::map<std::string, std::vector<std::string>> ids_by_key;
  for (const std::string& line : lines_of(read_file(handled))) {
    ids_by_key[field(line, "key")].push_back(field(line, "id"));
    EXPECT_EQ(field(line, "token"), "w1:" + field(line, "generation")) << line;
  }
  EXPECT_EQ(ids_by_key["c1"].size(), 20u);
  EXPECT_EQ(ids_by_key["c2"].size(), 20u);
  for (const char* key : {"c1", "c2"}) {
    std::vector<std::string> sorted = ids_by_key[key];
    std::sort(sorted.begin(), sorted.end(),
              [](const std::string& a, const std::string& b) { return id_order(a) < id_order(b); });
    EXPECT_EQ(ids_by_key[key], sorted) << key << " handled out of stream order";
    EXPECT_EQ(std::set<std::string>(sorted.begin(), sorted.end()).size(), sorted.size())
        << key << " handled an event twice";
  }
  // c3: the child exited inside the first delivery; the retry (delivery 2) was handled.
  ASSERT_EQ(ids_by_key["c3"].size(), 1u) << log;
  EXPECT_NE(log.find("event=handler_fault child="), std::string::npos) << log;
  EXPECT_NE(log.find("gave no reply (end of output)"), std::string::npos) << log;
  for (const std::string& line : lines_of(read_file(handled))) {
    if (field(line, "key") == "c3") {
      EXPECT_EQ(field(line, "delivery_count"), "2") << line;
    }
  }
  // c4: failed replies, retried, then its partition halted with the child's reason.
  EXPECT_TRUE(ids_by_key["c4"].empty());
  const std::size_t halt = log.find("event=halt");
  ASSERT_NE(halt, std::string::npos) << log;
  const std::string halt_line = log.substr(halt, log.find('\n', halt) - halt);
  EXPECT_NE(halt_line.find("c4"), std::string::npos) << halt_line;
  EXPECT_NE(log.find("the ledger refused it"), std::string::npos) << log;
  // The children's stderr, prefixed; the start line names the handler.
  EXPECT_NE(log.find("component=exec child=1 pid="), std::string::npos) << log;
  EXPECT_NE(log.find("stderr: child 1 handling request"), std::string::npos) << log;
  EXPECT_NE(log.find("handler=exec exec_concurrency=2"), std::string::npos) << log;
}

TEST(WorkerExec, BadHandlerFlagsExitTwoNamingTheFlag) {
  const std::vector<std::string> base{"worker",     "--redis",         "redis://127.0.0.1:1",
                                      "--category", "billing",         "--group",
                                      "g",          "--sequential-by", "client_id"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--exec", "cat", "--handler", "record2"}, "--exec and --handler: give one handler"},
      {{"--exec-concurrency", "2"}, "--exec-concurrency: needs --exec"},
      {{"--exec", "  "}, "--exec: the command is empty"},
      {{"--exec", "cat", "--exec-concurrency", "0"}, "--exec-concurrency"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const scenarios::CommandRun run = scenarios::run_command(kSeqby, args);
    EXPECT_EQ(run.exit_code, 2) << message;
    EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
  }
}

}  // namespace
}  // namespace seqby::apps
