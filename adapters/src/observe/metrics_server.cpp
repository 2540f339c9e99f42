// MetricsServer: /metrics, /healthz and /readyz of a worker, on civetweb.
#include "seqby/observe/metrics_server.h"

#include <CivetServer.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <vector>

#include "seqby/runtime/real_runtime.h"

namespace seqby::redis {

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return make_error(Errc::invalid, quoted + " is not HOST:PORT (e.g. 127.0.0.1:9464)");
  }
  ListenAddress out;
  out.host = std::string(text.substr(0, colon));
  in_addr parsed{};
  if (::inet_pton(AF_INET, out.host.c_str(), &parsed) != 1) {
    return make_error(Errc::invalid, quoted + ": '" + out.host +
                                         "' is not an IPv4 address (e.g. 127.0.0.1, or 0.0.0.0 "
                                         "for every interface)");
  }
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 1 ||
      value > 65535) {
    return make_error(Errc::invalid, quoted + ": the port '" + std::string(port) +
                                         "' is not a number from 1 to 65535");
  }
  out.port = static_cast<std::uint16_t>(value);
  return out;
}

namespace {

// Why nothing can listen on `address` ("" when a socket could bind it): civetweb only says
// that it could not start, so the reason is found with a bind of our own first.
std::string bind_problem(const ListenAddress& address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::string("socket: ") + std::strerror(errno);
  const int yes = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(address.port);
  (void)::inet_pton(AF_INET, address.host.c_str(), &at.sin_addr);
  std::string problem;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0) {
    problem = std::strerror(errno);
  }
  ::close(fd);
  return problem;
}

void answer(mg_connection* conn, int status, const char* content_type, const std::string& body) {
  const char* reason = status == 200 ? "OK" : "Service Unavailable";
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            status, reason, content_type, body.size());
  mg_write(conn, body.data(), body.size());
}

}  // namespace

class MetricsServer::Endpoint final : public CivetHandler {
 public:
  enum class Kind { metrics, healthz, readyz };
  Endpoint(Kind kind, const WorkerMetrics& metrics) : kind_(kind), metrics_(metrics) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    switch (kind_) {
      case Kind::metrics:
        answer(conn, 200, "text/plain; version=0.0.4; charset=utf-8", metrics_.scrape());
        break;
      case Kind::healthz: {
        const HealthAnswer health = metrics_.healthz(SteadyClock().now_ms());
        answer(conn, health.status, "text/plain; charset=utf-8", health.body);
        break;
      }
      case Kind::readyz: {
        const HealthAnswer ready = metrics_.readyz();
        answer(conn, ready.status, "text/plain; charset=utf-8", ready.body);
        break;
      }
    }
    return true;
  }

 private:
  const Kind kind_;
  const WorkerMetrics& metrics_;
};

MetricsServer::MetricsServer(ListenAddress address, const WorkerMetrics& metrics)
    : address_(std::move(address)),
      metrics_(std::make_unique<Endpoint>(Endpoint::Kind::metrics, metrics)),
      healthz_(std::make_unique<Endpoint>(Endpoint::Kind::healthz, metrics)),
      readyz_(std::make_unique<Endpoint>(Endpoint::Kind::readyz, metrics)) {}

MetricsServer::~MetricsServer() {
  if (server_) server_->close();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const ListenAddress& address,
                                                            const WorkerMetrics& metrics) {
  const std::string where = "cannot listen on " + address.text() + ": ";
  if (std::string problem = bind_problem(address); !problem.empty()) {
    return make_error(Errc::refused, where + problem);
  }
  std::unique_ptr<MetricsServer> server(new MetricsServer(address, metrics));
  const std::vector<std::string> options{
      "listening_ports",    address.text(), "num_threads",       "2",
      "request_timeout_ms", "10000",        "enable_keep_alive", "no"};
  try {
    server->server_ = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    return make_error(Errc::refused, where + e.what());
  }
  server->server_->addHandler("/metrics", *server->metrics_);
  server->server_->addHandler("/healthz", *server->healthz_);
  server->server_->addHandler("/readyz", *server->readyz_);
  return server;
}

}  // namespace seqby::redis
