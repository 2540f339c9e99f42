// History JSON Lines: the canonical form, round trips, exact error text for malformed lines,
// SHA-256 test vectors, the sinks and first_difference.
#include <gtest/gtest.h>

#include <sstream>

#include "seqby/properties/history_io.h"
#include "seqby/properties/markers.h"
#include "seqby/properties/sha256.h"

namespace seqby::properties {
namespace {

HistoryRecord full_record() {
  HistoryRecord r;
  r.index = 12;
  r.time_ms = 3050;
  r.node = "w1";
  r.op = HistoryOp::commit;
  r.category = "orders";
  r.key = "client-A";
  r.group = "billing";
  r.generation = 3;
  r.event_id = "1700-0";
  r.seq = 4;
  r.detail = "say \"hi\"\n\tback\\slash \x01 caf\xc3\xa9";
  return r;
}

TEST(HistoryIo, CanonicalLineHasFixedFieldOrderAndEscapes) {
  EXPECT_EQ(record_to_jsonl(full_record()),
            "{\"index\":12,\"time\":3050,\"node\":\"w1\",\"op\":\"commit\",\"category\":\"orders\","
            "\"key\":\"client-A\",\"group\":\"billing\",\"generation\":3,\"event\":\"1700-0\","
            "\"seq\":4,\"detail\":\"say \\\"hi\\\"\\n\\tback\\\\slash \\u0001 caf\xc3\xa9\"}");
}

TEST(HistoryIo, CanonicalLineOmitsDefaults) {
  HistoryRecord r;
  r.index = 0;
  r.op = HistoryOp::fault;
  r.detail = "liveness_phase_start";
  EXPECT_EQ(record_to_jsonl(r),
            "{\"index\":0,\"time\":0,\"op\":\"fault\",\"detail\":\"liveness_phase_start\"}");
}

TEST(HistoryIo, RoundTripThroughTextKeepsEveryField) {
  std::vector<HistoryRecord> history;
  history.push_back(full_record());
  HistoryRecord minimal;
  minimal.index = 13;
  minimal.op = HistoryOp::warn;
  history.push_back(minimal);
  HistoryRecord negative_default = full_record();
  negative_default.index = 20;
  negative_default.seq = -1;
  negative_default.generation = 0;
  history.push_back(negative_default);

  std::istringstream in(history_to_jsonl(history));
  Result<std::vector<HistoryRecord>> read = read_history(in, "history.jsonl");
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read.value().size(), 3u);
  EXPECT_FALSE(first_difference(history, read.value()).has_value());
  EXPECT_EQ(history_sha256(history), history_sha256(read.value()));
}

TEST(HistoryIo, ReaderAcceptsAnyFieldOrderExplicitDefaultsBlankLinesAndCrlf) {
  std::istringstream in(
      "{\"op\":\"publish\",\"seq\":1,\"index\":5,\"category\":\"c\",\"key\":\"k\",\"node\":\"\"}"
      "\r\n"
      "\n"
      "   \n"
      "{\"index\":7,\"time\":9,\"op\":\"acquire\",\"generation\":0,\"seq\":-1,\"detail\":\"\"}\n");
  Result<std::vector<HistoryRecord>> read = read_history(in, "h.jsonl");
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read.value().size(), 2u);
  EXPECT_EQ(read.value()[0].index, 5u);
  EXPECT_EQ(read.value()[0].op, HistoryOp::publish);
  EXPECT_EQ(read.value()[0].seq, 1);
  EXPECT_EQ(read.value()[0].time_ms, 0u);
  EXPECT_EQ(read.value()[1].op, HistoryOp::acquire);
  EXPECT_EQ(read.value()[1].time_ms, 9u);
  EXPECT_EQ(read.value()[1].seq, -1);
}

std::string read_error(const std::string& text) {
  std::istringstream in(text);
  Result<std::vector<HistoryRecord>> read = read_history(in, "history.jsonl");
  if (read.ok()) return "(no error)";
  EXPECT_EQ(read.code(), Errc::invalid);
  return read.error().message;
}

TEST(HistoryIo, MalformedLinesNameFileLineAndField) {
  const std::string good = "{\"index\":0,\"time\":0,\"op\":\"publish\"}\n";
  EXPECT_EQ(read_error(good + "\n{\"index\":1,\"op\":\"rad\"}\n"),
            "history.jsonl:3: field 'op': unknown op 'rad'");
  EXPECT_EQ(read_error(good + "{\"index\":1,\"op\":\"read\",\"seq\":\"4\"}\n"),
            "history.jsonl:2: field 'seq': expected an integer >= -1, got string");
  EXPECT_EQ(read_error(good + "{\"index\":1,\"op\":\"read\",\"seq\":-2}\n"),
            "history.jsonl:2: field 'seq': expected an integer >= -1, got -2");
  EXPECT_EQ(read_error("{\"index\":-1,\"op\":\"read\"}\n"),
            "history.jsonl:1: field 'index': expected an unsigned integer, got number");
  EXPECT_EQ(read_error("{\"index\":0,\"op\":\"read\",\"generation\":1.5}\n"),
            "history.jsonl:1: field 'generation': expected an unsigned integer, got number");
  EXPECT_EQ(read_error("{\"index\":0,\"op\":\"read\",\"evnt\":\"1-0\"}\n"),
            "history.jsonl:1: field 'evnt': unknown field");
  EXPECT_EQ(read_error("{\"index\":0,\"op\":\"read\",\"node\":7}\n"),
            "history.jsonl:1: field 'node': expected a string, got number");
  EXPECT_EQ(read_error("{\"index\":0}\n"), "history.jsonl:1: field 'op': missing");
  EXPECT_EQ(read_error("{\"op\":\"read\"}\n"), "history.jsonl:1: field 'index': missing");
  EXPECT_EQ(read_error("{\"index\":0,\"op\":\"read\"\n"), "history.jsonl:1: not valid JSON");
  EXPECT_EQ(read_error("[1,2]\n"), "history.jsonl:1: expected a JSON object, got array");
  EXPECT_EQ(read_error(good + "{\"index\":0,\"op\":\"read\"}\n"),
            "history.jsonl:2: field 'index': 0 does not follow 0 (indices must strictly increase)");
}

