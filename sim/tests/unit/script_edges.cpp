// Three script contracts no other test pins down, each what an operator or the harness reads:
// a stale owner's halt is refused and the halt record operators read stays the holder's; the
// `record` handler's exit deletes only its own in-progress marker (another owner's marker is the
// server-side evidence of an overlap); the decision journal tells a repeated ack ('again') from
// the first. RedisBroker on SimRedis, call by call (it kills mutate/catalog.txt
// record-halt-unfenced, handler-exit-deletes-any-marker, ack-journal-again-inverted).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seqby/broker/redis_broker.h"
#include "seqby/broker/script_contracts.h"
#include "seqby/core/keyspace.h"
#include "seqby/sim/sim_redis.h"
#include "sim_direct.h"

namespace seqby::redis {
namespace {

constexpr const char* kGroup = "billing";

using seqby::testing::DirectLink;
using seqby::testing::ManualClock;
using seqby::testing::run_now;

struct ScriptEdges : ::testing::Test {
  ManualClock clock;
  sim::SimRedis redis{clock};
  DirectLink link{redis};
  const PartitionRef partition{"order", "k0"};

  static Lease acquire(RedisBroker& broker, const PartitionRef& p, const std::string& owner) {
    auto got = run_now(broker.acquire(p, "", owner, 3000));
    SEQBY_CHECK(got.ok() && got.value().has_value());
    return *got.value();
  }
  // A group on `p` and `n` events published to it: their ids.
  static std::vector<std::string> publish_events(RedisBroker& broker, const PartitionRef& p,
                                                 int n) {
    SEQBY_CHECK(run_now(broker.ensure_group(p, kGroup)).ok());
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      ids.push_back(run_now(broker.publish(p, "created", "{\"seq\":1}")).value());
    }
    return ids;
  }
  // `lease`'s first read of new entries, `n` of them in one batch: whether it delivered the first
  // to enter and held the n - 1 others.
  static bool read_batch(RedisBroker& broker, const Lease& lease, std::uint32_t n) {
    NextAsk ask;
    ask.count = n;
    auto read = run_now(broker.fenced_next(lease, kGroup, ReadFrom::new_entries, "", ask));
    return read.ok() && read.value().entry.has_value() && read.value().held.size() == n - 1;
  }
  // One step of script S (fenced_commit_next, fenced_next), read back as the broker reads it
  // (S::asked): its reply's kind checked against `kind` (the steady step's short answer is an
  // integer, a full reply an array).
  template <typename S>
  static Result<NextReply> step_once(RedisBroker& broker, const typename S::Args& args,
                                     Reply::Kind kind) {
    Result<Reply> reply = run_now(broker.run_script(S::name, script::encode<S>(args)));
    if (!reply.ok()) return reply.error();
    EXPECT_EQ(reply.value().kind, kind);
    return S::decode_reply(reply.value(), S::asked(args));
  }
  std::map<std::string, std::string> hash(const std::string& key) {
    Reply r = redis.execute({"HGETALL", key});
    std::map<std::string, std::string> out;
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
      out[r.elements[i].str] = r.elements[i + 1].str;
    }
    return out;
  }
};

TEST_F(ScriptEdges, AStaleOwnersHaltIsRefusedAndTheHaltRecordStaysTheHolders) {
  RedisBroker broker{link};
  const std::string e1 = run_now(broker.publish(partition, "created", "{\"seq\":1}")).value();
  const Lease stale = acquire(broker, partition, "a");
  clock.advance(3001);
  const Lease holder = acquire(broker, partition, "b");
  ASSERT_TRUE(run_now(broker.record_halt(holder, kGroup, e1, "poison", 4)).ok());

  const Status refused = run_now(broker.record_halt(stale, kGroup, e1, "timeout", 9));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), Errc::fenced);
  const std::map<std::string, std::string> halt = hash(halt_key_name(partition, kGroup));
  EXPECT_EQ(halt.at("owner"), holder.token());
  EXPECT_EQ(halt.at("reason"), "poison");
  EXPECT_EQ(halt.at("delivery_count"), "4");
}

