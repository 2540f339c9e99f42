#include "seqby/core/variant.h"

#include <array>
#include <utility>

namespace seqby {
namespace {

constexpr std::array<std::pair<Variant, std::string_view>, 3> kNames{{
    {Variant::correct, "correct"},
    {Variant::no_fence, "no_fence"},
    {Variant::dlq_continue, "dlq_continue"},
}};

constexpr std::array<Variant, kNames.size()> kAll = [] {
  std::array<Variant, kNames.size()> all{};
  for (std::size_t i = 0; i < kNames.size(); ++i) all[i] = kNames[i].first;
  return all;
}();

}  // namespace

std::span<const Variant> all_variants() { return kAll; }

std::string_view variant_name(Variant variant) {
  for (const auto& [value, name] : kNames) {
    if (value == variant) return name;
  }
  return "unknown";
}

std::optional<Variant> parse_variant(std::string_view name) {
  for (const auto& [value, text] : kNames) {
    if (text == name) return value;
  }
  return std::nullopt;
}

}  // namespace seqby
