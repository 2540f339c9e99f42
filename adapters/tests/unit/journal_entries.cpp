// journal_entries_from_xrange (what read_journal does with each XRANGE reply, and what
// fuzz/journal.cpp fuzzes): entries in stream order with their id's time; a bad field, a bad id
// or a reply of another shape is an error naming the stream and entry.
#include <gtest/gtest.h>

#include "seqby/hiredis/journal.h"

namespace seqby::redis {
namespace {

Reply row(std::string id, std::vector<std::string> flat) {
  std::vector<Reply> fields;
  for (std::string& f : flat) fields.push_back(Reply::bulk(std::move(f)));
  return Reply::array({Reply::bulk(std::move(id)), Reply::array(std::move(fields))});
}

TEST(JournalEntries, ReadsEntriesInOrderWithTheirIdsTime) {
  const Reply reply = Reply::array(
      {row("1700-0", {"op", "publish", "node", "", "key", "k1", "seq", "1"}),
       row("1700-1", {"op", "acquire", "node", "w1", "key", "k1", "generation", "3"})});
  const Result<std::vector<JournalEntry>> entries =
      journal_entries_from_xrange(reply, "orders:k1:__journal__");
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries.value().size(), 2u);
  EXPECT_EQ(entries.value()[0].stream, "orders:k1:__journal__");
  EXPECT_EQ(entries.value()[0].id, "1700-0");
  EXPECT_EQ(entries.value()[0].record.op, HistoryOp::publish);
  EXPECT_EQ(entries.value()[0].record.time_ms, 1700u);
  EXPECT_EQ(entries.value()[0].record.seq, 1);
  EXPECT_EQ(entries.value()[1].record.op, HistoryOp::acquire);
  EXPECT_EQ(entries.value()[1].record.node, "w1");
  EXPECT_EQ(entries.value()[1].record.generation, 3u);
}

TEST(JournalEntries, RefusesWhatIsNotAJournalEntry) {
  const std::string stream = "orders:k1:__journal__";
  const Result<std::vector<JournalEntry>> bad_op =
      journal_entries_from_xrange(Reply::array({row("1700-0", {"op", "nope"})}), stream);
  ASSERT_FALSE(bad_op.ok());
  EXPECT_EQ(bad_op.error().code, Errc::invalid);
  EXPECT_EQ(bad_op.error().message,
            "journal orders:k1:__journal__ entry 1700-0: history entry: field 'op': bad value "
            "'nope'");

  const Result<std::vector<JournalEntry>> bad_id =
      journal_entries_from_xrange(Reply::array({row("1700x0", {"op", "ack"})}), stream);
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().code, Errc::protocol);
  EXPECT_EQ(bad_id.error().message, "journal orders:k1:__journal__: bad entry id '1700x0'");

  const Result<std::vector<JournalEntry>> not_rows =
      journal_entries_from_xrange(Reply::of_int(3), stream);
  ASSERT_FALSE(not_rows.ok());
  EXPECT_EQ(not_rows.error().code, Errc::protocol);
  EXPECT_NE(not_rows.error().message.find("XRANGE orders:k1:__journal__"), std::string::npos);

  EXPECT_EQ(journal_entries_from_xrange(Reply::error("WRONGTYPE x"), stream).error().message,
            "WRONGTYPE x");
}

TEST(JournalEntries, AnEmptyJournalHasNoEntries) {
  const Result<std::vector<JournalEntry>> none =
      journal_entries_from_xrange(Reply::array({}), "orders:__journal__");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none.value().empty());
}

}  // namespace
}  // namespace seqby::redis