TEST_F(ScriptEdges, AHandlerExitDeletesItsOwnMarkerOnlyNeverAnotherOwners) {
  RedisBroker broker{link};
  const std::string marker = inprogress_key_name(partition, kGroup);
  script::HandlerEnter::Args enter{marker, "a:e1", "a", 3000, "e1"};
  auto entered = run_now(
      broker.run_script(script::HandlerEnter::name, script::encode<script::HandlerEnter>(enter)));
  ASSERT_TRUE(script::decode_reply<script::HandlerEnter>(entered).ok());

  // b (overlapping, under a lease of its own) ends its execution: a's marker stays.
  script::HandlerExit::Args other{marker, "b:e2", "e2", "ok"};
  auto exited = run_now(
      broker.run_script(script::HandlerExit::name, script::encode<script::HandlerExit>(other)));
  Result<bool> deleted = script::decode_reply<script::HandlerExit>(exited);
  ASSERT_TRUE(deleted.ok());
  EXPECT_FALSE(deleted.value());
  EXPECT_EQ(redis.execute({"GET", marker}).str, "a:e1");

  script::HandlerExit::Args own{marker, "a:e1", "e1", "ok"};
  auto own_exit = run_now(
      broker.run_script(script::HandlerExit::name, script::encode<script::HandlerExit>(own)));
  Result<bool> own_deleted = script::decode_reply<script::HandlerExit>(own_exit);
  ASSERT_TRUE(own_deleted.ok());
  EXPECT_TRUE(own_deleted.value());
  EXPECT_EQ(redis.execute({"EXISTS", marker}).integer, 0);
}

TEST_F(ScriptEdges, TheJournalTellsARepeatedAckFromTheFirst) {
  RedisBrokerOptions options;
  options.journal_maxlen = 1000;
  options.journal_group = kGroup;
  RedisBroker broker{link, options};
  const std::string e1 = run_now(broker.publish(partition, "created", "{\"seq\":1}")).value();
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const Lease a = acquire(broker, partition, "a");
  auto read = run_now(broker.fenced_read(a, kGroup, ReadFrom::new_entries));
  ASSERT_TRUE(read.ok() && read.value().has_value());
  ASSERT_TRUE(run_now(broker.fenced_ack(a, kGroup, e1)).ok());
  ASSERT_TRUE(run_now(broker.fenced_ack(a, kGroup, e1)).ok());  // a lost reply, sent again

  std::vector<std::string> ack_details;
  Reply journal = redis.execute({"XRANGE", journal_stream_name(partition), "-", "+"});
  for (const Reply& entry : journal.elements) {
    ASSERT_EQ(entry.elements.size(), 2u);
    std::map<std::string, std::string> fields;
    const Reply& flat = entry.elements[1];
    for (std::size_t i = 0; i + 1 < flat.elements.size(); i += 2) {
      fields[flat.elements[i].str] = flat.elements[i + 1].str;
    }
    if (fields["op"] == "ack") {
      EXPECT_EQ(fields["event"], e1);
      ack_details.push_back(fields["detail"]);
    }
  }
  const std::vector<std::string> expected{"", "again"};
  EXPECT_EQ(ack_details, expected);
}

// A failover can take the consumer group back (its creation was among the writes a lagging
// replica never got): then fenced_commit_next commits, and its read is refused NOGROUP. The
// commit stands (a script's error keeps its earlier writes), so the reply tells it beside the
// step's error, and the caller records it (seqby sim --seed 349 --key-layout cluster
// --cluster-shards 3 once lost it: the script answered the error alone).
TEST_F(ScriptEdges, ACommitThatStoodIsToldBesideTheStepThatFailedAfterIt) {
  RedisBroker broker{link};
  const std::string e1 = run_now(broker.publish(partition, "created", "{\"seq\":1}")).value();
  ASSERT_TRUE(run_now(broker.ensure_group(partition, kGroup)).ok());
  const Lease a = acquire(broker, partition, "a");
  auto read = run_now(broker.fenced_read(a, kGroup, ReadFrom::new_entries));
  ASSERT_TRUE(read.ok() && read.value().has_value());
  ASSERT_EQ(redis.execute({"XGROUP", "DESTROY", partition.stream(), kGroup}).integer, 1);

  const EffectCommit effect{1, e1};
  NextAsk ask;
  ask.commit = &effect;
  Result<NextReply> stepped =
      run_now(broker.fenced_next(a, kGroup, ReadFrom::new_entries, e1, ask));
  ASSERT_TRUE(stepped.ok()) << stepped.error().message;
  ASSERT_TRUE(stepped.value().commit.has_value());
  EXPECT_EQ(stepped.value().commit->outcome, CommitOutcome::accepted);
  EXPECT_EQ(stepped.value().commit->last_seq, 1);
  ASSERT_TRUE(stepped.value().step_failed.has_value());
  EXPECT_EQ(stepped.value().step_failed->code, Errc::no_group);
  EXPECT_FALSE(stepped.value().ack_asked);
  EXPECT_FALSE(stepped.value().entry.has_value());
  EXPECT_EQ(hash(sink_key_name(partition, kGroup)).at("last_seq"), "1");
}

