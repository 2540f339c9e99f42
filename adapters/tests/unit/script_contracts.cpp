// The scripts' contracts (seqby/broker/script_contracts.h) and typed reply decoding (reply.h):
// every embedded script has one, KEYS/ARGV round-trip through an EVAL command in the order the
// script's header names them, and a reply of the wrong shape is a protocol error naming the
// script and the shape it expected.
#include "seqby/broker/script_contracts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "seqby/broker/scripts.h"

namespace seqby::redis {
namespace {

TEST(ScriptContracts, EveryEmbeddedScriptHasExactlyOneContract) {
  std::set<std::string_view> embedded;
  for (const EmbeddedScript& s : embedded_scripts()) embedded.insert(s.name);
  const std::span<const std::string_view> names = script::contract_names();
  const std::set<std::string_view> contracts(names.begin(), names.end());
  EXPECT_EQ(contracts.size(), names.size());
  EXPECT_EQ(contracts, embedded);
}

TEST(ScriptContracts, FencedCommitEncodesInTheScriptsOrderAndDecodesBack) {
  using S = script::FencedCommit;
  const S::Args args{
      "order:k:__lease__", "order:k:__sink__:g", "order:k:__effects__:g", "w1:3", 7, "1-0"};
  const Command command = eval_command("EVALSHA", "abc", script::encode<S>(args));
  EXPECT_EQ(command, (Command{"EVALSHA", "abc", "3", "order:k:__lease__", "order:k:__sink__:g",
                              "order:k:__effects__:g", "w1:3", "7", "1-0"}));
  const std::optional<S::Args> back = script::decode_args<S>(command);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->sink, args.sink);
  EXPECT_EQ(back->token, "w1:3");
  EXPECT_EQ(back->seq, 7);
  EXPECT_EQ(back->effect, "1-0");
}

TEST(ScriptContracts, FencedStepsCarriesEachStepAsItsOwnScriptWouldAndAnswersEachApart) {
  using S = script::FencedSteps;
  S::Args args;
  std::vector<S::Asked> asked;
  asked.push_back(S::add(
      &args,
      script::FencedCommitNext::Args{"o:a:__lease__", "o:a", "o:a:__sink__:g", "o:a:__effects__:g",
                                     "w1:3", "g", ReadFrom::new_entries, "1-0", 32, "", 7, "1-0"},
      /*with_commit=*/true));
  asked.push_back(S::add(
      &args,
      script::FencedCommitNext::Args{"o:b:__lease__", "o:b", "o:b:__sink__:g", "o:b:__effects__:g",
                                     "w1:4", "g", ReadFrom::pending, "", 1, "2-0", 9, "ignored"},
      /*with_commit=*/false));
  const Command command = eval_command("EVALSHA", "abc", script::encode<S>(args));
  EXPECT_EQ(command, (Command{"EVALSHA",
                              "abc",
                              "8",
                              "o:a:__lease__",
                              "o:a",
                              "o:a:__sink__:g",
                              "o:a:__effects__:g",
                              "o:b:__lease__",
                              "o:b",
                              "o:b:__sink__:g",
                              "o:b:__effects__:g",
                              "w1:3",
                              "g",
                              ">",
                              "1-0",
                              "32",
                              "",
                              "7",
                              "1-0",
                              "w1:4",
                              "g",
                              "0",
                              "",
                              "1",
                              "2-0",
                              "",
                              ""}));
  std::optional<std::vector<S::Step>> steps = S::steps_of(*script_call_of(command));
  ASSERT_TRUE(steps.has_value());
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_TRUE((*steps)[0].with_commit);
  EXPECT_EQ((*steps)[0].commit_next.seq, 7);
  EXPECT_EQ((*steps)[0].commit_next.ack_id, "1-0");
  EXPECT_FALSE((*steps)[1].with_commit);
  EXPECT_EQ((*steps)[1].next.stream, "o:b");
  EXPECT_EQ((*steps)[1].next.held_id, "2-0");
  EXPECT_FALSE(S::steps_of(ScriptCallView{std::span(command).subspan(3, 3), {}}).has_value());

  // What each step asked, the same read back from the call.
  ASSERT_EQ(asked.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const S::Asked back = S::asked((*steps)[i]);
    EXPECT_EQ(back.with_commit, asked[i].with_commit);
    EXPECT_EQ(back.ack_and_held, asked[i].ack_and_held);
    EXPECT_EQ(back.seq, asked[i].seq);
    EXPECT_EQ(back.token, asked[i].token);
  }
  EXPECT_TRUE(asked[0].with_commit);
  EXPECT_EQ(asked[0].seq, 7);
  EXPECT_EQ(asked[0].token, "w1:3");
  EXPECT_FALSE(asked[0].ack_and_held);  // no held entry
  EXPECT_FALSE(asked[1].with_commit);
  EXPECT_FALSE(asked[1].ack_and_held);  // no ack

  // One reply per step: the first step's commit and read, the second refused alone.
  const Reply reply =
      Reply::array({Reply::array({Reply::bulk("accepted"), Reply::of_int(7), Reply::bulk("w1:3"),
                                  Reply::of_int(1), Reply::bulk(""), Reply::bulk("2-0"),
                                  Reply::bulk("t"), Reply::bulk("d"), Reply::of_int(1)}),
                    Reply::error("FENCED lease not held by w1:4")});
  const S::Out out = S::decode_reply(reply, asked);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out[0].ok()) << out[0].error().message;
  EXPECT_EQ(out[0].value().commit->outcome, CommitOutcome::accepted);
  EXPECT_TRUE(out[0].value().acked);
  ASSERT_TRUE(out[0].value().entry.has_value());
  EXPECT_EQ(out[0].value().entry->id, "2-0");
  ASSERT_FALSE(out[1].ok());
  EXPECT_EQ(out[1].error().code, Errc::fenced);

