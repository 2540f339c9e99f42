// Case files: a SimCase as one JSON object (DESIGN.md section 2), written by a failing run and
// read by `seqby replay`. Writing is deterministic (fixed field order, two-space indent). Reading
// is strict: a missing or unknown field, a value of the wrong type or out of range, an unknown
// variant, scenario or fault kind is Errc::invalid with a message naming the file, the JSON path
// of the field and the problem, e.g.
//   case.json: field 'events[3].seq': expected an unsigned integer, got "x"
//   case.json:4:17: not JSON: syntax error while parsing object key
// Each struct's members are listed once, in a field table (case_io.cpp) that drives its writer,
// its allow-list and its reader; the "engine" object's come from kEngineLimitFields.
// It does not check that the case makes sense as a run beyond what a run REQUIRES.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seqby/core/keyspace.h"
#include "seqby/core/result.h"
#include "seqby/sim/sim_case.h"

namespace seqby::scenarios {

inline constexpr const char* kCaseFormat = "seqby-case-1";

// The variants a case may name ("correct" and the known-broken ones of seqby/testing/variant.h),
// and the scenario names a case may carry ("default" for a generated campaign case, or an engine
// scenario's name).
const std::vector<std::string>& known_variants();
const std::vector<std::string>& known_case_scenarios();

// The simulated server a case ran on (RunOptions::key_layout and cluster_shards): part of the
// world, so a case file carries it and `seqby replay CASE.json` runs the case where it failed.
// Written as {"server": {"key_layout": "cluster", "cluster_shards": 3}} after "variant", and left
// off for one flat server (the default; files written before it existed read as that).
struct CaseServer {
  KeyLayout key_layout = KeyLayout::flat;
  std::uint32_t cluster_shards = 0;  // > 0 only with KeyLayout::cluster; at most kShardsMax
  static constexpr std::uint32_t kShardsMax = 16;
  bool operator==(const CaseServer&) const = default;
};
// What is wrong with `server` as a simulated server ("" when nothing): shards without the
// cluster layout, or more than kShardsMax.
std::string server_problem(const CaseServer& server);

std::string case_to_json(const sim::SimCase& c, const CaseServer& server = {});
// `file_name` only shapes error text. The file's server goes to `*server` when given (the
// default server when the file names none); without, it is still read and checked.
Result<sim::SimCase> case_from_json(std::string_view text, std::string_view file_name,
                                    CaseServer* server = nullptr);

// Reads `path` (Errc::not_found when it cannot be opened) / writes it (Errc::invalid on failure).
Result<sim::SimCase> load_case(const std::string& path, CaseServer* server = nullptr);
Status save_case(const sim::SimCase& c, const std::string& path, const CaseServer& server = {});

}  // namespace seqby::scenarios
