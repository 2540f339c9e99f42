// A Redis reply, modelled on RESP2 as hiredis 0.14 returns it: nil, integer, status, error,
// bulk string, or array. The simulated Redis produces the same values, so a reply from either
// side compares with ==, and a differential test can compare them directly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace seqby::redis {

using Command = std::vector<std::string>;

struct Reply {
  enum class Kind : std::uint8_t { nil, integer, status, error, bulk, array };

  Kind kind = Kind::nil;
  std::int64_t integer = 0;     // Kind::integer
  std::string str;              // Kind::status, Kind::error, Kind::bulk
  std::vector<Reply> elements;  // Kind::array

  static Reply nil() { return Reply{}; }
  static Reply of_int(std::int64_t v) {
    Reply r;
    r.kind = Kind::integer;
    r.integer = v;
    return r;
  }
  static Reply status(std::string s) {
    Reply r;
    r.kind = Kind::status;
    r.str = std::move(s);
    return r;
  }
  static Reply error(std::string s) {
    Reply r;
    r.kind = Kind::error;
    r.str = std::move(s);
    return r;
  }
  static Reply bulk(std::string s) {
    Reply r;
    r.kind = Kind::bulk;
    r.str = std::move(s);
    return r;
  }
  static Reply array(std::vector<Reply> e) {
    Reply r;
    r.kind = Kind::array;
    r.elements = std::move(e);
    return r;
  }

  bool is_error() const { return kind == Kind::error; }
  bool is_nil() const { return kind == Kind::nil; }
  // True when this is an error reply whose text starts with `prefix` (e.g. "FENCED", "NOGROUP").
  bool is_error_with(const std::string& prefix) const {
    return kind == Kind::error && str.compare(0, prefix.size(), prefix) == 0;
  }

  friend bool operator==(const Reply&, const Reply&) = default;
};

// A readable one-line rendering, redis-cli style, for logs, test failures and the differential
// test.
std::string to_string(const Reply& reply);

}  // namespace seqby::redis
