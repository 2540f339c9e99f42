// TestHandler: the handler every simulated run uses. It reads the event's per-stream `seq` from
// its JSON data (an event is named by its stream, category and key, and that seq), takes the
// event's planned time (runtime.sleep_ms), fails as its behaviour says (transient failures counted
// per event across retries AND instances, poison always), and then commits through the fenced
// effect sink (HandlerContext::commit(seq, event id)). It succeeds only when the sink accepted the
// commit or already had it. The plan and the counters live in a HandlerPlan the world owns, so a
// crash or a failover does not reset them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

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
  // An event by seq, key and category.
  using EventKey = std::tuple<std::int64_t, std::string, std::string>;
  // The same, for lookups that copy no string.
  using EventView = std::tuple<std::int64_t, std::string_view, std::string_view>;
  struct EventHash {
    using is_transparent = void;
    std::size_t operator()(const EventView& e) const {
      const std::size_t key = std::hash<std::string_view>{}(std::get<1>(e));
      const std::size_t category = std::hash<std::string_view>{}(std::get<2>(e));
      return key ^ (category * 0x9e3779b97f4a7c15ULL) ^
             (static_cast<std::size_t>(std::get<0>(e)) * 0xff51afd7ed558ccdULL);
    }
    std::size_t operator()(const EventKey& e) const {
      return (*this)(EventView{std::get<0>(e), std::get<1>(e), std::get<2>(e)});
    }
  };
  struct EventEqual {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::get<0>(a) == std::get<0>(b) && std::get<1>(a) == std::get<1>(b) &&
             std::get<2>(a) == std::get<2>(b);
    }
  };
  // What the plan says of an event, and what its calls did so far. An event the case does not
  // plan gets the default behaviour at its first call.
  struct EventState {
    EventBehaviour behaviour;
    bool seen = false;           // handled once by some instance: its faults were reported
    std::uint32_t failures = 0;  // transient failures taken so far
  };
  // The event's state, made at its first call (only lookups: no order of these is ever read).
  EventState& state_of(const std::string& category, const std::string& key, std::int64_t seq);
  // Reports the event's handler faults the first time any instance handles it.
  void on_first_call(EventState& state, const std::string& node, const std::string& category,
                     const std::string& key, std::int64_t seq);

  std::unordered_map<EventKey, EventState, EventHash, EventEqual> events_;
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
