#include "seqby/testing/variant.h"

#include <array>
#include <utility>

namespace seqby::testing {
namespace {

constexpr std::array<std::pair<Variant, std::string_view>, 8> kNames{{
    {Variant::correct, "correct"},
    {Variant::shared_group, "shared_group"},
    {Variant::message_lock, "message_lock"},
    {Variant::no_fence, "no_fence"},
    {Variant::dlq_continue, "dlq_continue"},
    {Variant::no_reclaim, "no_reclaim"},
    {Variant::batch_unfenced, "batch_unfenced"},
    {Variant::group_at_dollar, "group_at_dollar"},
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

}  // namespace seqby::testing
