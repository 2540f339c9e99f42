// The operating scenarios of issue 7 (ADR decisions 6 and 7), each written once and run on either
// backend (engine_backend.h): an operator skips or dead-letters a halted partition's poison head
// and the owner goes on in order; a cold partition is reaped and a later publish re-creates it at
// a fresh generation; a category past its partition-count threshold is warned about. Every run
// ends with the history checker finding every property holding.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "engine_backend.h"
#include "seqby/broker/redis_broker.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/markers.h"
#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {
namespace {

using engine::both_forms;
using engine::Checks;
using engine::commits_of;
using engine::EngineBackend;
using engine::expect_checker;
using engine::Outcome;
using engine::ToolRun;

constexpr const char* kA = "client-A";
constexpr const char* kB = "client-B";
constexpr std::uint64_t kWaitMaxMs = 30'000;

// `keys`, `per_key` events each, interleaved (`gap_ms` apart on the simulator; real Redis
// publishes them up front), with the short leases real-Redis workers run with.
sim::SimCase ops_case(std::uint64_t seed, const std::string& name,
                      const std::vector<std::string>& keys, std::int64_t per_key,
                      std::uint64_t gap_ms) {
  sim::SimCase c;
  c.seed = seed;
  c.scenario = name;
  c.category = "order";
  c.group = "billing";
  c.instance_count = 2;
  c.keys = keys;
  std::sort(c.keys.begin(), c.keys.end());
  c.engine.lease_ttl_ms = 1000;
  c.engine.heartbeat_interval_ms = 250;
  c.engine.discovery_interval_ms = 250;
  c.engine.poll_interval_ms = 20;
  c.engine.retry_backoff_ms = 50;
  std::uint64_t at = 100;
  for (std::int64_t seq = 1; seq <= per_key; ++seq) {
    for (const std::string& key : keys) {
      sim::CaseEvent e;
      e.at_ms = at;
      e.key = key;
      e.seq = seq;
      e.behaviour.duration_ms = 20;
      c.events.push_back(e);
      at += gap_ms;
    }
  }
  c.run_ms = at + 1000;
  c.liveness_ms = 30'000;
  return c;
}

std::int64_t last_seq(EngineBackend& b, const std::string& group, const std::string& key) {
  const redis::Reply r = b.run({"HGET", redis::sink_key_name(b.partition(key), group), "last_seq"});
  return r.kind == redis::Reply::Kind::bulk ? std::stoll(r.str) : 0;
}

bool exists(EngineBackend& b, const std::string& name) {
  return b.run({"EXISTS", name}).integer == 1;
}

std::map<std::string, std::string> hash_of(const redis::Reply& r) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2)
    out[r.elements[i].str] = r.elements[i + 1].str;
  return out;
}

std::string seqs_text(const std::vector<std::int64_t>& seqs) {
  std::string out;
  for (std::int64_t s : seqs) {
    if (!out.empty()) out += ",";
    out += std::to_string(s);
  }
  return out.empty() ? "(none)" : out;
}

// On real Redis the worker logs a key=value line for `event` (warn, halt, resume, reap).
void expect_log_line(Checks& checks, EngineBackend& b, const Outcome& o, const std::string& event,
                     const std::string& key) {
  if (b.where() != "redis") return;
  std::string found;
  std::size_t at = 0;
  while ((at = o.logs.find("event=" + event + " ", at)) != std::string::npos) {
    const std::size_t end = o.logs.find('\n', at);
    const std::string line = o.logs.substr(at, end - at);
    if (key.empty() || line.find(" key=" + key + " ") != std::string::npos) {
      found = line;
      break;
    }
    at = end;
  }
  checks.expect(
      !found.empty(), "worker log line " + event,
      found.empty() ? "no event=" + event + " line for " + key + " in the workers' stderr" : found);
}

// --- operator_skip_head and operator_dlq_head -------------------------------------------------

