// Shared helpers for the SimRedis unit tests: a manual clock and short reply builders, so that
// each test states the exact reply Redis 7.0 gives.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/clock.h"

namespace seqby::redis {
// Readable replies in test failures.
inline void PrintTo(const Reply& reply, std::ostream* os) { *os << to_string(reply); }
}  // namespace seqby::redis

namespace seqby::sim::testing {

using redis::Reply;

class ManualClock : public Clock {
 public:
  explicit ManualClock(std::uint64_t start_ms) : now_ms_(start_ms) {}
  std::uint64_t now_ms() override { return now_ms_; }
  void advance_ms(std::uint64_t ms) { now_ms_ += ms; }

 private:
  std::uint64_t now_ms_;
};

inline Reply bulk(std::string s) { return Reply::bulk(std::move(s)); }
inline Reply integer(std::int64_t v) { return Reply::of_int(v); }
inline Reply status(std::string s) { return Reply::status(std::move(s)); }
inline Reply error(std::string s) { return Reply::error(std::move(s)); }
inline Reply nil() { return Reply::nil(); }
inline Reply ok() { return Reply::status("OK"); }
inline Reply arr(std::vector<Reply> e) { return Reply::array(std::move(e)); }
inline Reply bulks(std::initializer_list<const char*> items) {
  std::vector<Reply> e;
  for (const char* s : items) e.push_back(Reply::bulk(s));
  return Reply::array(std::move(e));
}
// [id, [field, value, ...]]
inline Reply entry(const char* id, std::initializer_list<const char*> fields) {
  return arr({bulk(id), bulks(fields)});
}

inline const char kWrongType[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

}  // namespace seqby::sim::testing
