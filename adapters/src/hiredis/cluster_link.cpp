#include "seqby/hiredis/cluster_link.h"

#include "seqby/core/check.h"

namespace seqby::redis {

ClusterNodeConnect hiredis_cluster_nodes(RealRuntime& runtime, RedisConfig seed) {
  return [&runtime, seed = std::move(seed)](
             const std::string& host, std::uint16_t port) -> std::unique_ptr<ClusterNodeLink> {
    RedisConfig config = seed;
    config.host = host;
    config.port = port;
    return std::make_unique<HiredisLink>(runtime, std::move(config));
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
    : ClusterLink(runtime, checked_seed(seed).host, seed.port, hiredis_cluster_nodes(runtime, seed),
                  options) {}

}  // namespace seqby::redis
