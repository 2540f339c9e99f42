// ExecHandler (docs/handler-protocol.md) with real child processes and no Redis: a child written
// in POSIX sh answers each event by what its data asks for. A reply ok is a success, a failed
// reply a failure with its reason; a child that exits, writes a line that is not JSON, replies
// out of turn or speaks another protocol fails only its event and is started again for the next
// one; a child that hangs holds only its own event while another child serves another partition;
// the request line carries the event and the lease token. Every wait is bounded by the child or
// by the handler's destruction.
#include "seqby/runtime/exec_handler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/core/history.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {
namespace {

// A link no command reaches: the handler never commits through the broker.
class NoLink final : public RedisLink {
 public:
  Task<Result<Reply>> execute(Command) override {
    co_return make_error(Errc::closed, "no server in this test");
  }
};

// The child: hello, then per line a reply chosen by a word in the event's data.
constexpr const char* kChild = R"(
echo '{"protocol":1,"name":"sh-test"}'
while IFS= read -r line; do
  n=$(printf '%s' "$line" | sed 's/^{"n":\([0-9]*\),.*/\1/')
  case "$line" in
    *'"do":"fail"'*) echo "{\"n\":$n,\"ok\":false,\"reason\":\"refused by the ledger\"}";;
    *'"do":"exit"'*) echo 'about to exit' >&2; exit 3;;
    *'"do":"garbage"'*) echo 'this is not json';;
    *'"do":"out_of_turn"'*) echo "{\"n\":9999,\"ok\":true}";;
    *'"do":"hang"'*) sleep 600;;
    *) printf '%s\n' "$line" >>"$EXEC_TEST_LOG"; echo "{\"n\":$n,\"ok\":true}";;
  esac
done
)";

struct Fixture {
  Fixture() {
    char dir_template[] = "/tmp/seqby-exec-XXXXXX";
    dir = ::mkdtemp(dir_template);
    log_path = dir + "/events.log";
    script_path = dir + "/child.sh";
    std::ofstream(script_path) << kChild;
    ::setenv("EXEC_TEST_LOG", log_path.c_str(), 1);
  }
  ~Fixture() { std::system(("rm -rf '" + dir + "'").c_str()); }

