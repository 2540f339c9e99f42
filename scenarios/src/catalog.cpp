#include "seqby/scenarios/catalog.h"

#include <algorithm>
#include <array>

namespace seqby::scenarios {
namespace {

// DESIGN.md section 7's order; a scenario not listed here goes last, in its group's order.
constexpr std::array<std::string_view, 11> kDesignOrder = {"per_key_order",
                                                           "no_concurrent_entry",
                                                           "cross_key_parallelism",
                                                           "poison_halt",
                                                           "crash_failover",
                                                           "stall_failover",
                                                           "registration_validation",
                                                           "capability_gating",
                                                           "one_key_per_category",
                                                           "pm_per_instance",
                                                           "unsafe_keys"};

std::size_t rank(std::string_view name) {
  const auto it = std::find(kDesignOrder.begin(), kDesignOrder.end(), name);
  return static_cast<std::size_t>(it - kDesignOrder.begin());
}

}  // namespace

const std::vector<Scenario>& all_scenarios() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> out;
    for (auto& s : domain_scenarios()) out.push_back(std::move(s));
    for (auto& s : engine_scenarios()) out.push_back(std::move(s));
    for (auto& s : ops_scenarios()) out.push_back(std::move(s));
    for (auto& s : pm_scenarios()) out.push_back(std::move(s));
    std::stable_sort(out.begin(), out.end(), [](const Scenario& a, const Scenario& b) {
      return rank(a.name) < rank(b.name);
    });
    return out;
  }();
  return all;
}

const Scenario* find_scenario(std::string_view name) {
  for (const auto& s : all_scenarios()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace seqby::scenarios