// fenced_steps answers a step in the steady state (the entry just handled acknowledged, a held
// entry entered, its commit accepted) by the ack's count alone, and every other step in full:
// a commit out of order writes and acknowledges nothing, a duplicate is told with its committer,
// as fenced_commit_next tells them (it kills mutate/catalog.txt steady-step-skips-the-order-check).
TEST_F(ScriptEdges, FencedStepsAnswersASteadyStepInShortAndAnyOtherInFull) {
  RedisBroker broker{link};
  const PartitionRef other{"order", "k1"};
  std::vector<std::string> ids = publish_events(broker, partition, 2);
  for (std::string& id : publish_events(broker, other, 2)) ids.push_back(std::move(id));
  const Lease a = acquire(broker, partition, "a");
  const Lease b = acquire(broker, other, "a");
  ASSERT_TRUE(read_batch(broker, a, 2));
  ASSERT_TRUE(read_batch(broker, b, 2));
  using S = script::FencedSteps;
  // Each partition: the commit of its first entry's effect with the ack of it, and its held
  // second entry entered. a commits seq 1 (the next); b seq 3 (out of order).
  const auto step = [&](const Lease& lease, std::int64_t seq, const std::string& acked,
                        const std::string& held) {
    return script::FencedCommitNext::Args{lease.key(),
                                          lease.partition.stream(),
                                          sink_key_name(lease.partition, kGroup),
                                          effects_hash_name(lease.partition, kGroup),
                                          lease.token(),
                                          kGroup,
                                          ReadFrom::new_entries,
                                          acked,
                                          32,
                                          held,
                                          seq,
                                          "effect " + std::to_string(seq)};
  };
  const auto run_steps = [&](std::int64_t seq_a, std::int64_t seq_b) {
    S::Args args;
    std::vector<S::Asked> asked;
    asked.push_back(S::add(&args, step(a, seq_a, ids[0], ids[1]), true));
    asked.push_back(S::add(&args, step(b, seq_b, ids[2], ids[3]), true));
    Result<Reply> reply = run_now(broker.run_script(S::name, script::encode<S>(std::move(args))));
    SEQBY_CHECK(reply.ok() && reply.value().kind == Reply::Kind::array &&
                reply.value().elements.size() == 2);
    return std::pair{reply.value(), S::decode_reply(reply, asked)};
  };

  const auto [first, first_read] = run_steps(1, 3);
  EXPECT_EQ(first.elements[0].kind, Reply::Kind::integer);
  EXPECT_EQ(first.elements[0].integer, 1);
  ASSERT_TRUE(first_read[0].ok());
  EXPECT_EQ(first_read[0].value().commit->outcome, CommitOutcome::accepted);
  EXPECT_TRUE(first_read[0].value().acked);
  EXPECT_TRUE(first_read[0].value().held_checked);
  EXPECT_EQ(hash(effects_hash_name(partition, kGroup)).at("1"), "effect 1");
  ASSERT_EQ(first.elements[1].kind, Reply::Kind::array);  // out of order: told in full
  ASSERT_TRUE(first_read[1].ok());
  EXPECT_EQ(first_read[1].value().commit->outcome, CommitOutcome::out_of_order);
  EXPECT_FALSE(first_read[1].value().ack_asked);
  EXPECT_TRUE(hash(sink_key_name(other, kGroup)).empty());
  EXPECT_TRUE(hash(effects_hash_name(other, kGroup)).empty());
  const Reply pending = redis.execute({"XPENDING", other.stream(), kGroup});
  EXPECT_EQ(pending.elements.at(0).integer, 2) << "b's first entry was acknowledged";

  // a's step sent again (its reply lost): a duplicate, told in full with its committer, and the
  // ack again (0). b's commit of seq 1 now: answered in short.
  const auto [again, again_read] = run_steps(1, 1);
  ASSERT_EQ(again.elements[0].kind, Reply::Kind::array);
  ASSERT_TRUE(again_read[0].ok());
  EXPECT_EQ(again_read[0].value().commit->outcome, CommitOutcome::duplicate);
  EXPECT_EQ(again_read[0].value().commit->committed_by, a.token());
  EXPECT_TRUE(again_read[0].value().ack_asked);
  EXPECT_FALSE(again_read[0].value().acked);
  EXPECT_EQ(again.elements[1].kind, Reply::Kind::integer);
  ASSERT_TRUE(again_read[1].ok());
  EXPECT_EQ(again_read[1].value().commit->outcome, CommitOutcome::accepted);
  EXPECT_EQ(hash(sink_key_name(other, kGroup)).at("last_seq"), "1");
}

