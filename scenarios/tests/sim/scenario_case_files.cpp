// Case files: a malformed case is refused with the file, the JSON path of the field and the
// problem, exactly; a syntax error names line and column.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "seqby/scenarios/case_io.h"

namespace seqby::scenarios {
namespace {

sim::SimCase small_case() {
  sim::CaseTemplate t;
  t.key_count = 2;
  t.event_count = 4;
  return sim::generate_case(3, t);
}

// The case as JSON with `edit` applied, loaded back; returns the error message ("" if it loaded).
template <typename Edit>
std::string load_edited(Edit edit) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(case_to_json(small_case()));
  edit(j);
  Result<sim::SimCase> r = case_from_json(j.dump(2), "case.json");
  return r.ok() ? "" : r.error().message;
}

TEST(CaseFiles, MalformedFieldsNameFileFieldAndProblem) {
  EXPECT_EQ(load_edited([](auto& j) { j["events"][3]["seq"] = "x"; }),
            "case.json: field 'events[3].seq': expected an integer, got \"x\"");
  EXPECT_EQ(load_edited([](auto& j) { j.erase("run_ms"); }), "case.json: field 'run_ms': missing");
  EXPECT_EQ(load_edited([](auto& j) { j["engine"]["lease_ttl_msx"] = 1; }),
            "case.json: field 'engine.lease_ttl_msx': unknown field");
  EXPECT_EQ(load_edited([](auto& j) { j["engine"]["lease_ttl_ms"] = -5; }),
            "case.json: field 'engine.lease_ttl_ms': expected an unsigned integer, got -5");
  EXPECT_EQ(
      load_edited([](auto& j) { j["variant"] = "no_fencing"; }),
      "case.json: field 'variant': unknown variant \"no_fencing\" (known: correct, shared_group, "
      "message_lock, no_fence, dlq_continue, no_reclaim, batch_unfenced, group_at_dollar)");
  EXPECT_EQ(
      load_edited([](auto& j) { j["scenario"] = "nope"; }),
      "case.json: field 'scenario': unknown scenario \"nope\" (known: default, per_key_order, "
      "no_concurrent_entry, cross_key_parallelism, poison_halt, crash_failover, "
      "stall_failover)");
  EXPECT_EQ(load_edited([](auto& j) {
              j["schedule"] = nlohmann::ordered_json::array({{{"kind", "crash"},
                                                              {"at_ms", 5},
                                                              {"target", 7},
                                                              {"duration_ms", 0},
                                                              {"amount_ms", 0},
                                                              {"rate_ppm", 0}}});
            }),
            "case.json: field 'schedule[0].target': instance 7 does not exist (3 instances)");
  EXPECT_EQ(load_edited([](auto& j) {
              j["swarm"]["faults"]["crashes"] = {{"enabled", true}, {"rate_ppm", 1}};
            }),
            "case.json: field 'swarm.faults.crashes': unknown fault kind (known: client_kill, "
            "client_pause, clock_skew, connection_reset, crash, handler_poison, "
            "handler_transient, heartbeat_stall, latency, redis_clock_jump, reply_lost, "
            "request_lost, script_flush, server_restart, server_restart_empty, slow_handler, "
            "stall, stall_replace)");
  EXPECT_EQ(load_edited([](auto& j) {
              j["events"][1]["seq"] = 5;
            }).rfind("case.json: field 'events[1].seq': expected ", 0),
            0u);
}

TEST(CaseFiles, SyntaxErrorsNameLineAndColumn) {
  Result<sim::SimCase> r = case_from_json("{\n  \"seed\": 1,\n  oops\n}", "bad.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::invalid);
  EXPECT_EQ(r.error().message.rfind("bad.json:3:3: not JSON: ", 0), 0u) << r.error().message;
}

TEST(CaseFiles, MissingFileIsNotFound) {
  Result<sim::SimCase> r = load_case("/nonexistent/seed-1.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.code(), Errc::not_found);
  EXPECT_EQ(r.error().message, "/nonexistent/seed-1.json: cannot open the case file");
}

}  // namespace
}  // namespace seqby::scenarios