ScenarioResult operator_resolves_head(ScenarioContext& ctx, EngineBackend& b,
                                      const std::string& action) {
  Checks checks(ctx.out);
  const std::string name = "operator_" + action + "_head";
  const std::int64_t per_key = 8;
  const std::int64_t poison_seq = 3;
  sim::SimCase c = ops_case(ctx.seed, name, {kA, kB}, per_key, 10);
  for (auto& e : c.events) e.behaviour.poison = e.key == kA && e.seq == poison_seq;
  if (!b.start(c, checks)) return checks.result();
  const PartitionRef a = b.partition(kA);
  const std::string halt_key = redis::halt_key_name(a, c.group);

  // The halt is visible where operators look, and client-A does not advance past it.
  const bool halted = b.wait_for([&] { return exists(b, halt_key); }, kWaitMaxMs);
  const std::string head = b.event_id(kA, poison_seq);
  auto fields = hash_of(b.run({"HGETALL", halt_key}));
  checks.expect(halted && fields["id"] == head && fields["reason"] == "poison", "halt visible",
                halt_key + ": id " + fields["id"] + " reason " + fields["reason"] + " owner " +
                    fields["owner"] + " delivery_count " + fields["delivery_count"] + " (head " +
                    head + ")");
  checks.expect(last_seq(b, c.group, kA) == poison_seq - 1, "halted partition does not advance",
                "client-A committed up to seq " + std::to_string(last_seq(b, c.group, kA)));
  if (b.where() == "redis") {
    const ToolRun partitions = b.admin("partitions", {});
    checks.note("$ seqby admin partitions C\n" + partitions.out);
    const ToolRun inspect = b.admin("inspect", {kA});
    checks.note("$ seqby admin inspect C client-A\n" + inspect.out);
  }

  std::map<std::string, std::string> head_fields;
  const redis::Reply head_entry = b.run({"XRANGE", a.stream(), head, head});
  if (head_entry.elements.size() == 1 && head_entry.elements[0].elements.size() == 2) {
    head_fields = hash_of(head_entry.elements[0].elements[1]);
  }

  // The operator acts on the head, voids it in the test sink (the sink accepts only the next
  // seq) and the action goes into the history, where the checker treats the seq as resolved.
  const ToolRun tool = b.admin(action, {kA, head});
  checks.note("$ seqby admin " + action + " C client-A " + head + "\n" + tool.out);
  checks.expect(tool.exit_code == 0, "operator " + action,
                "seqby admin " + action + " exit " + std::to_string(tool.exit_code));
  b.run({"HSET", redis::sink_key_name(a, c.group), "last_seq", std::to_string(poison_seq)});
  HistoryRecord op;
  op.time_ms = b.now_ms();
  op.node = "operator";
  op.op = action == "skip" ? HistoryOp::skip : HistoryOp::dlq;
  op.category = b.category();
  op.key = kA;
  op.group = c.group;
  op.event_id = head;
  op.seq = poison_seq;
  op.detail = "operator seqby admin " + action;
  b.record(op);

  const auto pending_count = [&] {
    const redis::Reply r = b.run({"XPENDING", a.stream(), c.group});
    return r.elements.empty() ? std::int64_t{-1} : r.elements[0].integer;
  };
  const bool went_on = b.wait_for(
      [&] { return last_seq(b, c.group, kA) >= per_key && pending_count() == 0; }, kWaitMaxMs);
  const bool halt_gone = !exists(b, halt_key);
  const std::int64_t pending = pending_count();
  const redis::Reply dlq = b.run({"XRANGE", a.dlq(), "-", "+"});
  const Outcome o = b.finish(checks);

  bool resumed = false;
  for (const auto& r : o.history)
    resumed = resumed || (r.op == HistoryOp::resume && r.key == kA && r.event_id == head);
  checks.expect(resumed, "halted owner resumes",
                resumed ? "resume record for " + head : "no resume record for " + head);
  std::vector<std::int64_t> expected;
  for (std::int64_t s = 1; s <= per_key; ++s) {
    if (s != poison_seq) expected.push_back(s);
  }
  std::vector<std::string> expected_effects;
  if (o.published.count(kA)) {
    for (const auto& id : o.published.at(kA)) {
      if (id != head) expected_effects.push_back(id);
    }
  }
  const bool in_order = went_on && commits_of(o, kA) == expected && o.effects.count(kA) &&
                        o.effects.at(kA) == expected_effects;
  checks.expect(in_order, "client-A goes on in order after the " + action,
                "commits " + seqs_text(commits_of(o, kA)) + ", expected " + seqs_text(expected));
  checks.expect(halt_gone && pending == 0, "halt record gone, nothing pending",
                std::string(halt_gone ? "no " : "still a ") + halt_key + ", " +
                    std::to_string(pending) + " pending");
  if (action == "dlq") {
    std::map<std::string, std::string> entry;
    if (dlq.elements.size() == 1 && dlq.elements[0].elements.size() == 2) {
      entry = hash_of(dlq.elements[0].elements[1]);
    }
    bool carried = entry["source_id"] == head && entry["group"] == c.group &&
                   entry["reason"] == "poison" && !head_fields.empty();
    for (const auto& [field, value] : head_fields) carried = carried && entry[field] == value;
    checks.expect(dlq.elements.size() == 1 && carried, "head moved to the DLQ",
                  a.dlq() + " holds " + std::to_string(dlq.elements.size()) + " entry: source_id " +
                      entry["source_id"] + " group " + entry["group"] + " reason " +
                      entry["reason"] + " delivery_count " + entry["delivery_count"] + " data " +
                      entry["data"]);
  } else {
    checks.expect(dlq.elements.empty(), "skip leaves the DLQ empty",
                  a.dlq() + " holds " + std::to_string(dlq.elements.size()) + " entries");
  }
  checks.expect(
      o.effects.count(kB) && o.published.count(kB) && o.effects.at(kB) == o.published.at(kB),
      "client-B unaffected", "client-B applied all " + std::to_string(per_key) + " in order");
  expect_log_line(checks, b, o, "halt", kA);
  expect_log_line(checks, b, o, "halt_figures", kA);
  expect_log_line(checks, b, o, "resume", kA);
  expect_checker(checks, o);
  return checks.result();
}

