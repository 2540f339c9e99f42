// HiredisClusterLink: the ClusterLink (seqby/broker/cluster_link.h) of a real Redis Cluster, one
// HiredisLink per node. Every node connection uses the seed's settings (password, time limits)
// with the node's host and port.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "seqby/broker/cluster_link.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {

// HiredisLinks to cluster nodes, each with `seed`'s settings and the node's address.
ClusterNodeConnect hiredis_cluster_nodes(RealRuntime& runtime, RedisConfig seed);

class HiredisClusterLink final : public ClusterLink {
 public:
  // `seed`: the address of any cluster node. REQUIRES: seed.db == 0 (a cluster has database 0
  // only); `runtime` outlives the link; every call on the runtime's loop thread (as
  // HiredisLink's).
  HiredisClusterLink(RealRuntime& runtime, RedisConfig seed, ClusterLinkOptions options = {});
};

}  // namespace seqby::redis
