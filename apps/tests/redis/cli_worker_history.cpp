// What a `seqby worker` keeps of its history in Redis, against a real redis-server: without a
// decision journal and without --history-stream, nothing (no seqby:history stream grows by every
// record, five per event and one per held lease per heartbeat), and its start line says
// history=none; with --history-stream NAME, that stream gets every record, the commits among
// them. Every wait is bounded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "redis_server.h"
#include "seqby/scenarios/redis_driver.h"
#include "seqby_binary.h"

namespace seqby::apps {
namespace {

using scenarios::PublishSpec;
using scenarios::RedisScenarioDriver;
using scenarios::WorkerProcess;
using scenarios::WorkerSettings;
using seqby::testing::RedisServer;

struct WorkerRun {
  std::string log;
  int exit_code = -1;
  // The streams named seqby:history* holding the worker's records afterwards.
  std::vector<std::string> history_keys;
  std::map<std::string, int> named_stream_ops;  // records by op in the stream given
};

// One worker without a journal commits three events of key A and renews its lease a few times,
// then stops; `history_stream` is passed as --history-stream unless empty.
WorkerRun run_worker(const std::string& url, const std::string& label,
                     const std::string& history_stream) {
  WorkerSettings settings;
  settings.journal_maxlen = 0;
  RedisScenarioDriver d(url, kSeqby, label, settings);
  WorkerRun out;
  EXPECT_TRUE(d.ready().ok()) << d.ready().error().message;
  const std::string log_path =
      "/tmp/seqby-cli-worker-history-" + label + "-" + std::to_string(::getpid()) + ".log";
  WorkerProcess worker(kSeqby, d.url(), d.category(), history_stream, "w1", settings, log_path);
  EXPECT_TRUE(worker.started());
  Result<std::vector<std::string>> ids =
      d.publish({PublishSpec{"A", 1, 0, false}, PublishSpec{"A", 2, 0, false},
                 PublishSpec{"A", 3, 0, false}});
  EXPECT_TRUE(ids.ok()) << ids.error().message;
  EXPECT_TRUE(d.wait_until([&] { return d.last_seq("A") == 3; }))
      << "the worker never committed A seq 3\n"
      << worker.log();
  ::usleep(3 * settings.heartbeat_interval_ms * 1000);  // a few heartbeat rounds
  out.exit_code = worker.terminate();
  out.log = worker.log();
  // The streams holding a record of this run's category (the server may be shared with other
  // test processes, whose streams name their own categories). The driver's publishes are
  // recorded in a stream of its own: only the worker's count here.
  for (const redis::Reply& key : d.run({"KEYS", "seqby:history*"}).elements) {
    if (key.str == d.history_stream()) continue;
    bool ours = false;
    for (const redis::Reply& entry : d.run({"XRANGE", key.str, "-", "+"}).elements) {
      const std::vector<redis::Reply>& fields =
          entry.elements.size() == 2 ? entry.elements[1].elements : std::vector<redis::Reply>{};
      for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        ours = ours || (fields[i].str == "category" && fields[i + 1].str == d.category());
      }
    }
    if (ours) out.history_keys.push_back(key.str);
  }
  if (!history_stream.empty()) {
    for (const redis::Reply& entry : d.run({"XRANGE", history_stream, "-", "+"}).elements) {
      if (entry.elements.size() != 2) continue;
      const std::vector<redis::Reply>& fields = entry.elements[1].elements;
      for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        if (fields[i].str == "op") ++out.named_stream_ops[fields[i + 1].str];
      }
    }
  }
  return out;
}

TEST(WorkerHistory, WithoutAJournalOrAStreamNamedAWorkerKeepsNoHistoryInRedis) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const WorkerRun run = run_worker(server.url(), "none", "");
  EXPECT_EQ(run.exit_code, 0) << run.log;
  EXPECT_EQ(run.history_keys, std::vector<std::string>{}) << run.log;
  EXPECT_NE(run.log.find(" history=none"), std::string::npos) << run.log;
  EXPECT_EQ(run.log.find("history_stream="), std::string::npos) << run.log;
}

TEST(WorkerHistory, AStreamNamedGetsEveryRecordTheCommitsAndRenewalsAmongThem) {
  RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  const std::string stream = "seqby:history:named-" + std::to_string(::getpid());
  const WorkerRun run = run_worker(server.url(), "named", stream);
  EXPECT_EQ(run.exit_code, 0) << run.log;
  EXPECT_EQ(run.history_keys, std::vector<std::string>{stream}) << run.log;
  // Each event's read, enter, exit, commit and ack, the acquire, and the heartbeat's renewals.
  std::map<std::string, int> ops = run.named_stream_ops;
  for (const char* op : {"read", "enter", "exit", "commit", "ack"}) {
    EXPECT_EQ(ops[op], 3) << op << "\n" << run.log;
  }
  EXPECT_EQ(ops["acquire"], 1) << run.log;
  EXPECT_GE(ops["renew"], 1) << run.log;
  EXPECT_NE(run.log.find(" history_stream=" + stream), std::string::npos) << run.log;
}

}  // namespace
}  // namespace seqby::apps
