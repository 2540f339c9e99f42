#include "seqby/core/capabilities.h"

namespace seqby {

const char* capability_name(Capability capability) {
  switch (capability) {
    case Capability::stream_partitioning:
      return "STREAM_PARTITIONING";
    case Capability::consumer_groups:
      return "CONSUMER_GROUPS";
    case Capability::reclaim_pending:
      return "RECLAIM_PENDING";
    case Capability::dead_letter_queue:
      return "DEAD_LETTER_QUEUE";
    case Capability::count_:
      break;
  }
  return "UNKNOWN";
}

std::string CapabilitySet::to_string() const {
  std::string out = "{";
  for (unsigned i = 0; i < static_cast<unsigned>(Capability::count_); ++i) {
    const auto c = static_cast<Capability>(i);
    if (!has(c)) continue;
    if (out.size() > 1) out += ", ";
    out += capability_name(c);
  }
  out += '}';
  return out;
}

}  // namespace seqby
