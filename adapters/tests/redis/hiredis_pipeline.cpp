// Many tasks sharing one HiredisLink: their commands are pipelined on one connection and each
// gets its own reply. Two instances, each with its own loop thread and link, run side by side.
// One task's execute_many sends every command before the first reply is back, and gets the
// replies in order. Prepared commands (execute_prepared, written in their kept wire form) reach
// the server byte for byte, and the same ones sent again are answered again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "redis_server.h"
#include "seqby/hiredis/blocking_redis.h"
#include "seqby/hiredis/hiredis_link.h"

namespace seqby::redis {
namespace {

constexpr int kTaskCount = 200;

struct Outcome {
  int done = 0;
  int own_value_seen = 0;
  std::vector<std::string> problems;
};

Task<void> set_get_incr(RedisLink& link, std::string tag, int index, Outcome* out) {
  const std::string key = tag + ":key:" + std::to_string(index);
  const std::string value = tag + ":value:" + std::to_string(index);
  Command set{"SET", key, value};
  Result<Reply> set_reply = co_await link.execute(std::move(set));
  Command get{"GET", key};
  Result<Reply> get_reply = co_await link.execute(std::move(get));
  Command incr{"INCR", tag + ":counter"};
  Result<Reply> incr_reply = co_await link.execute(std::move(incr));
  if (!set_reply.ok() || !get_reply.ok() || !incr_reply.ok()) {
    out->problems.push_back(key + ": transport error");
  } else if (get_reply.value() == Reply::bulk(value)) {
    ++out->own_value_seen;
  } else {
    out->problems.push_back(key + " got " + to_string(get_reply.value()));
  }
  ++out->done;
}

// Keys of this process only: the server may be shared with other test processes.
std::string unique_tag(const std::string& name) {
  return "hiredis_pipeline:" + std::to_string(::getpid()) + ":" + name;
}

Task<void> wait_for(Runtime& runtime, const int* done, int target) {
  while (*done < target) co_await runtime.sleep_ms(1);
}

TEST(HiredisPipeline, ManyTasksOnOneLinkEachGetTheirOwnReplies) {
  testing::RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  auto config = parse_redis_url(server.url());
  ASSERT_TRUE(config.ok());
  const std::string tag = unique_tag("one");
  BlockingRedis setup(config.value());
  ASSERT_TRUE(setup.execute({"DEL", tag + ":counter"}).ok());
  RealRuntime runtime;
  HiredisLink link(runtime, config.value());
  Outcome outcome;
  for (int i = 0; i < kTaskCount; ++i) {
    runtime.spawn("worker", set_get_incr(link, tag, i, &outcome));
  }
  runtime.block_on(wait_for(runtime, &outcome.done, kTaskCount));
  EXPECT_EQ(outcome.problems, std::vector<std::string>{});
  EXPECT_EQ(outcome.own_value_seen, kTaskCount);
  EXPECT_EQ(runtime.block_on(link.execute({"GET", tag + ":counter"})).value(),
            Reply::bulk(std::to_string(kTaskCount)));
  EXPECT_EQ(link.stats().connects, 1u);
  EXPECT_GT(link.stats().in_flight_max, 1u);  // commands were pipelined, not one at a time
  EXPECT_EQ(link.stats().commands_sent, 3u * kTaskCount + 1);
}

// One engine instance: a loop thread running RealRuntime::run() with its own link.
struct Instance {
  explicit Instance(const RedisConfig& config) : link(runtime, config) {}
  RealRuntime runtime;
  HiredisLink link;
  Outcome outcome;
  std::thread thread;
};

TEST(HiredisPipeline, InstancesOnTheirOwnLoopThreadsRunSideBySide) {
  testing::RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  auto config = parse_redis_url(server.url());
  ASSERT_TRUE(config.ok());
  BlockingRedis setup(config.value());
  ASSERT_TRUE(
      setup.execute({"DEL", unique_tag("a") + ":counter", unique_tag("b") + ":counter"}).ok());
  Instance a(config.value());
  Instance b(config.value());
  for (Instance* instance : {&a, &b}) {
    const std::string tag = unique_tag(instance == &a ? "a" : "b");
    instance->thread = std::thread([instance] { instance->runtime.run(); });
    instance->runtime.post([instance, tag] {
      for (int i = 0; i < kTaskCount / 2; ++i) {
        instance->runtime.spawn("worker", set_get_incr(instance->link, tag, i, &instance->outcome));
      }
      instance->runtime.spawn("finish", [](Instance* self) -> Task<void> {
        co_await wait_for(self->runtime, &self->outcome.done, kTaskCount / 2);
        self->runtime.stop();
      }(instance));
    });
  }
  a.thread.join();
  b.thread.join();
  for (Instance* instance : {&a, &b}) {
    EXPECT_EQ(instance->outcome.problems, std::vector<std::string>{});
    EXPECT_EQ(instance->outcome.own_value_seen, kTaskCount / 2);
  }
  BlockingRedis check(config.value());
  for (const char* name : {"a", "b"}) {
    EXPECT_EQ(check.execute({"GET", unique_tag(name) + ":counter"}).value(),
              Reply::bulk(std::to_string(kTaskCount / 2)));
  }
}

TEST(HiredisPipeline, ExecuteManySendsEveryCommandAtOnceAndAnswersInOrder) {
  testing::RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  auto config = parse_redis_url(server.url());
  ASSERT_TRUE(config.ok());
  const std::string counter = unique_tag("many") + ":counter";
  BlockingRedis setup(config.value());
  ASSERT_TRUE(setup.execute({"DEL", counter}).ok());
  RealRuntime runtime;
  HiredisLink link(runtime, config.value());
  ASSERT_TRUE(runtime.block_on(link.execute({"PING"})).ok());  // connected: nothing waits on it
  constexpr int kCommands = 300;
  std::vector<Command> commands;
  for (int i = 0; i < kCommands; ++i) commands.push_back({"INCR", counter});
  commands.push_back({"NOSUCHCOMMAND"});  // an error reply is one reply among the others
  commands.push_back({"GET", counter});
  std::vector<Result<Reply>> replies = runtime.block_on(link.execute_many(std::move(commands)));
  ASSERT_EQ(replies.size(), static_cast<std::size_t>(kCommands + 2));
  for (int i = 0; i < kCommands; ++i) {
    ASSERT_TRUE(replies[i].ok()) << i;
    EXPECT_EQ(replies[i].value(), Reply::of_int(i + 1)) << "reply " << i << " out of order";
  }
  ASSERT_TRUE(replies[kCommands].ok());
  EXPECT_TRUE(replies[kCommands].value().is_error());
  EXPECT_EQ(replies[kCommands + 1].value(), Reply::bulk(std::to_string(kCommands)));
  // All of them were in flight at once: sent before the first reply came back.
  EXPECT_GE(link.stats().in_flight_max, static_cast<std::uint64_t>(kCommands + 2));
}

TEST(HiredisPipeline, PreparedCommandsSentTwiceReachTheServerByteForByteEachTime) {
  testing::RedisServer server;
  ASSERT_TRUE(server.ok()) << server.error();
  auto config = parse_redis_url(server.url());
  ASSERT_TRUE(config.ok());
  const std::string tag = unique_tag("prepared");
  const std::string odd = std::string("a\r\nb\0c", 7);  // CR LF and a NUL inside a value
  const std::string big(200'000, 'x');
  RealRuntime runtime;
  HiredisLink link(runtime, config.value());
  auto prepared = std::make_shared<const PreparedCommands>(
      std::vector<Command>{{"SET", tag + ":empty", ""},
                           {"SET", tag + ":odd", odd},
                           {"SET", tag + ":big", big},
                           {"INCR", tag + ":odd"},  // an error reply, one among the others
                           {"INCR", tag + ":n"},
                           {"MGET", tag + ":empty", tag + ":odd", tag + ":big"}});
  for (int round = 1; round <= 2; ++round) {
    std::vector<Result<Reply>> replies = runtime.block_on(link.execute_prepared(prepared));
    ASSERT_EQ(replies.size(), 6u);
    for (const Result<Reply>& reply : replies) ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_EQ(replies[0].value(), Reply::status("OK")) << "round " << round;
    EXPECT_TRUE(replies[3].value().is_error()) << "round " << round;
    EXPECT_EQ(replies[4].value(), Reply::of_int(round)) << "round " << round;
    const Reply& values = replies[5].value();
    ASSERT_EQ(values.kind, Reply::Kind::array);
    ASSERT_EQ(values.elements.size(), 3u);
    EXPECT_EQ(values.elements[0], Reply::bulk(""));
    EXPECT_EQ(values.elements[1], Reply::bulk(odd));
    EXPECT_EQ(values.elements[2].str.size(), big.size());
    EXPECT_EQ(values.elements[2], Reply::bulk(big));
  }
}

}  // namespace
}  // namespace seqby::redis
