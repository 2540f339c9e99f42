// The only source of time in core/. The real clock is the steady clock; the simulator's clock is
// virtual time (possibly skewed per instance). Nothing in core/ reads wall time any other way.
#pragma once

#include <cstdint>

namespace seqby {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds from an arbitrary origin; only differences are meaningful.
  virtual std::uint64_t now_ms() = 0;
};

}  // namespace seqby
