#include "seqby/scenarios/catalog.h"

namespace seqby::scenarios {

const std::vector<Scenario>& all_scenarios() {
  static const std::vector<Scenario> all = [] {
    std::vector<Scenario> out;
    for (auto& s : domain_scenarios()) out.push_back(std::move(s));
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
