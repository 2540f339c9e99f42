// Two helpers of the tests that drive real processes (workers, publishers, a server): read what a
// process wrote to a file, and wait for an observable state with a bound, never a bare sleep.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

namespace seqby::testing {

// The whole file ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls `done` every `poll_ms` until it holds or `max_ms` passed; its last answer.
inline bool wait_for(const std::function<bool()>& done, std::uint64_t max_ms,
                     std::uint64_t poll_ms = 50) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
  }
  return done();
}

}  // namespace seqby::testing
