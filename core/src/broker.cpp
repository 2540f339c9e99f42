#include "seqby/core/broker.h"

#include "seqby/core/check.h"
#include "seqby/core/lease.h"

namespace seqby {

std::string lease_key_for(const PartitionRef& partition, std::string_view scope) {
  return lease_key_name(partition.category, partition.key, scope);
}

std::string Lease::token() const { return owner_id + ":" + std::to_string(generation); }

PartitionRef Lease::unit() const {
  if (process_manager.empty()) return partition;
  return PartitionRef{pm_lease_category(process_manager), partition.key};
}

std::string Lease::key() const { return lease_key_for(unit(), scope); }

Lease Lease::on(std::string_view category) const {
  SEQBY_CHECK(!process_manager.empty());
  Lease out = *this;
  out.partition.category = std::string(category);
  return out;
}

const char* commit_outcome_name(CommitOutcome outcome) {
  switch (outcome) {
    case CommitOutcome::accepted:
      return "accepted";
    case CommitOutcome::duplicate:
      return "duplicate";
    case CommitOutcome::out_of_order:
      return "out_of_order";
    case CommitOutcome::fenced:
      return "fenced";
  }
  return "unknown";
}

}  // namespace seqby
