// HiredisClusterLink: the ClusterLink (seqby/broker/cluster_link.h) of a real Redis Cluster, one
// HiredisLink per node. Every node connection uses the seed's settings (password, time limits)
// with the node's host and port.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "seqby/broker/cluster_link.h"
#include "seqby/hiredis/hiredis_link.h"
#include "seqby/hiredis/redis_url.h"
#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {

// The connection events of the link to node `address` ("host:port").
using NodeConnectionObserver =
    std::function<void(const std::string& address, const HiredisLink::ConnectionEvent& event)>;

// HiredisLinks to cluster nodes, each with `seed`'s settings and the node's address. Each tells
// `*observer` (when given and set when the event comes) its connection events.
ClusterNodeConnect hiredis_cluster_nodes(RealRuntime& runtime, RedisConfig seed,
                                         std::shared_ptr<NodeConnectionObserver> observer = {});

class HiredisClusterLink final : public ClusterLink {
 public:
  // `seed`: the address of any cluster node. REQUIRES: seed.db == 0 (a cluster has database 0
  // only); `runtime` outlives the link; every call on the runtime's loop thread (as
  // HiredisLink's).
  HiredisClusterLink(RealRuntime& runtime, RedisConfig seed, ClusterLinkOptions options = {});

  // Every node link's connection events (HiredisLink::set_connection_observer), from now on:
  // a refused AUTH on any node, say, which retrying cannot fix.
  void set_connection_observer(NodeConnectionObserver observer) {
    *observer_ = std::move(observer);
  }

 private:
  HiredisClusterLink(RealRuntime& runtime, RedisConfig seed, ClusterLinkOptions options,
                     std::shared_ptr<NodeConnectionObserver> observer);

  std::shared_ptr<NodeConnectionObserver> observer_;
};

}  // namespace seqby::redis
