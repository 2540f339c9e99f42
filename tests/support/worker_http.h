// What the tests of `seqby worker --metrics-addr` share: a GET of one of its endpoints over a
// socket of the test's own, and the value of one sample of a Prometheus text scrape.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace seqby::testing {

struct HttpAnswer {
  int status = -1;  // -1: no answer (nothing listens, or the connection failed)
  std::string body;
};

// GET http://127.0.0.1:port/path over a socket of our own (HTTP/1.0, the server closes).
inline HttpAnswer http_get(std::uint16_t port, const std::string& path) {
  HttpAnswer out;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return out;
  timeval wait{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait));
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &at.sin_addr);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0) {
    ::close(fd);
    return out;
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ::close(fd);
    return out;
  }
  std::string response;
  char chunk[8192];
  for (ssize_t n; (n = ::recv(fd, chunk, sizeof(chunk), 0)) > 0;) response.append(chunk, n);
  ::close(fd);
  // "HTTP/1.1 200 OK\r\n...\r\n\r\nbody"
  const std::size_t space = response.find(' ');
  const std::size_t body = response.find("\r\n\r\n");
  if (space == std::string::npos || body == std::string::npos) return out;
  out.status = std::atoi(response.c_str() + space + 1);
  out.body = response.substr(body + 4);
  return out;
}

// The value of the sample `series` (name and labels exactly as exposed), or -1 when absent.
inline double sample(const std::string& metrics, const std::string& series) {
  const std::string head = "\n" + series + " ";
  const std::size_t at = ("\n" + metrics).find(head);
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + head.size() - 1));
}

}  // namespace seqby::testing