  std::string log() const {
    std::ifstream in(log_path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir;
  std::string log_path;
  std::string script_path;
  RealRuntime runtime;
  NoLink link;
  RedisBroker broker{link};
  NullHistorySink history;
};

Event event_of(std::string key, std::string id, std::string data) {
  return Event{"billing", std::move(key), std::move(id), "Charged", std::move(data), 1};
}

Task<HandlerResult> handle_one(Fixture& f, ExecHandler& handler, Event event,
                               std::uint64_t generation = 3) {
  const Lease lease{PartitionRef{event.category, event.key}, "", "w1", generation, ""};
  HandlerContext context(f.runtime, f.broker, f.history, lease, "g", event.id, 1, 1);
  HandlerResult result = co_await handler.handle(event, context);
  co_return result;
}

ExecHandlerOptions options_for(const Fixture& f, std::size_t concurrency = 1,
                               std::vector<std::string>* logged = nullptr) {
  ExecHandlerOptions o;
  o.command = "sh '" + f.script_path + "'";
  o.concurrency = concurrency;
  o.hello_timeout_ms = 5000;
  if (logged != nullptr) o.log = [logged](const std::string& line) { logged->push_back(line); };
  return o;
}

TEST(ExecHandler, AnOkReplyIsASuccessAndTheRequestCarriesTheEventAndTheLease) {
  Fixture f;
  ExecHandler handler(f.runtime, options_for(f));
  const Event e = event_of("client-1", "5-0", R"({"client_id":"client-1","n":1})");
  const HandlerResult r = f.runtime.block_on(handle_one(f, handler, e));
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(f.log(),
            R"({"n":1,"event":{"category":"billing","key":"client-1","id":"5-0","type":"Charged",)"
            R"("data":{"client_id":"client-1","n":1},"delivery_count":1},)"
            R"("lease":{"owner":"w1","generation":3,"token":"w1:3"}})"
            "\n");
  EXPECT_EQ(handler.stats().handled, 1u);
  EXPECT_EQ(handler.stats().starts, 1u);
}

TEST(ExecHandler, NestedDataOnSeveralLinesIsPassedVerbatimOnOneLine) {
  const Event e =
      event_of("k", "1-0", "{\"a\": {\n  \"b\": [1, 2.5,\r\n null]},\n\"s\":\"x\\ny\"}");
  EXPECT_EQ(ExecHandler::request_line(1, e, "o", 2),
            R"({"n":1,"event":{"category":"billing","key":"k","id":"1-0","type":"Charged",)"
            R"("data":{"a": {   "b": [1, 2.5,   null]}, "s":"x\ny"},"delivery_count":1},)"
            R"("lease":{"owner":"o","generation":2,"token":"o:2"}})");
}

TEST(ExecHandler, DataThatIsNotAJsonObjectIsPassedAsText) {
  const Event e = event_of("k", "1-0", "not {json");
  EXPECT_EQ(ExecHandler::request_line(4, e, "o", 2),
            R"({"n":4,"event":{"category":"billing","key":"k","id":"1-0","type":"Charged",)"
            R"("data":null,"data_text":"not {json","delivery_count":1},)"
            R"("lease":{"owner":"o","generation":2,"token":"o:2"}})");
}

TEST(ExecHandler, AFailedReplyIsAFailureWithTheChildsReasonAndTheChildStays) {
  Fixture f;
  ExecHandler handler(f.runtime, options_for(f));
  const HandlerResult r =
      f.runtime.block_on(handle_one(f, handler, event_of("k", "1-0", R"({"do":"fail"})")));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.reason.find("refused by the ledger"), std::string::npos) << r.reason;
  const HandlerResult next =
      f.runtime.block_on(handle_one(f, handler, event_of("k", "2-0", R"({"n":2})")));
  EXPECT_TRUE(next.ok) << next.reason;
  EXPECT_EQ(handler.stats().starts, 1u) << "a failed reply is no fault of the child";
  EXPECT_EQ(handler.stats().failed, 1u);
}

// Each misbehaviour fails its own event with what the child did, is logged, and the next event
// goes to a freshly started child.
void expect_fault_then_recovery(const std::string& what_data, const std::string& reason_part) {
  SCOPED_TRACE(what_data);
  Fixture f;
  std::vector<std::string> logged;
  ExecHandler handler(f.runtime, options_for(f, 1, &logged));
  const HandlerResult bad =
      f.runtime.block_on(handle_one(f, handler, event_of("k", "1-0", what_data)));
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.reason.find(reason_part), std::string::npos) << bad.reason;
  bool fault_logged = false;
  for (const std::string& line : logged) {
    fault_logged |= line.find("event=handler_fault child=1") != std::string::npos &&
                    line.find("event_id=1-0") != std::string::npos;
  }
  EXPECT_TRUE(fault_logged);
  const HandlerResult next =
      f.runtime.block_on(handle_one(f, handler, event_of("k", "2-0", R"({"n":2})")));
  EXPECT_TRUE(next.ok) << next.reason;
  EXPECT_EQ(handler.stats().starts, 2u);
  EXPECT_EQ(handler.stats().faults, 1u);
  EXPECT_NE(f.log().find(R"("id":"2-0")"), std::string::npos);
}

TEST(ExecHandler, AChildThatExitsFailsItsEventAndIsStartedAgain) {
  expect_fault_then_recovery(R"({"do":"exit"})", "gave no reply (end of output)");
}

TEST(ExecHandler, ALineThatIsNotJsonFailsItsEventAndTheChildIsStartedAgain) {
  expect_fault_then_recovery(R"({"do":"garbage"})", "wrote a line that is not a JSON object");
}

TEST(ExecHandler, AReplyOutOfTurnFailsItsEventAndTheChildIsStartedAgain) {
  expect_fault_then_recovery(R"({"do":"out_of_turn"})", "replied out of turn");
}

// A child that does not start fails no event (a mistyped command must not halt partitions): the
// event waits while the start is tried again after a backoff, each attempt logged with why.
void expect_start_retried_and_event_waiting(const std::string& command, const std::string& why) {
  SCOPED_TRACE(command);
  Fixture f;
  std::vector<std::string> logged;
  bool returned = false;
  {
    ExecHandlerOptions o = options_for(f, 1, &logged);
    o.command = command;
    ExecHandler handler(f.runtime, o);
    auto one = [&]() -> Task<void> {
      const Event e = event_of("k", "1-0", "{}");
      HandlerResult r = co_await handle_one(f, handler, e);
      (void)r;
      returned = true;
    };
    f.runtime.block_on([&]() -> Task<void> {
      f.runtime.spawn("event", one());
      co_await f.runtime.sleep_ms(2000);  // the first start, 0.5 s, the second, 1 s, the third
    }());
    EXPECT_FALSE(returned) << "the event must wait, not fail";
    EXPECT_EQ(handler.stats().failed, 0u);
    EXPECT_GE(handler.stats().starts, 2u);
  }
  std::size_t faults = 0;
  std::size_t waits = 0;
  for (const std::string& line : logged) {
    if (line.find("event=handler_fault child=1") != std::string::npos &&
        line.find(why) != std::string::npos) {
      ++faults;
    }
    if (line.find("event=handler_not_started child=1 event_id=1-0 attempt=1 retry_in_ms=500") !=
        std::string::npos) {
      ++waits;
    }
  }
  EXPECT_GE(faults, 2u);
  EXPECT_EQ(waits, 1u);
}

TEST(ExecHandler, AChildOfAnotherProtocolVersionFailsNoEventAndIsTriedAgain) {
  expect_start_retried_and_event_waiting("echo '{\"protocol\":2}'; cat",
                                         "speaks protocol 2; this worker speaks 1");
}

TEST(ExecHandler, ACommandThatCannotStartFailsNoEventAndIsTriedAgain) {
  expect_start_retried_and_event_waiting("exec /nonexistent/handler",
                                         "sent no hello line (end of output)");
}

// Two children: one hangs inside partition A's event; partition B's events are served by the
// other meanwhile. Destroying the handler kills the hung child (the test would hang otherwise).
TEST(ExecHandler, AHungChildHoldsOnlyItsOwnEvent) {
  Fixture f;
  bool a_returned = false;
  std::vector<bool> b_ok;
  std::vector<std::string> logged;
  {
    ExecHandler handler(f.runtime, options_for(f, 2, &logged));
    auto a = [&]() -> Task<void> {
      const Event hang = event_of("A", "1-0", R"({"do":"hang"})");
      HandlerResult r = co_await handle_one(f, handler, hang);
      (void)r;
      a_returned = true;
    };
    auto b = [&]() -> Task<void> {
      for (int i = 1; i <= 3; ++i) {
        const Event next =
            event_of("B", std::to_string(i) + "-0", R"({"n":)" + std::to_string(i) + "}");
        HandlerResult r = co_await handle_one(f, handler, next);
        b_ok.push_back(r.ok);
      }
    };
    f.runtime.block_on([&]() -> Task<void> {
      f.runtime.spawn("a", a());
      co_await b();
    }());
    EXPECT_EQ(b_ok, (std::vector<bool>{true, true, true}));
    EXPECT_FALSE(a_returned);
  }
  const std::string handled = f.log();
  EXPECT_EQ(std::count(handled.begin(), handled.end(), '\n'), 3) << handled;
  // The hung child was killed by the handler's end, which its fault line says (not a restart).
  ASSERT_FALSE(logged.empty());
  EXPECT_NE(logged.back().find("event=handler_fault"), std::string::npos) << logged.back();
  EXPECT_NE(logged.back().find("; the worker stops"), std::string::npos) << logged.back();
}

}  // namespace
}  // namespace seqby::redis
