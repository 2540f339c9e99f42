// A partition lease (ADR decision 5): which engine instance may act for one partition and one
// handler group, and at which generation. The lease value in Redis is the token `O:N` (owner id,
// generation); the consumer name inside the group is the same token, so a consumer name always
// tells its generation. A Lease value is only a claim: every fenced broker call re-checks it.
//
// Which Redis key holds the lease: DESIGN's `C:K:__lease__` when one handler group consumes the
// category (the default), `C:K:__lease__:G` when several groups consume one category and each
// needs its own lease (EngineOptions::lease_per_group). The generation counter `C:K:__fence__`
// is per partition in both cases and never expires, so generations are never reused.
//
// A process manager's lease (ADR decision 2) is keyed by correlation value instead: the lease of
// process manager P for correlation value X is `__pm__:P:X:__lease__` (generations in
// `__pm__:P:X:__fence__`), and it covers the partitions C:X of every category C the PM
// subscribes. Such a Lease names P in `process_manager`; on(C) is the same claim acting on C:X,
// so every fenced call on any of those streams checks the one lease key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "seqby/core/naming.h"

namespace seqby {

struct Lease {
  PartitionRef partition;        // the partition stream the holder acts on
  std::string scope;             // "" for C:K:__lease__; the group name for C:K:__lease__:G
  std::string owner_id;          // no colon
  std::uint64_t generation = 0;  // >= 1 for a lease actually granted
  std::string process_manager;   // "" for a partition lease; else P, and partition.key is X

  // "O:N": the value of the lease key and the consumer name in the group.
  std::string token() const;
  // What the lease is of: the partition itself, or {pm_lease_category(P), X} for a process
  // manager (whose lease and fence keys live there).
  PartitionRef unit() const;
  // The Redis key of this lease.
  std::string key() const;
  // The same lease acting on the partition category:X. REQUIRES: a process manager's lease.
  Lease on(std::string_view category) const;

  friend bool operator==(const Lease&, const Lease&) = default;
};

// The lease key of `partition` for `scope` ("" or a group name).
std::string lease_key_for(const PartitionRef& partition, std::string_view scope);

}  // namespace seqby
