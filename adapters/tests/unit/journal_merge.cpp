// The decision journal without a server: a journaled script's call carries the journal tail
// only when asked (and is otherwise byte-for-byte the call it was), the tail decodes back, and
// read_journal's merge keeps each journal's own order while putting a publish before a process
// manager's step on it at an equal millisecond.
#include <gtest/gtest.h>

#include "seqby/broker/script_contracts.h"
#include "seqby/hiredis/journal.h"

namespace seqby::redis {
namespace {

JournalEntry entry(const std::string& stream, std::uint64_t ms, HistoryOp op, std::string key) {
  JournalEntry e;
  e.stream = stream;
  e.id = std::to_string(ms) + "-0";
  e.record.time_ms = ms;
  e.record.op = op;
  e.record.key = std::move(key);
  return e;
}

TEST(JournalTail, AJournaledCallWithoutAJournalIsTheCallItWas) {
  script::FencedAck::Args args{"C:K:__lease__", "C:K", "o:1", "g", "1-0"};
  const ScriptCall plain = script::encode<script::FencedAck>(args);
  EXPECT_EQ(plain.keys, (std::vector<std::string>{"C:K:__lease__", "C:K"}));
  EXPECT_EQ(plain.args, (std::vector<std::string>{"o:1", "g", "1-0"}));

  args.journal.stream = "C:K:__journal__";
  args.journal.maxlen = 1000;
  args.journal.node = "o";
  args.journal.category = "C";
  args.journal.key = "K";
  args.journal.group = "g";
  args.journal.generation = 1;
  const ScriptCall journaled = script::encode<script::FencedAck>(args);
  EXPECT_EQ(journaled.keys, (std::vector<std::string>{"C:K:__lease__", "C:K", "C:K:__journal__"}));
  EXPECT_EQ(journaled.args, (std::vector<std::string>{"o:1", "g", "1-0", "1000", "o", "C", "K", "g",
                                                      "1", "-1", ""}));

  std::optional<script::FencedAck::Args> back = script::decode_args<script::FencedAck>(journaled);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->entry_id, "1-0");
  EXPECT_EQ(back->journal.stream, "C:K:__journal__");
  EXPECT_EQ(back->journal.generation, 1u);
  EXPECT_EQ(back->journal.seq, -1);
  std::optional<script::FencedAck::Args> bare = script::decode_args<script::FencedAck>(plain);
  ASSERT_TRUE(bare.has_value());
  EXPECT_FALSE(bare->journal.on());
}

TEST(JournalMerge, EachJournalKeepsItsOrderAndPublishesComeFirstAtAnEqualMillisecond) {
  std::vector<std::vector<JournalEntry>> streams;
  streams.push_back({entry("__pm__:P:X:__journal__", 10, HistoryOp::read, "X"),
                     entry("__pm__:P:X:__journal__", 12, HistoryOp::ack, "X")});
  streams.push_back({entry("order:X:__journal__", 10, HistoryOp::publish, "X"),
                     // a clock step back inside one stream does not reorder it
                     entry("order:X:__journal__", 9, HistoryOp::publish, "X")});
  streams.push_back({entry("order:__journal__", 10, HistoryOp::fault, "")});
  // A category with a colon (a run's category "run:order") is still a category's journal.
  streams.push_back({entry("run:order:__journal__", 10, HistoryOp::warn, "")});
  const std::vector<HistoryRecord> merged =
      merge_journals(std::move(streams), {"order", "run:order"});
  ASSERT_EQ(merged.size(), 6u);
  std::vector<HistoryOp> ops;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    EXPECT_EQ(merged[i].index, i);
    ops.push_back(merged[i].op);
  }
  EXPECT_EQ(ops, (std::vector<HistoryOp>{HistoryOp::fault, HistoryOp::warn, HistoryOp::publish,
                                         HistoryOp::publish, HistoryOp::read, HistoryOp::ack}));
}

TEST(JournalNotes, OnlyWhatNoScriptDecidesIsANoteAndItGoesToItsUnit) {
  EXPECT_TRUE(journaled_by_scripts(HistoryOp::commit));
  EXPECT_TRUE(journaled_by_scripts(HistoryOp::enter));
  EXPECT_FALSE(journaled_by_scripts(HistoryOp::warn));
  EXPECT_FALSE(journaled_by_scripts(HistoryOp::resume));
  HistoryRecord r;
  r.category = "order";
  r.key = "X";
  EXPECT_EQ(note_stream_for(r, ""), "order:X:__journal__");
  EXPECT_EQ(note_stream_for(r, "P"), "__pm__:P:X:__journal__");
  r.key.clear();
  EXPECT_EQ(note_stream_for(r, ""), "order:__journal__");
}

}  // namespace
}  // namespace seqby::redis