  // The whole script's error, or a reply of another length, is every step's.
  for (const Reply& whole : {Reply::error("NOSCRIPT x"), Reply::array({Reply::of_int(1)})}) {
    const S::Out each = S::decode_reply(whole, asked);
    ASSERT_EQ(each.size(), 2u);
    EXPECT_FALSE(each[0].ok());
    EXPECT_FALSE(each[1].ok());
  }
}

// A step in the steady state is answered by its ack's count alone (fenced_steps.lua steady_step):
// read, it is exactly the whole reply it stands for; a count for a step that could not be in
// that state, or another integer, is a shape error of its own.
TEST(ScriptContracts, FencedStepsSteadyStepAnsweredInShortReadsAsItsWholeReply) {
  using S = script::FencedSteps;
  const S::Asked commit{true, true, 7, "w1:3"};
  const S::Asked next{false, true, 0, ""};
  const Reply whole =
      Reply::array({Reply::array({Reply::bulk("accepted"), Reply::of_int(7), Reply::bulk("w1:3"),
                                  Reply::of_int(1), Reply::bulk(""), Reply::bulk("2-0")}),
                    Reply::array({Reply::of_int(0), Reply::bulk(""), Reply::bulk("3-0")})});
  const Reply in_short = Reply::array({Reply::of_int(1), Reply::of_int(0)});
  const S::Out long_form = S::decode_reply(whole, {commit, next});
  const S::Out short_form = S::decode_reply(in_short, {commit, next});
  ASSERT_EQ(short_form.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(long_form[i].ok()) << long_form[i].error().message;
    ASSERT_TRUE(short_form[i].ok()) << short_form[i].error().message;
    const NextReply& a = long_form[i].value();
    const NextReply& b = short_form[i].value();
    EXPECT_EQ(a.ack_asked, b.ack_asked);
    EXPECT_EQ(a.acked, b.acked);
    EXPECT_EQ(a.held_checked, b.held_checked);
    EXPECT_EQ(a.last_id, b.last_id);
    EXPECT_EQ(a.entry.has_value(), b.entry.has_value());
    EXPECT_EQ(a.held.size(), b.held.size());
    EXPECT_EQ(a.step_failed.has_value(), b.step_failed.has_value());
    ASSERT_EQ(a.commit.has_value(), b.commit.has_value());
    if (a.commit.has_value()) {
      EXPECT_EQ(a.commit->outcome, b.commit->outcome);
      EXPECT_EQ(a.commit->last_seq, b.commit->last_seq);
      EXPECT_EQ(a.commit->committed_by, b.commit->committed_by);
    }
  }
  EXPECT_TRUE(short_form[0].value().acked);
  EXPECT_FALSE(short_form[1].value().acked);
  EXPECT_EQ(short_form[0].value().commit->committed_by, "w1:3");

  // fenced_commit_next's own reply, in short, reads the same.
  const Result<NextReply> one = script::FencedCommitNext::decode_reply(Reply::of_int(1), commit);
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one.value().commit->outcome, CommitOutcome::accepted);
  EXPECT_EQ(one.value().commit->last_seq, 7);
  EXPECT_TRUE(one.value().acked && one.value().held_checked);
  EXPECT_FALSE(script::FencedCommitNext::decode_reply(Reply::of_int(1)).ok())
      << "read without what it asked, a count is no reply";

  // fenced_next's own, too: the ack's count, no commit.
  const Result<NextReply> plain = script::FencedNext::decode_reply(Reply::of_int(0), next);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_TRUE(plain.value().ack_asked && plain.value().held_checked);
  EXPECT_FALSE(plain.value().acked);
  EXPECT_FALSE(plain.value().commit.has_value());
  EXPECT_FALSE(script::FencedNext::decode_reply(Reply::of_int(0)).ok());

  const S::Asked no_held{true, false, 7, "w1:3"};
  for (const auto& [count, asked] :
       {std::pair{1, no_held}, std::pair{2, commit}, std::pair{-1, next}}) {
    const S::Out out = S::decode_reply(Reply::array({Reply::of_int(count)}), {asked});
    ASSERT_FALSE(out[0].ok()) << count;
    EXPECT_EQ(out[0].error().code, Errc::protocol);
  }
}

