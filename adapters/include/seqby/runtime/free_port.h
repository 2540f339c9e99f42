// A free TCP port on 127.0.0.1, for whatever a test, a chaos run or a benchmark starts on a port
// of its own (a redis-server, a fault proxy): the port the kernel hands out for an ephemeral
// bind, released at once. Very likely still free when the caller binds it; a caller that loses
// the race sees its server fail to start and picks again.
#pragma once

#include <cstdint>

namespace seqby::redis {

// A port, or 0 when the kernel gave none.
std::uint16_t free_loopback_port();

}  // namespace seqby::redis