ScenarioResult operator_skip_head(ScenarioContext& ctx, EngineBackend& b) {
  return operator_resolves_head(ctx, b, "skip");
}
ScenarioResult operator_dlq_head(ScenarioContext& ctx, EngineBackend& b) {
  return operator_resolves_head(ctx, b, "dlq");
}

// --- cold_partition_reaping -------------------------------------------------------------------

ScenarioResult cold_partition_reaping(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  const std::int64_t per_key = 3;
  sim::SimCase c = ops_case(ctx.seed, "cold_partition_reaping", {kA, kB}, per_key, 10);
  c.engine.reap_idle_ms = 1500;
  if (!b.start(c, checks)) return checks.result();
  const PartitionRef a = b.partition(kA);
  const PartitionRef bp = b.partition(kB);
  const bool done = b.wait_for(
      [&] { return last_seq(b, c.group, kA) == per_key && last_seq(b, c.group, kB) == per_key; },
      kWaitMaxMs);
  checks.expect(done, "events committed",
                "client-A and client-B committed their " + std::to_string(per_key) + " events");
  const bool reaped = b.wait_for(
      [&] {
        return !exists(b, a.stream()) && !exists(b, bp.stream()) &&
               b.run({"SISMEMBER", a.index(), kA}).integer == 0 &&
               b.run({"SISMEMBER", a.index(), kB}).integer == 0;
      },
      kWaitMaxMs);
  const bool lease_gone = !exists(b, a.lease()) && !exists(b, bp.lease());
  const bool fence_kept = exists(b, a.fence());
  checks.expect(reaped && lease_gone && fence_kept, "cold partitions reaped",
                std::string(reaped ? "streams and index entries of client-A and client-B gone"
                                   : "not reaped") +
                    ", leases " + (lease_gone ? "gone" : "still held") + ", " + a.fence() +
                    (fence_kept ? " kept" : " gone"));

  // A publish to the reaped key re-creates it; discovery finds it again.
  std::vector<sim::CaseEvent> more;
  for (std::int64_t seq = per_key + 1; seq <= per_key + 3; ++seq) {
    sim::CaseEvent e;
    e.key = kA;
    e.seq = seq;
    e.behaviour.duration_ms = 20;
    more.push_back(e);
  }
  if (!b.publish_now(more, checks)) return checks.result();
  const bool served =
      b.wait_for([&] { return last_seq(b, c.group, kA) >= per_key + 3; }, kWaitMaxMs);
  checks.expect(served, "reaped key rediscovered",
                "client-A committed up to seq " + std::to_string(last_seq(b, c.group, kA)));
  const Outcome o = b.finish(checks);

  std::uint64_t reap_index = 0;
  std::uint64_t reaped_generation = 0;
  std::uint64_t generation_after = 0;
  for (const auto& r : o.history) {
    if (r.key != kA) continue;
    if (r.op == HistoryOp::reap && reap_index == 0) {
      reap_index = r.index + 1;
      reaped_generation = r.generation;
    }
    if (r.op == HistoryOp::acquire && reap_index > 0 && generation_after == 0)
      generation_after = r.generation;
  }
  checks.expect(reap_index > 0, "reap record",
                reap_index > 0
                    ? "client-A reaped under generation " + std::to_string(reaped_generation)
                    : "no reap record for client-A");
  checks.expect(generation_after > reaped_generation, "fresh generation after the reap",
                "client-A served again under generation " + std::to_string(generation_after) +
                    " > " + std::to_string(reaped_generation));
  const bool none_lost = o.effects.count(kA) && o.published.count(kA) &&
                         o.effects.at(kA) == o.published.at(kA) &&
                         o.published.at(kA).size() == static_cast<std::size_t>(per_key + 3);
  checks.expect(none_lost, "no event lost",
                "client-A applied " +
                    std::to_string(o.effects.count(kA) ? o.effects.at(kA).size() : 0) + " of " +
                    std::to_string(per_key + 3) + " in published order");
  expect_log_line(checks, b, o, "reap", kA);
  expect_checker(checks, o);
  return checks.result();
}