// fenced_commit_next, the script per event when the handler commits with the step, answers its
// steady state in short too, and a step sent again (its reply lost) in full: a duplicate by its
// own token, the ack again.
TEST_F(ScriptEdges, FencedCommitNextAnswersASteadyStepInShortAndItsRetryInFull) {
  RedisBroker broker{link};
  const std::vector<std::string> ids = publish_events(broker, partition, 2);
  const Lease a = acquire(broker, partition, "a");
  ASSERT_TRUE(read_batch(broker, a, 2));

  using S = script::FencedCommitNext;
  const S::Args step{a.key(),
                     partition.stream(),
                     sink_key_name(partition, kGroup),
                     effects_hash_name(partition, kGroup),
                     a.token(),
                     kGroup,
                     ReadFrom::new_entries,
                     ids[0],
                     32,
                     ids[1],
                     1,
                     "effect 1"};
  for (const bool again : {false, true}) {
    SCOPED_TRACE(again ? "sent again" : "first");
    const Result<NextReply> stepped =
        step_once<S>(broker, step, again ? Reply::Kind::array : Reply::Kind::integer);
    ASSERT_TRUE(stepped.ok()) << stepped.error().message;
    EXPECT_EQ(stepped.value().commit->outcome,
              again ? CommitOutcome::duplicate : CommitOutcome::accepted);
    EXPECT_EQ(stepped.value().commit->committed_by, a.token());
    EXPECT_EQ(stepped.value().acked, !again);
    EXPECT_TRUE(stepped.value().held_checked);
  }
  EXPECT_EQ(hash(effects_hash_name(partition, kGroup)).at("1"), "effect 1");
}

// fenced_next, the step when the handler commits itself (an exec handler's, into its own store),
// answers its steady state in short too; a held entry with no ack to send is answered in full.
TEST_F(ScriptEdges, FencedNextAnswersASteadyStepInShortAndAStepWithoutAnAckInFull) {
  RedisBroker broker{link};
  const std::vector<std::string> ids = publish_events(broker, partition, 3);
  const Lease a = acquire(broker, partition, "a");
  ASSERT_TRUE(read_batch(broker, a, 3));

  using S = script::FencedNext;
  const auto step = [&](const std::string& acked, const std::string& held) {
    return S::Args{a.key(), partition.stream(), a.token(), kGroup, ReadFrom::new_entries, acked, 32,
                   held};
  };
  for (const auto& [args, in_short] :
       {std::pair{step(ids[0], ids[1]), true}, std::pair{step("", ids[2]), false}}) {
    SCOPED_TRACE(in_short ? "steady" : "no ack");
    const Result<NextReply> stepped =
        step_once<S>(broker, args, in_short ? Reply::Kind::integer : Reply::Kind::array);
    ASSERT_TRUE(stepped.ok()) << stepped.error().message;
    EXPECT_EQ(stepped.value().ack_asked, in_short);
    EXPECT_EQ(stepped.value().acked, in_short);
    EXPECT_TRUE(stepped.value().held_checked);
  }
  const Reply pending = redis.execute({"XPENDING", partition.stream(), kGroup});
  EXPECT_EQ(pending.elements.at(0).integer, 2) << "the first entry was acknowledged, alone";
}

}  // namespace
}  // namespace seqby::redis