TEST(ScriptContracts, DecodeArgsRefusesAnotherShape) {
  using S = script::FencedAck;
  EXPECT_FALSE(script::decode_args<S>(Command{"EVAL", "x", "3", "a", "b", "c", "d", "e"}));
  EXPECT_FALSE(script::decode_args<S>(Command{"EVAL", "x", "2", "a", "b", "c", "d"}));
  EXPECT_FALSE(script::decode_args<S>(Command{"GET", "x", "2", "a", "b", "c", "d", "e"}));
  EXPECT_FALSE(script::decode_args<S>(Command{"EVAL", "x", "9", "a"}));
  EXPECT_TRUE(script::decode_args<S>(Command{"EVAL", "x", "2", "a", "b", "c", "d", "e"}));
  EXPECT_FALSE(script::decode_args<script::FencedCommit>(
      Command{"EVAL", "x", "3", "a", "b", "c", "t", "seven", "e"}));
}

TEST(ScriptContracts, LiveMembersTakesEveryRemainingKeyAndArgument) {
  using S = script::LiveMembers;
  S::Args args;
  args.members = "order:__members__:g";
  args.member_keys = {"order:__member__:g:a", "order:__member__:g:b"};
  args.owners = {"a", "b"};
  const ScriptCall call = script::encode<S>(args);
  EXPECT_EQ(call.keys, (std::vector<std::string>{"order:__members__:g", "order:__member__:g:a",
                                                 "order:__member__:g:b"}));
  EXPECT_EQ(call.args, (std::vector<std::string>{"a", "b"}));
  const std::optional<S::Args> back = script::decode_args<S>(call);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->member_keys, args.member_keys);
  EXPECT_EQ(back->owners, args.owners);
}

TEST(ScriptContracts, FencedReadEncodesWhereToReadFrom) {
  using S = script::FencedRead;
  const S::Args args{"l", "s", "w1:1", "g", ReadFrom::new_entries};
  EXPECT_EQ(script::encode<S>(args).args, (std::vector<std::string>{"w1:1", "g", ">"}));
  const std::optional<S::Args> back = script::decode_args<S>(script::encode<S>(args));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->from, ReadFrom::new_entries);
}

TEST(ScriptContracts, RepliesAreReadByTypeAndAWrongShapeNamesTheScript) {
  const Result<CommitReply> accepted = script::FencedCommit::decode_reply(
      Reply::array({Reply::bulk("accepted"), Reply::of_int(4), Reply::bulk("w1:3")}));
  ASSERT_TRUE(accepted.ok());
  EXPECT_EQ(accepted.value().outcome, CommitOutcome::accepted);
  EXPECT_EQ(accepted.value().last_seq, 4);
  EXPECT_EQ(accepted.value().committed_by, "w1:3");

  const Result<CommitReply> fenced =
      script::FencedCommit::decode_reply(Reply::error("FENCED lease not held by w1:3"));
  ASSERT_TRUE(fenced.ok());
  EXPECT_EQ(fenced.value().outcome, CommitOutcome::fenced);

  const Result<std::optional<StreamEntry>> read =
      script::FencedRead::decode_reply(Reply::array({Reply::bulk("1-0"), Reply::of_int(2)}));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.code(), Errc::protocol);
  EXPECT_EQ(read.error().message,
            "unexpected reply to fenced_read: [\"1-0\", (integer) 2] (expected nil or [string, "
            "string, string, integer >= 0])");

  const Result<std::uint64_t> dropped =
      script::DropStaleConsumers::decode_reply(Reply::error("NOGROUP no such group"));
  ASSERT_FALSE(dropped.ok());
  EXPECT_EQ(dropped.code(), Errc::no_group);
  EXPECT_FALSE(script::Acquire::decode_reply(Reply::of_int(0)).ok());
  EXPECT_FALSE(script::Acquire::decode_reply(Reply::nil()).value().has_value());
}

