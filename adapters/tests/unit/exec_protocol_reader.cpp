// The exec handler's protocol reader on its own (ExecHandler::hello_fault, read_reply; what
// fuzz/exec_protocol.cpp fuzzes): what a child's hello and reply lines say, with the exact fault
// text the handler logs and fails the event with.
#include <gtest/gtest.h>

#include <string>

#include "seqby/runtime/exec_handler.h"

namespace seqby::redis {
namespace {

TEST(ExecProtocolReader, AHelloStartsTheChildOnlyInProtocolOne) {
  EXPECT_EQ(ExecHandler::hello_fault(R"({"protocol":1,"name":"ledger"})"), "");
  EXPECT_EQ(ExecHandler::hello_fault(R"({"protocol":2})"),
            "speaks protocol 2; this worker speaks 1");
  EXPECT_EQ(ExecHandler::hello_fault(R"({"protocol":"1"})"),
            R"(wrote a hello that is not {"protocol": N, ...}: "{\"protocol\":\"1\"}")");
  EXPECT_EQ(ExecHandler::hello_fault("hello"),
            R"(wrote a hello that is not {"protocol": N, ...}: "hello")");
}

TEST(ExecProtocolReader, AReplyIsAResultOrAFault) {
  const ExecHandler::ReplyRead ok = ExecHandler::read_reply(R"({"n":4,"ok":true})", 4, 2);
  EXPECT_EQ(ok.fault, "");
  EXPECT_TRUE(ok.result.ok);

  const ExecHandler::ReplyRead failed =
      ExecHandler::read_reply(R"({"n":4,"ok":false,"reason":"refused by the ledger"})", 4, 2);
  EXPECT_EQ(failed.fault, "");
  EXPECT_FALSE(failed.result.ok);
  EXPECT_EQ(failed.result.reason, "exec handler child=2 failed the event: refused by the ledger");

  EXPECT_EQ(ExecHandler::read_reply(R"({"n":3,"ok":true})", 4, 2).fault,
            R"(replied out of turn (expected "n": 4): "{\"n\":3,\"ok\":true}")");
  EXPECT_EQ(ExecHandler::read_reply(R"({"n":4,"ok":"yes"})", 4, 2).fault,
            R"(wrote a reply without a boolean "ok": "{\"n\":4,\"ok\":\"yes\"}")");
  EXPECT_EQ(ExecHandler::read_reply("done", 4, 2).fault,
            "wrote a line that is not a JSON object (json: expected '{' at the start of an object "
            "at byte 0): \"done\"");
}

TEST(ExecProtocolReader, AFaultQuotesAtMost200BytesOfTheLine) {
  const std::string line(300, 'x');
  const std::string fault = ExecHandler::read_reply(line, 1, 1).fault;
  EXPECT_NE(fault.find("\"" + std::string(200, 'x') + "\"..."), std::string::npos) << fault;
}

}  // namespace
}  // namespace seqby::redis
