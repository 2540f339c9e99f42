// FaultProxy: one poll(2) loop over the listening socket and every connection pair.
#include "seqby/testing/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <deque>
#include <list>
#include <mutex>
#include <thread>

#include "seqby/core/check.h"

namespace seqby::testing {
namespace {

constexpr int kPollMs = 5;
constexpr std::size_t kChunkBytesMax = 64 * 1024;
constexpr std::size_t kBacklogBytesMax = 8 * 1024 * 1024;  // per direction; reading pauses above
constexpr std::size_t kConnectionsMax = 256;

std::uint64_t now_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

// Closes with RST instead of FIN.
void close_with_reset(int fd) {
  linger hard{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::close(fd);
}

std::uint16_t local_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  return ntohs(addr.sin_port);
}

struct Chunk {
  std::string bytes;
  std::size_t offset = 0;
  std::uint64_t release_ms = 0;
};

// One direction of a connection pair: bytes read from `from`, waiting to be written to `to`.
struct Lane {
  std::deque<Chunk> chunks;
  std::size_t bytes = 0;
};

struct Pair {
  int down = -1;  // the client's side
  int up = -1;    // the upstream's side
  std::uint16_t up_port = 0;
  Lane to_up;
  Lane to_down;
  bool lost_bytes = false;  // a drop discarded some of its bytes: reset when the drop ends
  bool dead = false;
};

}  // namespace

const char* proxy_mode_name(ProxyMode mode) {
  switch (mode) {
    case ProxyMode::pass:
      return "pass";
    case ProxyMode::delay:
      return "delay";
    case ProxyMode::drop:
      return "drop";
  }
  return "?";
}

class FaultProxy::Impl {
 public:
  Impl(std::string host, std::uint16_t port)
      : upstream_host_(std::move(host)), upstream_port_(port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) {
      error_ = "socket failed";
      return;
    }
    const int yes = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 64) != 0) {
      error_ = "bind/listen on 127.0.0.1 failed";
      ::close(listen_fd_);
      listen_fd_ = -1;
      return;
    }
    set_nonblocking(listen_fd_);
    port_ = local_port(listen_fd_);
    thread_ = std::thread([this] { serve(); });
  }

  ~Impl() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    for (Pair& p : pairs_) close_pair(p, false);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  bool ok() const { return listen_fd_ >= 0; }
  const std::string& error() const { return error_; }
  std::uint16_t port() const { return port_; }

  void set_mode(ProxyMode mode, std::uint64_t delay_ms) {
    std::lock_guard<std::mutex> lock(mu_);
    mode_ = mode;
    delay_ms_ = delay_ms;
  }
  ProxyMode mode() const {
    std::lock_guard<std::mutex> lock(mu_);
    return mode_;
  }
  void reset_all() {
    std::lock_guard<std::mutex> lock(mu_);
    ++resets_requested_;
  }
  std::vector<std::uint16_t> upstream_local_ports() const {
    std::lock_guard<std::mutex> lock(mu_);
    return up_ports_;
  }
  Stats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  void close_pair(Pair& p, bool reset) {
    if (p.down >= 0) reset ? close_with_reset(p.down) : (void)::close(p.down);
    if (p.up >= 0) reset ? close_with_reset(p.up) : (void)::close(p.up);
    p.down = p.up = -1;
    p.dead = true;
  }

  int connect_upstream() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(upstream_port_);
    if (::inet_pton(AF_INET, upstream_host_.c_str(), &addr.sin_addr) != 1 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    set_nonblocking(fd);
    return fd;
  }

  void accept_all(Stats& stats) {
    for (;;) {
      const int down = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (down < 0) return;
      ++stats.accepted;
      if (pairs_.size() >= kConnectionsMax) {
        close_with_reset(down);
        continue;
      }
      const int up = connect_upstream();
      if (up < 0) {
        ++stats.upstream_failed;
        close_with_reset(down);
        continue;
      }
      const int yes = 1;
      ::setsockopt(down, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      Pair p;
      p.down = down;
      p.up = up;
      p.up_port = local_port(up);
      pairs_.push_back(std::move(p));
    }
  }

  // Reads what `from` has into `lane` (or discards it in a drop). False when `from` closed.
  bool read_into(int from, Lane& lane, Pair& p, ProxyMode mode, std::uint64_t delay_ms,
                 Stats& stats) {
    char buffer[kChunkBytesMax];
    for (int round = 0; round < 16 && lane.bytes < kBacklogBytesMax; ++round) {
      const ssize_t n = ::read(from, buffer, sizeof buffer);
      if (n == 0) return false;
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      if (mode == ProxyMode::drop) {
        stats.bytes_dropped += static_cast<std::uint64_t>(n);
        p.lost_bytes = true;
        continue;
      }
      Chunk c;
      c.bytes.assign(buffer, static_cast<std::size_t>(n));
      c.release_ms = mode == ProxyMode::delay ? now_ms() + delay_ms : 0;
      if (mode == ProxyMode::delay) ++stats.chunks_delayed;
      lane.bytes += c.bytes.size();
      lane.chunks.push_back(std::move(c));
    }
    return true;
  }

  // Writes the due chunks of `lane` to `to`. False when `to` failed.
  bool write_from(int to, Lane& lane, Stats& stats) {
    const std::uint64_t now = now_ms();
    while (!lane.chunks.empty() && lane.chunks.front().release_ms <= now) {
      Chunk& c = lane.chunks.front();
      const ssize_t n = ::send(to, c.bytes.data() + c.offset, c.bytes.size() - c.offset,
                               MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.offset += static_cast<std::size_t>(n);
      stats.bytes_forwarded += static_cast<std::uint64_t>(n);
      if (c.offset < c.bytes.size()) return true;
      lane.bytes -= c.bytes.size();
      lane.chunks.pop_front();
    }
    return true;
  }

  static bool due(const Lane& lane, std::uint64_t now) {
    return !lane.chunks.empty() && lane.chunks.front().release_ms <= now;
  }

  void serve() {
    std::uint64_t resets_done = 0;
    ProxyMode last_mode = ProxyMode::pass;
    while (!stop_.load()) {
      ProxyMode mode;
      std::uint64_t delay_ms;
      std::uint64_t resets_requested;
      Stats stats;
      {
        std::lock_guard<std::mutex> lock(mu_);
        mode = mode_;
        delay_ms = delay_ms_;
        resets_requested = resets_requested_;
        stats = stats_;
      }
      if (resets_requested != resets_done) {
        resets_done = resets_requested;
        for (Pair& p : pairs_) {
          close_pair(p, true);
          ++stats.resets;
        }
      }
      if (last_mode == ProxyMode::drop && mode != ProxyMode::drop) {
        for (Pair& p : pairs_) {
          if (!p.lost_bytes || p.dead) continue;
          close_pair(p, true);
          ++stats.resets;
        }
      }
      last_mode = mode;
      pairs_.remove_if([](const Pair& p) { return p.dead; });

      std::vector<pollfd> fds;
      fds.push_back({listen_fd_, POLLIN, 0});
      const std::uint64_t now = now_ms();
      for (Pair& p : pairs_) {
        short down_events = p.to_up.bytes < kBacklogBytesMax ? POLLIN : 0;
        short up_events = p.to_down.bytes < kBacklogBytesMax ? POLLIN : 0;
        if (due(p.to_down, now)) down_events |= POLLOUT;
        if (due(p.to_up, now)) up_events |= POLLOUT;
        fds.push_back({p.down, down_events, 0});
        fds.push_back({p.up, up_events, 0});
      }
      const int ready = ::poll(fds.data(), fds.size(), kPollMs);
      SEQBY_CHECK(ready >= 0 || errno == EINTR);
      if (fds[0].revents & POLLIN) accept_all(stats);
      std::size_t i = 1;
      for (Pair& p : pairs_) {
        if (i + 1 >= fds.size()) break;  // accepted during this round: served next round
        const short down_ready = fds[i].revents;
        const short up_ready = fds[i + 1].revents;
        i += 2;
        bool alive = true;
        if (down_ready & (POLLIN | POLLHUP | POLLERR))
          alive = read_into(p.down, p.to_up, p, mode, delay_ms, stats) && alive;
        if (alive && (up_ready & (POLLIN | POLLHUP | POLLERR)))
          alive = read_into(p.up, p.to_down, p, mode, delay_ms, stats);
        if (alive) alive = write_from(p.up, p.to_up, stats) && write_from(p.down, p.to_down, stats);
        if (!alive) close_pair(p, false);
      }
      pairs_.remove_if([](const Pair& p) { return p.dead; });
      std::vector<std::uint16_t> ports;
      for (const Pair& p : pairs_) ports.push_back(p.up_port);
      std::lock_guard<std::mutex> lock(mu_);
      up_ports_ = std::move(ports);
      stats_ = stats;
    }
  }

  std::string upstream_host_;
  std::uint16_t upstream_port_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::string error_;
  std::list<Pair> pairs_;  // the serving thread's only
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  ProxyMode mode_ = ProxyMode::pass;
  std::uint64_t delay_ms_ = 0;
  std::uint64_t resets_requested_ = 0;
  std::vector<std::uint16_t> up_ports_;
  Stats stats_;
  std::thread thread_;
};

FaultProxy::FaultProxy(std::string upstream_host, std::uint16_t upstream_port)
    : impl_(std::make_unique<Impl>(std::move(upstream_host), upstream_port)) {}
FaultProxy::~FaultProxy() = default;
bool FaultProxy::ok() const { return impl_->ok(); }
const std::string& FaultProxy::error() const { return impl_->error(); }
std::uint16_t FaultProxy::port() const { return impl_->port(); }
void FaultProxy::pass() { impl_->set_mode(ProxyMode::pass, 0); }
void FaultProxy::delay(std::uint64_t delay_ms) { impl_->set_mode(ProxyMode::delay, delay_ms); }
void FaultProxy::drop() { impl_->set_mode(ProxyMode::drop, 0); }
ProxyMode FaultProxy::mode() const { return impl_->mode(); }
void FaultProxy::reset_all() { impl_->reset_all(); }
std::vector<std::uint16_t> FaultProxy::upstream_local_ports() const {
  return impl_->upstream_local_ports();
}
FaultProxy::Stats FaultProxy::stats() const { return impl_->stats(); }

}  // namespace seqby::testing