TEST(ScriptContracts, RenewManyAnswersACharacterPerLeaseAndRefusesAnyOther) {
  const Result<std::vector<bool>> renewed = script::RenewMany::decode_reply(Reply::bulk("101"));
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed.value(), (std::vector<bool>{true, false, true}));

  // The previous release's reply (an integer per lease) and a stray character are protocol
  // errors that name the script, not leases read as refused.
  for (const Reply& reply :
       {Reply::array({Reply::of_int(1), Reply::of_int(0)}), Reply::bulk("1x0")}) {
    const Result<std::vector<bool>> odd = script::RenewMany::decode_reply(reply);
    ASSERT_FALSE(odd.ok()) << to_string(reply);
    EXPECT_EQ(odd.code(), Errc::protocol);
    EXPECT_NE(odd.error().message.find("renew_many"), std::string::npos) << odd.error().message;
  }
}

TEST(ScriptContracts, OperatorRefusalsMapToTheirErrc) {
  const Result<bool> unknown =
      script::AdminSkip::decode_reply(Reply::error("NOENTRY no entry 9-9 in order:k"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.code(), Errc::not_found);
  EXPECT_EQ(unknown.error().message, "no entry 9-9 in order:k");
  const Result<script::AdminDlq::Out> not_head =
      script::AdminDlq::decode_reply(Reply::error("NOTHEAD 2-0 is not the head"));
  ASSERT_FALSE(not_head.ok());
  EXPECT_EQ(not_head.code(), Errc::refused);
  const Result<script::AdminDlq::Out> moved =
      script::AdminDlq::decode_reply(Reply::array({Reply::bulk("5-0"), Reply::of_int(1)}));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved.value().dlq_id, "5-0");
  EXPECT_TRUE(moved.value().halted);
}

// A publisher sends a publish again when the cluster refused it for now (CLUSTERDOWN during a
// failover, TRYAGAIN during a migration, a server LOADING): the decoded error keeps the reply's
// code word for not_run_yet to tell it from a refusal that ran or would fail again.
TEST(ReplyDecode, ACommandRefusedForNowIsToldApartFromOneThatFailed) {
  for (const char* later :
       {"CLUSTERDOWN The cluster is down", "TRYAGAIN Multiple keys request",
        "LOADING Redis is loading the dataset in memory", "MASTERDOWN Link with MASTER is down"}) {
    const Result<script::Publish::Out> refused = script::Publish::decode_reply(Reply::error(later));
    ASSERT_FALSE(refused.ok()) << later;
    EXPECT_TRUE(not_run_yet(refused.error().message)) << later;
  }
  for (const char* failed : {"ERR wrong number of arguments", "FENCED lease not held by w1:3",
                             "NOGROUP No such key", "OOM command not allowed"}) {
    const Result<script::Publish::Out> refused =
        script::Publish::decode_reply(Reply::error(failed));
    ASSERT_FALSE(refused.ok()) << failed;
    EXPECT_FALSE(not_run_yet(refused.error().message)) << failed;
  }
  EXPECT_FALSE(
      not_run_yet("the cluster said CLUSTERDOWN"));  // the code word leads, or it is not one
}

TEST(ReplyDecode, FieldMapsReadByName) {
  const Result<FieldMap> map = decode<FieldMap>(
      Reply::array({Reply::bulk("name"), Reply::bulk("g"), Reply::status("pending"),
                    Reply::of_int(3), Reply::bulk("lag"), Reply::nil()}),
      "XINFO GROUPS");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map.value().get<std::string>("name"), "g");
  EXPECT_EQ(map.value().get<std::uint64_t>("pending"), 3u);
  EXPECT_FALSE(map.value().get<std::int64_t>("lag").has_value());
  EXPECT_FALSE(map.value().get<std::int64_t>("missing").has_value());
  EXPECT_FALSE(decode<FieldMap>(Reply::array({Reply::bulk("odd")}), "HGETALL").ok());
}

}  // namespace
}  // namespace seqby::redis
