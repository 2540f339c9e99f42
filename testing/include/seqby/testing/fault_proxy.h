// FaultProxy: a TCP fault proxy for real-Redis tests (a seqby::testing fixture). It listens on a
// free loopback port and forwards every accepted connection to one upstream (a redis-server),
// byte for byte, until told to misbehave: delay every chunk, drop bytes (a black hole), or reset
// every connection. It never forwards a stream with a hole in it: a connection that lost bytes
// in a drop is reset when the drop ends, as TCP itself would end it, so a client never pairs a
// reply with the wrong command. One thread serves every connection; every call is thread-safe
// and returns at once (the thread applies it within a few milliseconds). It is not a general
// proxy: IPv4 loopback-style addresses only, no TLS, blocking connects upstream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace seqby::testing {

enum class ProxyMode : std::uint8_t {
  pass,   // forward untouched
  delay,  // hold every chunk for delay_ms before forwarding it (both directions)
  drop,   // read and discard in both directions; such connections are reset when it ends
};

const char* proxy_mode_name(ProxyMode mode);

class FaultProxy {
 public:
  struct Stats {
    std::uint64_t accepted = 0;         // connections accepted
    std::uint64_t upstream_failed = 0;  // accepted but the upstream connect failed
    std::uint64_t resets = 0;           // connections reset on purpose (reset_all, end of a drop)
    std::uint64_t bytes_forwarded = 0;
    std::uint64_t bytes_dropped = 0;
    std::uint64_t chunks_delayed = 0;
  };

  // Binds 127.0.0.1 on a port the kernel picks and starts serving. ok() tells whether it did.
  // REQUIRES: upstream_host is a dotted IPv4 address.
  FaultProxy(std::string upstream_host, std::uint16_t upstream_port);
  // Stops the thread and closes every socket.
  ~FaultProxy();
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  bool ok() const;
  const std::string& error() const;
  std::uint16_t port() const;  // where clients connect

  void pass();
  void delay(std::uint64_t delay_ms);
  void drop();
  ProxyMode mode() const;
  // Resets (RST) every open connection, both sides.
  void reset_all();
  // The local ports of the open upstream connections: how the upstream server sees this proxy's
  // clients (CLIENT LIST addr=127.0.0.1:PORT).
  std::vector<std::uint16_t> upstream_local_ports() const;
  Stats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seqby::testing
