// The HTTP endpoint of `seqby worker --metrics-addr HOST:PORT`: GET /metrics answers the
// Prometheus text exposition of a WorkerMetrics, GET /healthz 200 while the worker's loop answers
// (503 when it has been silent too long), GET /readyz 200 once the worker is connected to Redis
// and its first discovery cycle is done (503 before, while Redis is unreachable, and while it
// stops). It runs on civetweb (the HTTP server prometheus-cpp's own Exposer is built on, whose
// handlers cannot answer 503) with two threads of its own; it never touches the worker's loop.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "seqby/core/result.h"
#include "seqby/observe/worker_metrics.h"

class CivetServer;

namespace seqby::redis {

// HOST:PORT with HOST an IPv4 address (127.0.0.1, 0.0.0.0, ...) and PORT 1-65535.
struct ListenAddress {
  std::string host;
  std::uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// The address `text` names, or Errc::invalid saying what is wrong with it.
Result<ListenAddress> parse_listen_address(std::string_view text);

class MetricsServer {
 public:
  // Listens on `address` and serves `metrics`, or Errc::refused saying why it cannot (the
  // address is taken, not this host's, ...). REQUIRES: `metrics` outlives the server.
  static Result<std::unique_ptr<MetricsServer>> start(const ListenAddress& address,
                                                      const WorkerMetrics& metrics);
  ~MetricsServer();  // stops serving; requests in progress finish first
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  const ListenAddress& address() const { return address_; }

 private:
  class Endpoint;
  MetricsServer(ListenAddress address, const WorkerMetrics& metrics);

  ListenAddress address_;
  std::unique_ptr<Endpoint> metrics_, healthz_, readyz_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace seqby::redis
