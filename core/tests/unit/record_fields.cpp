// The one declaration of each record's fields: kEngineLimitFields names every engine limit with
// the member it sets, its default, where it applies and its flag; kHistoryFields names every
// HistoryRecord field with its member and when each codec writes it. A name bound to the wrong
// member, a default that drifted or a flag that appeared or vanished shows up here.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "seqby/core/engine_options.h"
#include "seqby/core/history.h"

namespace seqby {
namespace {

// Each limit's member, by name, written out by hand (the table must agree with it).
const std::map<std::string, std::function<std::uint64_t(const EngineLimits&)>>& limit_members() {
  static const std::map<std::string, std::function<std::uint64_t(const EngineLimits&)>> members{
      {"lease_ttl_ms", [](const EngineLimits& l) { return l.lease_ttl_ms; }},
      {"heartbeat_interval_ms", [](const EngineLimits& l) { return l.heartbeat_interval_ms; }},
      {"discovery_interval_ms", [](const EngineLimits& l) { return l.discovery_interval_ms; }},
      {"poll_interval_ms", [](const EngineLimits& l) { return l.poll_interval_ms; }},
      {"idle_recheck_ms", [](const EngineLimits& l) { return l.idle_recheck_ms; }},
      {"wake_read_partitions_max",
       [](const EngineLimits& l) { return l.wake_read_partitions_max; }},
      {"read_batch_max", [](const EngineLimits& l) { return l.read_batch_max; }},
      {"step_batch_max", [](const EngineLimits& l) { return l.step_batch_max; }},
      {"retry_count_max", [](const EngineLimits& l) { return l.retry_count_max; }},
      {"retry_backoff_ms", [](const EngineLimits& l) { return l.retry_backoff_ms; }},
      {"retry_backoff_max_ms", [](const EngineLimits& l) { return l.retry_backoff_max_ms; }},
      {"transport_retry_count_max",
       [](const EngineLimits& l) { return l.transport_retry_count_max; }},
      {"stop_wait_max_ms", [](const EngineLimits& l) { return l.stop_wait_max_ms; }},
      {"reap_idle_ms", [](const EngineLimits& l) { return l.reap_idle_ms; }},
      {"partitions_warn_threshold",
       [](const EngineLimits& l) { return l.partitions_warn_threshold; }},
      {"partitions_max", [](const EngineLimits& l) { return l.partitions_max; }},
  };
  return members;
}

TEST(EngineLimitFields, EachNameSetsTheMemberOfThatNameAndNoOther) {
  ASSERT_EQ(kEngineLimitFields.size(), limit_members().size());
  for (const EngineLimitField& field : kEngineLimitFields) {
    SCOPED_TRACE(std::string(field.name));
    ASSERT_EQ(limit_members().count(std::string(field.name)), 1u);
    EXPECT_EQ((field.u64 == nullptr), (field.u32 != nullptr));
    EngineLimits limits;
    field.set(limits, 777);
    EXPECT_EQ(field.get(limits), 777u);
    for (const auto& [name, member] : limit_members()) {
      const EngineLimits untouched;
      EXPECT_EQ(member(limits), name == field.name ? 777u : member(untouched)) << name;
    }
  }
}

TEST(EngineLimitFields, DefaultsAreTheEngineDefaults) {
  const EngineOptions o;
  EXPECT_EQ(o.lease_ttl_ms, 3000u);
  EXPECT_EQ(o.heartbeat_interval_ms, 1000u);
  EXPECT_EQ(o.discovery_interval_ms, 1000u);
  EXPECT_EQ(o.poll_interval_ms, 50u);
  EXPECT_EQ(o.idle_recheck_ms, 600000u);
  EXPECT_EQ(o.wake_read_partitions_max, 256u);
  EXPECT_EQ(o.read_batch_max, 32u);
  EXPECT_EQ(o.retry_count_max, 3u);
  EXPECT_EQ(o.retry_backoff_ms, 100u);
  EXPECT_EQ(o.retry_backoff_max_ms, 2000u);
  EXPECT_EQ(o.transport_retry_count_max, 20u);
  EXPECT_EQ(o.stop_wait_max_ms, 60000u);
  EXPECT_EQ(o.reap_idle_ms, 0u);
  EXPECT_EQ(o.partitions_warn_threshold, 0u);
  EXPECT_EQ(o.partitions_max, 0u);
  for (const EngineLimitField& field : kEngineLimitFields) {
    EXPECT_EQ(field.get(o), field.default_value) << field.name;
  }
}

TEST(EngineLimitFields, WorkerFlagsAndCaseFileFieldsAreTheDeclaredOnes) {
  std::vector<std::string> flags;
  std::vector<std::string> case_fields;
  std::vector<std::string> optional;
  for (const EngineLimitField& field : kEngineLimitFields) {
    EXPECT_EQ(field.unit == "ms", field.name.ends_with("_ms")) << field.name;
    EXPECT_FALSE(field.unit.empty()) << field.name;
    EXPECT_FALSE(field.help.empty()) << field.name;
    if (field.worker_flag) flags.push_back(field.flag_name());
    if (field.case_file != CaseFileField::absent) case_fields.emplace_back(field.name);
    if (field.case_file == CaseFileField::optional) optional.emplace_back(field.name);
  }
  EXPECT_EQ(flags, (std::vector<std::string>{
                       "--lease-ttl-ms", "--heartbeat-interval-ms", "--discovery-interval-ms",
                       "--poll-interval-ms", "--idle-recheck-ms", "--wake-read-partitions-max",
                       "--read-batch-max", "--step-batch-max", "--retry-count-max",
                       "--reap-idle-ms", "--partitions-warn-threshold"}));
  EXPECT_EQ(case_fields,
            (std::vector<std::string>{
                "lease_ttl_ms", "heartbeat_interval_ms", "discovery_interval_ms",
                "poll_interval_ms", "idle_recheck_ms", "wake_read_partitions_max", "read_batch_max",
                "step_batch_max", "retry_count_max", "retry_backoff_ms", "retry_backoff_max_ms",
                "transport_retry_count_max", "stop_wait_max_ms", "reap_idle_ms",
                "partitions_warn_threshold"}));
  EXPECT_EQ(optional, (std::vector<std::string>{"idle_recheck_ms", "wake_read_partitions_max",
                                                "read_batch_max", "step_batch_max", "reap_idle_ms",
                                                "partitions_warn_threshold"}));
}

TEST(HistoryFields, EachNameIsBoundToItsMember) {
  HistoryRecord r;
  r.index = 1;
  r.time_ms = 2;
  r.node = "n";
  r.op = HistoryOp::commit;
  r.category = "c";
  r.key = "k";
  r.group = "g";
  r.generation = 3;
  r.event_id = "e";
  r.seq = 4;
  r.detail = "d";
  std::map<std::string, std::string> seen;
  for (const HistoryField& field : kHistoryFields) {
    std::string value = field.text_of(r);
    seen[std::string(field.name)] = value;
    EXPECT_FALSE(field.at_default(r)) << field.name;
    EXPECT_EQ(find_history_field(field.name), &field);
  }
  EXPECT_EQ(seen, (std::map<std::string, std::string>{{"index", "1"},
                                                      {"time", "2"},
                                                      {"node", "n"},
                                                      {"op", "commit"},
                                                      {"category", "c"},
                                                      {"key", "k"},
                                                      {"group", "g"},
                                                      {"generation", "3"},
                                                      {"event", "e"},
                                                      {"seq", "4"},
                                                      {"detail", "d"}}));
  EXPECT_EQ(find_history_field("event_id"), nullptr);
}

TEST(HistoryFields, DefaultsAreTheRecordsDefaults) {
  const HistoryRecord r;
  for (const HistoryField& field : kHistoryFields) {
    EXPECT_EQ(field.at_default(r), field.type != HistoryFieldType::op) << field.name;
  }
}

}  // namespace
}  // namespace seqby
