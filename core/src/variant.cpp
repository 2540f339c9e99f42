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

}  // namespace

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
