#include "seqby/hiredis/cluster_link.h"

#include "seqby/core/check.h"

namespace seqby::redis {

ClusterNodeConnect hiredis_cluster_nodes(RealRuntime& runtime, RedisConfig seed,
                                         std::shared_ptr<NodeConnectionObserver> observer) {
  return [&runtime, seed = std::move(seed), observer = std::move(observer)](
             const std::string& host, std::uint16_t port) -> std::unique_ptr<ClusterNodeLink> {
    RedisConfig config = seed;
    config.host = host;
    config.port = port;
    auto link = std::make_unique<HiredisLink>(runtime, std::move(config));
    if (observer) {
      link->set_connection_observer([observer, address = host + ":" + std::to_string(port)](
                                        const HiredisLink::ConnectionEvent& event) {
        if (*observer) (*observer)(address, event);
      });
    }
    return link;
  };
}

namespace {

const RedisConfig& checked_seed(const RedisConfig& seed) {
  SEQBY_CHECK(seed.db == 0);
  return seed;
}

}  // namespace

HiredisClusterLink::HiredisClusterLink(RealRuntime& runtime, RedisConfig seed,
                                       ClusterLinkOptions options)
    : HiredisClusterLink(runtime, std::move(seed), options,
                         std::make_shared<NodeConnectionObserver>()) {}

HiredisClusterLink::HiredisClusterLink(RealRuntime& runtime, RedisConfig seed,
                                       ClusterLinkOptions options,
                                       std::shared_ptr<NodeConnectionObserver> observer)
    : ClusterLink(runtime, checked_seed(seed).host, seed.port,
                  hiredis_cluster_nodes(runtime, seed, observer), options),
      observer_(std::move(observer)) {}

}  // namespace seqby::redis