// --- partition_count_warning ------------------------------------------------------------------

ScenarioResult partition_count_warning(ScenarioContext& ctx, EngineBackend& b) {
  Checks checks(ctx.out);
  const std::uint32_t threshold = 3;
  const std::vector<std::string> keys = {"client-1", "client-2", "client-3", "client-4",
                                         "client-5"};
  sim::SimCase c = ops_case(ctx.seed, "partition_count_warning", keys, 2, 10);
  c.engine.partitions_warn_threshold = threshold;
  if (!b.start(c, checks)) return checks.result();
  ToolRun partitions;
  if (b.where() == "redis") {
    partitions = b.admin("partitions", {"--warn-threshold", std::to_string(threshold), "--json"});
  }
  const Outcome o = b.finish(checks);
  std::string warning;
  std::uint64_t over = 0;
  for (const auto& r : o.history) {
    const std::optional<properties::PartitionCountWarning> parsed =
        properties::parse_partition_count_warning(r);
    if (parsed) {
      warning = r.node + ": " + r.detail;
      over = parsed->partitions;
      break;
    }
  }
  const std::string threshold_text = "over threshold " + std::to_string(threshold);
  checks.expect(warning.find(threshold_text) != std::string::npos,
                "partition-count warning recorded",
                warning.empty() ? "no warn record 'live partitions N over threshold 3'" : warning);
  checks.expect(over > threshold, "the warning counts live partitions",
                std::to_string(over) + " > " + std::to_string(threshold));
  if (b.where() == "redis") {
    expect_log_line(checks, b, o, "warn", "");
    const std::string wanted = "more than the warn threshold " + std::to_string(threshold);
    checks.expect(partitions.exit_code == 0 && partitions.out.find(wanted) != std::string::npos,
                  "admin partitions carries the warning", partitions.out);
  }
  for (const auto& key : keys) {
    checks.expect(
        o.effects.count(key) && o.published.count(key) && o.effects.at(key) == o.published.at(key),
        "per-key order", key + " applied its 2 events in order");
  }
  expect_checker(checks, o);
  return checks.result();
}

}  // namespace

std::vector<Scenario> ops_scenarios() {
  return {
      both_forms("operator_skip_head",
                 "Operator skip: a halted partition's poison head is acknowledged by `seqby admin "
                 "skip`; the owner resumes and goes on in order",
                 operator_skip_head),
      both_forms("operator_dlq_head",
                 "Operator DLQ: a halted partition's poison head is moved to C:K:dlq by `seqby "
                 "admin dlq`; the owner resumes and goes on in order",
                 operator_dlq_head),
      both_forms("cold_partition_reaping",
                 "Cold-partition reaping: an idle, fully acked partition is removed; a later "
                 "publish re-creates it, served at a fresh generation, nothing lost",
                 cold_partition_reaping),
      both_forms("partition_count_warning",
                 "Partition-count guardrail: more live partitions than the threshold is warned "
                 "about (history record, worker log, admin partitions)",
                 partition_count_warning),
  };
}

}  // namespace seqby::scenarios
