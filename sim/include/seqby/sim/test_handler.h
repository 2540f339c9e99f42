// TestHandler: the handler every simulated run uses. It reads the event's per-stream `seq` from
// its JSON data (an event is named by its stream, category and key, and that seq), takes the
// event's planned time (runtime.sleep_ms), fails as its behaviour says (transient failures counted
// per event across retries AND instances, poison always), and then commits through the fenced
// effect sink (HandlerContext::commit(seq, event id)). It succeeds only when the sink accepted the
// commit or already had it. The plan and the counters live in a HandlerPlan the world owns, so a
// crash or a failover does not reset them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "seqby/core/handler.h"
#include "seqby/core/runtime.h"
#include "seqby/sim/faults.h"
#include "seqby/sim/sim_case.h"

namespace seqby::sim {

// What the handlers do per event, and what they did: shared by every instance of a world.
class HandlerPlan {
 public:
  // `observer` is told of a handler fault when an event carrying it is first handled (may be
  // null). `beside`: the plan of the case's beside group, whose calls also take each event's
  // beside_slow_ms (not a handler fault: not reported); its counters are its own, so transient
  // failures strike each group. REQUIRES:
  // `observer` outlives the plan.
  HandlerPlan(const SimCase& c, FaultObserver* observer, bool beside = false);

  // The behaviour of (category, key, seq); the default behaviour when the case has no such
  // event.
  const EventBehaviour& behaviour(const std::string& category, const std::string& key,
                                  std::int64_t seq) const;
  // Reports the event's handler faults the first time any instance handles it.
  void on_first_call(const std::string& node, const std::string& category, const std::string& key,
                     std::int64_t seq);
  // Whether this call must fail as a transient failure (and counts it).
  bool take_transient_failure(const std::string& category, const std::string& key,
                              std::int64_t seq);

  // What each node is handling right now (for scenarios that strike at a moment).
  struct Inside {
    std::string category;
    std::string key;
    std::int64_t seq = 0;
  };
  std::map<std::string, Inside>& inside() { return inside_; }
  const std::map<std::string, Inside>& inside() const { return inside_; }
  std::uint64_t calls() const { return calls_; }

 private:
  // seq, key, category: in that order so that most comparisons end on the integer (a case has
  // one category, or a few, and many events per key).
  using EventKey = std::tuple<std::int64_t, std::string, std::string>;
  // The same, for lookups that copy no string (the maps compare it with EventKey: std::less<>).
  using EventView = std::tuple<std::int64_t, std::string_view, std::string_view>;
  std::map<EventKey, EventBehaviour, std::less<>> plan_;
  std::map<EventKey, std::uint32_t, std::less<>> failures_;
  std::set<EventKey, std::less<>> seen_;
  std::map<std::string, Inside> inside_;
  EventBehaviour default_;
  FaultObserver* observer_;
  bool process_manager_ = false;   // fault details name the category too
  bool beside_ = false;            // the beside group's plan: calls take beside_slow_ms too
  bool commit_with_step_ = false;  // SimCase::commit_with_step: the engine commits the effect
  std::uint64_t calls_ = 0;
  friend class TestHandler;
};

class TestHandler final : public Handler {
 public:
  // REQUIRES: `runtime` and `plan` outlive the handler. `node` is the instance's owner id.
  TestHandler(Runtime& runtime, HandlerPlan& plan, std::string node);

  Task<HandlerResult> handle(const Event& event, HandlerContext& context) override;
  // Calls of handle() begun and not yet returned (the world kills a stall_replace's old process
  // only outside a handler).
  std::uint32_t calls_open() const { return calls_open_; }

 private:
  Task<HandlerResult> handle_call(const Event& event, HandlerContext& context);

  Runtime& runtime_;
  HandlerPlan& plan_;
  std::string node_;
  std::uint32_t calls_open_ = 0;
};

// The event data the publisher writes for (key, seq): {"client_id":"<key>","seq":<seq>}.
std::string event_data_json(const std::string& key, std::int64_t seq);

}  // namespace seqby::sim
