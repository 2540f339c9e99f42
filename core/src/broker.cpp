#include "seqby/core/broker.h"

#include "seqby/core/lease.h"

namespace seqby {

std::string lease_key_for(const PartitionRef& partition, std::string_view scope) {
  std::string key = partition.lease();
  if (!scope.empty()) {
    key += ':';
    key += scope;
  }
  return key;
}

std::string Lease::token() const { return owner_id + ":" + std::to_string(generation); }

std::string Lease::key() const { return lease_key_for(partition, scope); }

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