TEST(HistoryIo, MissingFileIsNotFound) {
  Result<std::vector<HistoryRecord>> read = read_history_file("no-such-dir/history.jsonl");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.code(), Errc::not_found);
  EXPECT_EQ(read.error().message, "no-such-dir/history.jsonl: cannot open the history file");
}

TEST(Sha256, StandardTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecewiseUpdatesEqualOneUpdateAcrossBlockBoundaries) {
  const std::string message(200, 'x');
  for (std::size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 119u, 128u, 199u}) {
    Sha256 hasher;
    hasher.update(std::string_view(message).substr(0, split));
    hasher.update(std::string_view(message).substr(split));
    EXPECT_EQ(digest_hex(hasher.finish()), sha256_hex(message)) << "split at " << split;
  }
}

TEST(HistorySinks, SinksAssignIndicesAndJsonlSinkHashesWhatItWrote) {
  VectorHistorySink vector_sink;
  JsonlHistorySink buffer_sink;
  std::ostringstream stream;
  JsonlHistorySink stream_sink(stream);
  for (int i = 0; i < 3; ++i) {
    HistoryRecord r = full_record();
    r.index = 99;  // overwritten by every sink
    r.seq = i + 1;
    vector_sink.record(r);
    buffer_sink.record(r);
    stream_sink.record(r);
  }
  const std::vector<HistoryRecord>& records = vector_sink.records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].index, 0u);
  EXPECT_EQ(records[2].index, 2u);
  EXPECT_EQ(buffer_sink.text(), history_to_jsonl(records));
  EXPECT_EQ(stream.str(), history_to_jsonl(records));
  EXPECT_EQ(buffer_sink.record_count(), 3u);
  EXPECT_EQ(buffer_sink.sha256_hex(), history_sha256(records));
  EXPECT_EQ(buffer_sink.sha256_hex(), sha256_hex(history_to_jsonl(records)));
  EXPECT_EQ(stream_sink.sha256_hex(), history_sha256(records));
  std::vector<HistoryRecord> taken = vector_sink.take();
  EXPECT_EQ(taken.size(), 3u);
  EXPECT_TRUE(vector_sink.records().empty());
}

TEST(HistoryIo, FirstDifferenceNamesPositionAndBothRenderings) {
  std::vector<HistoryRecord> a{full_record(), full_record()};
  a[1].index = 13;
  std::vector<HistoryRecord> b = a;
  EXPECT_FALSE(first_difference(a, b).has_value());

  b[1].detail = "other";
  std::optional<HistoryDifference> d = first_difference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->position, 1u);
  EXPECT_EQ(d->left, record_to_jsonl(a[1]));
  EXPECT_EQ(d->right, record_to_jsonl(b[1]));
  EXPECT_NE(history_sha256(a), history_sha256(b));

  b = a;
  b.pop_back();
  d = first_difference(a, b);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->position, 1u);
  EXPECT_EQ(d->left, record_to_jsonl(a[1]));
  EXPECT_EQ(d->right, "(end of history)");
}

TEST(HistoryMarkers, RunHeaderRoundTripsAndMarkersAreRecognised) {
  RunHeader header;
  header.process_managers = {"fulfil", "ship"};
  header.skip = {"parallel"};
  header.require = {"halt"};
  header.extra = {{"seed", "42"}, {"scenario", "pm_per_instance"}};
  const HistoryRecord record = run_header_record(header);
  EXPECT_EQ(record.op, HistoryOp::fault);
  EXPECT_EQ(record.node, "");
  EXPECT_EQ(record.detail,
            "run pm=fulfil,ship skip=parallel require=halt seed=42 scenario=pm_per_instance");
  ASSERT_TRUE(is_run_header(record));
  const RunHeader parsed = parse_run_header(record);
  EXPECT_EQ(parsed.process_managers, header.process_managers);
  EXPECT_EQ(parsed.skip, header.skip);
  EXPECT_EQ(parsed.require, header.require);
  EXPECT_EQ(parsed.extra, header.extra);

  EXPECT_TRUE(is_liveness_marker(liveness_marker_record(500)));
  EXPECT_FALSE(is_run_header(liveness_marker_record(500)));
  HistoryRecord crash;
  crash.op = HistoryOp::fault;
  crash.node = "w1";
  crash.detail = "crash restart_after_ms=300";
  EXPECT_TRUE(is_crash(crash));
  crash.detail = "crashes";
  EXPECT_FALSE(is_crash(crash));
  EXPECT_TRUE(detail_has_token("type=Paid poison", "poison"));
  EXPECT_FALSE(detail_has_token("poisonous", "poison"));
}

}  // namespace
}  // namespace seqby::properties
