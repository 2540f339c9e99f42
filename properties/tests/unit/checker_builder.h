// A small builder for hand-made histories in the checker's unit tests: each call appends one
// record through a VectorHistorySink (so indices are positions) and returns its index.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seqby/core/history.h"
#include "seqby/properties/checker.h"
#include "seqby/properties/history_io.h"
#include "seqby/properties/markers.h"

namespace seqby::properties::testing {

struct Lease {
  std::string node;
  std::string category;
  std::string key;
  std::string group;
  std::uint64_t generation;
};

class HistoryBuilder {
 public:
  std::uint64_t add(HistoryRecord r) {
    r.time_ms = time_ms_ += 10;
    sink_.record(std::move(r));
    return sink_.records().back().index;
  }

  std::uint64_t publish(const std::string& category, const std::string& key,
                        const std::string& event, bool poison = false) {
    HistoryRecord r;
    r.op = HistoryOp::publish;
    r.category = category;
    r.key = key;
    r.event_id = event;
    r.seq = ++seqs_[category + ":" + key];
    if (poison) r.detail = "poison";
    return add(r);
  }

  std::uint64_t lease_op(HistoryOp op, const Lease& l, const std::string& detail = "") {
    HistoryRecord r;
    r.op = op;
    r.node = l.node;
    r.category = l.category;
    r.key = l.key;
    r.group = l.group;
    r.generation = l.generation;
    r.detail = detail;
    return add(r);
  }
  std::uint64_t acquire(const Lease& l) { return lease_op(HistoryOp::acquire, l); }

  // A step on `event` under lease `l`; `seq` only for commits.
  std::uint64_t event_op(HistoryOp op, const Lease& l, const std::string& event,
                         std::int64_t seq = -1, const std::string& detail = "",
                         const std::string& category = "") {
    HistoryRecord r;
    r.op = op;
    r.node = l.node;
    r.category = category.empty() ? l.category : category;
    r.key = l.key;
    r.group = l.group;
    r.generation = l.generation;
    r.event_id = event;
    r.seq = seq;
    r.detail = detail;
    return add(r);
  }
  std::uint64_t read(const Lease& l, const std::string& e) {
    return event_op(HistoryOp::read, l, e);
  }
  std::uint64_t enter(const Lease& l, const std::string& e) {
    return event_op(HistoryOp::enter, l, e);
  }
  std::uint64_t exit(const Lease& l, const std::string& e) {
    return event_op(HistoryOp::exit, l, e, -1, "ok");
  }
  std::uint64_t commit(const Lease& l, const std::string& e, std::int64_t seq) {
    return event_op(HistoryOp::commit, l, e, seq);
  }
  std::uint64_t ack(const Lease& l, const std::string& e) { return event_op(HistoryOp::ack, l, e); }

  // read, enter, exit ok, commit, ack: one event handled start to end. Returns the enter's index.
  std::uint64_t process(const Lease& l, const std::string& e, std::int64_t seq) {
    read(l, e);
    const std::uint64_t entered = enter(l, e);
    exit(l, e);
    commit(l, e, seq);
    ack(l, e);
    return entered;
  }

  std::uint64_t marker(const std::string& detail, const std::string& node = "") {
    HistoryRecord r;
    r.op = HistoryOp::fault;
    r.node = node;
    r.detail = detail;
    return add(r);
  }

  const std::vector<HistoryRecord>& records() const { return sink_.records(); }

 private:
  VectorHistorySink sink_;
  std::map<std::string, std::int64_t> seqs_;
  std::uint64_t time_ms_ = 0;
};

// Checks `h` with every property on, except those in `skip`.
inline CheckReport check(const HistoryBuilder& h, std::vector<Property> skip = {}) {
  CheckOptions options;
  options.skip = std::move(skip);
  return check_history(h.records(), options);
}

// The violations of `property` in `report`, in the checker's order.
inline std::vector<Finding> of(const CheckReport& report, Property property) {
  std::vector<Finding> out;
  for (const Finding& f : report.violations) {
    if (f.property == property) out.push_back(f);
  }
  return out;
}

}  // namespace seqby::properties::testing
