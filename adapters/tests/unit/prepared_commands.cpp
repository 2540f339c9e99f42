// PreparedCommands: the wire form a pipelining link writes as is is the Redis protocol's, byte
// for byte (an empty argument, one holding CR LF, one of 100 KB), made once and kept; a link
// without a wire form of its own (the default, every simulated link) sends the same commands, in
// order, as execute_many would.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "seqby/broker/redis_link.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

using seqby::testing::run_now;

TEST(PreparedCommands, TheWireFormIsTheRedisProtocolsByteForByte) {
  const std::string big(100'000, 'x');
  const PreparedCommands prepared({{"SET", "k", ""}, {"SET", "a\r\nb", "v"}, {"SET", "big", big}});
  EXPECT_EQ(prepared.wire(0), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n");
  EXPECT_EQ(prepared.wire(1), "*3\r\n$3\r\nSET\r\n$4\r\na\r\nb\r\n$1\r\nv\r\n");
  EXPECT_EQ(prepared.wire(2), "*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$100000\r\n" + big + "\r\n");
  // Made once: the same string is handed out again, not made anew.
  EXPECT_EQ(&prepared.wire(2), &prepared.wire(2));
}

// Records every command it is sent, answering each with its position.
class RecordingLink final : public RedisLink {
 public:
  Task<Result<Reply>> execute(Command command) override {
    sent.push_back(std::move(command));
    co_return Reply::of_int(static_cast<std::int64_t>(sent.size()));
  }
  std::vector<Command> sent;
};

TEST(PreparedCommands, ALinkWithoutAWireFormSendsTheSameCommandsInOrderEveryTime) {
  RecordingLink link;
  const std::vector<Command> commands = {{"GET", "a"}, {"PEXPIRE", "b", "3000"}, {"GET", "c"}};
  auto prepared = std::make_shared<const PreparedCommands>(commands);
  const std::vector<Result<Reply>> first = run_now(link.execute_prepared(prepared));
  const std::vector<Result<Reply>> again = run_now(link.execute_prepared(prepared));
  ASSERT_EQ(first.size(), 3u);
  ASSERT_EQ(again.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(first[i].value(), Reply::of_int(static_cast<std::int64_t>(i + 1)));
    EXPECT_EQ(again[i].value(), Reply::of_int(static_cast<std::int64_t>(i + 4)));
  }
  std::vector<Command> expected = commands;
  expected.insert(expected.end(), commands.begin(), commands.end());
  EXPECT_EQ(link.sent, expected);
  EXPECT_EQ(prepared->commands(), commands) << "sending used up the kept commands";
}

}  // namespace
}  // namespace seqby::redis
