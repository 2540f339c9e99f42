// Random small histories (rapidcheck): whatever a history holds, the checker's report is
// deterministic, every witness names a record of the history, and the JSON rendering and the
// JSONL round trip are faithful. `seqby check` reads arbitrary files, so this is its contract.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"

namespace seqby::properties {
namespace {

using Raw = std::tuple<std::uint8_t, std::uint8_t, std::uint8_t, std::uint8_t, std::uint8_t,
                       std::uint8_t, std::uint8_t, std::uint8_t>;

std::vector<HistoryRecord> build(const std::vector<Raw>& raw) {
  static const char* kNodes[] = {"", "w1", "w2", "operator"};
  static const char* kCategories[] = {"orders", "payment", ""};
  static const char* kKeys[] = {"A", "B", ""};
  static const char* kGroups[] = {"billing", "fulfil", ""};
  static const char* kEvents[] = {"1-0", "2-0", "3-0", ""};
  static const char* kDetails[] = {"",
                                   "poison",
                                   "operator",
                                   "engine",
                                   "crash",
                                   "run pm=fulfil",
                                   "run skip=parallel,bogus require=halt",
                                   "liveness_phase_start",
                                   "ok"};
  std::vector<HistoryRecord> history;
  for (const Raw& t : raw) {
    HistoryRecord r;
    r.index = history.size();
    r.time_ms = history.size() * 5;
    r.op = static_cast<HistoryOp>(std::get<0>(t) % 20);
    r.node = kNodes[std::get<1>(t) % 4];
    r.category = kCategories[std::get<2>(t) % 3];
    r.key = kKeys[std::get<3>(t) % 3];
    r.group = kGroups[std::get<4>(t) % 3];
    r.generation = std::get<5>(t) % 4;
    r.event_id = kEvents[std::get<6>(t) % 4];
    r.seq = static_cast<std::int64_t>(std::get<7>(t) % 6) - 1;
    r.detail = kDetails[(std::get<7>(t) / 6) % 9];
    if (std::get<7>(t) == 255) r.seq = 1'000'000'000'000;  // absurd seqs must not matter
    history.push_back(std::move(r));
  }
  return history;
}

RC_GTEST_PROP(CheckerRandom, ReportIsDeterministicAndWitnessesNameRecords,
              (const std::vector<Raw>& raw)) {
  const std::vector<HistoryRecord> history = build(raw);
  CheckOptions options;
  options.findings_per_property_max = 3;
  const CheckReport a = check_history(history, options);
  const CheckReport b = check_history(history, options);
  RC_ASSERT(render_report_json(a) == render_report_json(b));
  RC_ASSERT(render_report_text(a, &history) == render_report_text(b, &history));

  std::uint64_t listed = 0;
  for (const Finding& f : a.violations) {
    ++listed;
    RC_ASSERT(!f.witnesses.empty());
    RC_ASSERT(!f.explanation.empty());
    RC_ASSERT(a.status(f.property).violated());
    for (std::uint64_t w : f.witnesses) RC_ASSERT(w < history.size());
  }
  for (const Finding& f : a.stale_overlaps) {
    for (std::uint64_t w : f.witnesses) RC_ASSERT(w < history.size());
  }
  std::uint64_t counted = 0;
  for (const PropertyStatus& s : a.properties) counted += s.violation_count;
  RC_ASSERT(listed <= counted);
  RC_ASSERT(a.ok() == (counted == 0));

  const nlohmann::json j = nlohmann::json::parse(render_report_json(a));
  RC_ASSERT(j["ok"].get<bool>() == a.ok());
  RC_ASSERT(j["violations"].size() == a.violations.size());
}

RC_GTEST_PROP(CheckerRandom, JsonlRoundTripIsExact, (const std::vector<Raw>& raw)) {
  const std::vector<HistoryRecord> history = build(raw);
  std::istringstream in(history_to_jsonl(history));
  Result<std::vector<HistoryRecord>> read = read_history(in, "random.jsonl");
  RC_ASSERT(read.ok());
  RC_ASSERT(!first_difference(history, read.value()).has_value());
  RC_ASSERT(history_sha256(read.value()) == history_sha256(history));
}

}  // namespace
}  // namespace seqby::properties
