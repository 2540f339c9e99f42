// The judges of a chaos run: where its history comes from (collect_history), the checker on it,
// and the second opinion read from the effect sinks themselves.
#include <algorithm>
#include <string>

#include "chaos_detail.h"
#include "seqby/core/keyspace.h"
#include "seqby/properties/checker.h"

namespace seqby::scenarios {

// The run's history as the driver keeps it: the decision journal of the run's categories and
// process manager (read_journal), which every deciding script writes in the same step as its
// decision, plus chaos's own records (run header, faults struck, liveness marker) appended
// through driver.append_history. Exact, so the checker's verdict fails a run as the simulator's
// does. A driver without a journal (journal_maxlen 0) falls back to the workers' history
// stream, which a kill or a stop can leave short: its findings are then only advisory.
Result<ChaosHistory> collect_history(RedisScenarioDriver& driver) {
  Result<std::vector<HistoryRecord>> records = driver.read_history();
  if (!records.ok()) return records.error();
  ChaosHistory history;
  history.records = std::move(records).value();
  history.exact = driver.journal();
  history.source = history.exact
                       ? "decision journal"
                       : "history stream " + driver.history_stream() + " (appended after the fact)";
  return history;
}

namespace chaos_detail {
namespace {

void violate(ChaosRunResult* r, const char* property, const ChaosLane& lane, std::string text) {
  r->violations.push_back(
      ChaosViolation{property, lane.category + ":" + lane.key, r->seed, std::move(text)});
}

}  // namespace

void judge_sinks(RedisScenarioDriver& driver, const std::vector<ChaosLane>& lanes,
                 ChaosRunResult* r) {
  r->properties_checked["sink_order"] = true;
  r->properties_checked["sink_no_loss"] = true;
  r->properties_checked["sink_poison_halt"] = true;
  for (const ChaosLane& lane : lanes) {
    const std::int64_t last = driver.last_seq(lane.key, lane.category);
    const std::vector<std::string> effects = driver.effects(lane.key, lane.category);
    r->events_committed += static_cast<std::uint64_t>(last > 0 ? last : 0);
    // effects() is ordered by seq; with seqs 1..last exactly, effect i is seq i+1.
    if (static_cast<std::int64_t>(effects.size()) != last) {
      violate(r, "sink_order", lane,
              "the sink's last seq is " + std::to_string(last) + " but it holds " +
                  std::to_string(effects.size()) + " effects: a seq was skipped or repeated");
    }
    for (std::size_t i = 0; i < effects.size(); ++i) {
      const std::string expected = i < lane.ids.size() ? lane.ids[i] : "(nothing published)";
      if (effects[i] == expected) continue;
      violate(r, "sink_order", lane,
              "commit " + std::to_string(i + 1) + " applied event " + effects[i] + " but seq " +
                  std::to_string(i + 1) + " was published as " + expected +
                  ": the sink did not apply the events in publish order");
      break;
    }
    if (lane.poison_seq > 0 && last >= lane.poison_seq) {
      violate(r, "sink_poison_halt", lane,
              "the sink reached seq " + std::to_string(last) + ", past the poison event seq " +
                  std::to_string(lane.poison_seq) + ": the partition did not halt on its head");
    } else if (last < lane.target()) {
      violate(r, "sink_no_loss", lane,
              "the sink stopped at seq " + std::to_string(last) + " of " +
                  std::to_string(lane.target()) + " committable events after the liveness phase");
    }
  }
}

// Whether no_loss finding `f` is what a publish a failover lost leaves behind on its lane: the
// event it names as never committed (the publish record among its witnesses, which are sorted)
// is one published after the lost one (a numbered sink refuses them all: the seq before them
// never arrives).
bool behind_lost_publish(const properties::Finding& f, const std::vector<HistoryRecord>& records,
                         const std::vector<ChaosLane>& lanes) {
  if (f.property != properties::Property::no_loss) return false;
  for (const ChaosLane& lane : lanes) {
    if (lane.lost_from == 0 || lane.category != f.category || lane.key != f.key) continue;
    const auto from = lane.ids.begin() + (lane.lost_from - 1);
    for (const HistoryRecord& record : records) {
      if (record.op != HistoryOp::publish) continue;
      if (std::find(f.witnesses.begin(), f.witnesses.end(), record.index) == f.witnesses.end()) {
        continue;
      }
      if (std::find(from, lane.ids.end(), record.event_id) != lane.ids.end()) return true;
    }
  }
  return false;
}

void judge_history(const ChaosParams& params, const std::vector<ChaosLane>& lanes,
                   const std::vector<properties::Property>& not_judged, ChaosRunResult* r) {
  properties::CheckOptions options;
  options.skip = not_judged;
  if (params.workers < 2 || lanes.size() < 2) {
    options.skip.push_back(properties::Property::parallel);
  }
  const properties::CheckReport report = properties::check_history(r->history.records, options);
  for (std::size_t p = 0; p < properties::kPropertyCount; ++p) {
    const auto property = static_cast<properties::Property>(p);
    if (!report.status(property).checked) continue;
    r->properties_checked[properties::property_name(property)] = r->history.exact;
  }
  for (const properties::Finding& f : report.violations) {
    ChaosViolation v{properties::property_name(f.property),
                     f.category.empty() ? f.key : f.category + ":" + f.key, r->seed, f.explanation};
    if (behind_lost_publish(f, r->history.records, lanes)) {
      r->explained_findings.push_back(v.key + ": " + v.explanation);
      continue;
    }
    (r->history.exact ? r->violations : r->advisory_violations).push_back(std::move(v));
  }
}

}  // namespace chaos_detail
}  // namespace seqby::scenarios
