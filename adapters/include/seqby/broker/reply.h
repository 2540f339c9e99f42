// A Redis reply, modelled on RESP2 as hiredis 0.14 returns it: nil, integer, status, error,
// bulk string, or array. The simulated Redis produces the same values, so a reply from either
// side compares with ==, and a differential test can compare them directly.
//
// Replies are read by type, redis-plus-plus `parse<T>` style: decode<T>(reply, what) checks the
// reply's shape before reading it, maps an error reply to its Errc (error_from_reply, the one
// place that does), and turns any other shape into Errc::protocol naming `what` and the shape
// it expected. Nothing outside this header and reply.cpp tests a Reply::Kind to read a reply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "seqby/core/result.h"

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

// Whether an error reply's text says the command did not run and may later: a Redis Cluster
// without a master for some slot (CLUSTERDOWN, answered by every node while a failover is under
// way), a slot's keys split by a migration (TRYAGAIN), a server loading its data (LOADING,
// MASTERDOWN). Sending such a command again never runs it twice.
bool not_run_yet(std::string_view error_text);

// A readable one-line rendering, redis-cli style, for logs, test failures and the differential
// test.
std::string to_string(const Reply& reply);

// Maps a Redis error reply to an Error: FENCED -> fenced, NOGROUP -> no_group, else protocol.
// REQUIRES: reply.is_error().
Error error_from_reply(const Reply& reply);

// Errc::protocol "unexpected reply to WHAT: REPLY (expected SHAPE)".
Error shape_error(std::string_view what, const Reply& reply, std::string_view expected);

// The flat [name, value, name, value, ...] array of HGETALL and XINFO (names bulk or status).
struct FieldMap {
  std::vector<std::pair<std::string, Reply>> fields;  // in reply order
  // The value of the first field called `name`, or nullptr.
  const Reply* find(std::string_view name) const;
  // The value of field `name` read as T (ReplyShape<T>); nullopt when absent or of another shape.
  template <typename T>
  std::optional<T> get(std::string_view name) const;
};

// Any reply but an error, kept as it is.
struct AnyReply {
  Reply reply;
};

// ReplyShape<T>::read(reply, &out) reads `reply` as a T when it has T's shape (false, leaving out
// unspecified, when not); ReplyShape<T>::name() says what that shape is, for the error message.
//   std::int64_t      integer                  std::uint64_t   integer >= 0
//   bool              integer 0 or 1           std::string     bulk or status
//   std::optional<T>  nil, or a T              std::vector<T>  array of T
//   std::tuple<T...>  array of exactly one element per T, each its T
//   FieldMap          array of name (bulk or status), value pairs
//   AnyReply          anything but an error
template <typename T>
struct ReplyShape;

template <>
struct ReplyShape<std::int64_t> {
  static bool read(const Reply& reply, std::int64_t* out);
  static std::string name() { return "integer"; }
};
template <>
struct ReplyShape<std::uint64_t> {
  static bool read(const Reply& reply, std::uint64_t* out);
  static std::string name() { return "integer >= 0"; }
};
template <>
struct ReplyShape<bool> {
  static bool read(const Reply& reply, bool* out);
  static std::string name() { return "integer 0 or 1"; }
};
template <>
struct ReplyShape<std::string> {
  static bool read(const Reply& reply, std::string* out);
  static std::string name() { return "string"; }
};
template <>
struct ReplyShape<FieldMap> {
  static bool read(const Reply& reply, FieldMap* out);
  static std::string name() { return "array of name, value pairs"; }
};
template <>
struct ReplyShape<AnyReply> {
  static bool read(const Reply& reply, AnyReply* out);
  static std::string name() { return "any reply"; }
};

template <typename T>
struct ReplyShape<std::optional<T>> {
  static bool read(const Reply& reply, std::optional<T>* out) {
    if (reply.is_nil()) {
      out->reset();
      return true;
    }
    return ReplyShape<T>::read(reply, &out->emplace());
  }
  static std::string name() { return "nil or " + ReplyShape<T>::name(); }
};

template <typename T>
struct ReplyShape<std::vector<T>> {
  static bool read(const Reply& reply, std::vector<T>* out) {
    if (reply.kind != Reply::Kind::array) return false;
    out->clear();
    out->reserve(reply.elements.size());
    for (const Reply& element : reply.elements) {
      if (!ReplyShape<T>::read(element, &out->emplace_back())) return false;
    }
    return true;
  }
  static std::string name() { return "array of " + ReplyShape<T>::name(); }
};

template <typename... T>
struct ReplyShape<std::tuple<T...>> {
  static bool read(const Reply& reply, std::tuple<T...>* out) {
    if (reply.kind != Reply::Kind::array || reply.elements.size() != sizeof...(T)) return false;
    return read_each(reply, out, std::index_sequence_for<T...>{});
  }
  static std::string name() {
    std::string out = "[";
    ((out += (out.size() > 1 ? ", " : "") + ReplyShape<T>::name()), ...);
    return out + "]";
  }

 private:
  template <std::size_t... I>
  static bool read_each(const Reply& reply, std::tuple<T...>* out, std::index_sequence<I...>) {
    return (ReplyShape<T>::read(reply.elements[I], &std::get<I>(*out)) && ...);
  }
};

// `reply` read as a T: its Error for an error reply, Errc::protocol naming `what` for a reply of
// another shape than T's.
template <typename T>
Result<T> decode(const Reply& reply, std::string_view what) {
  if (reply.is_error()) return error_from_reply(reply);
  T value{};
  if (!ReplyShape<T>::read(reply, &value)) return shape_error(what, reply, ReplyShape<T>::name());
  return value;
}

// The same for a transport result: a transport error is passed on as it is.
template <typename T>
Result<T> decode(const Result<Reply>& reply, std::string_view what) {
  if (!reply.ok()) return reply.error();
  return decode<T>(reply.value(), what);
}

template <typename T>
std::optional<T> FieldMap::get(std::string_view name) const {
  const Reply* value = find(name);
  T out{};
  if (value == nullptr || !ReplyShape<T>::read(*value, &out)) return std::nullopt;
  return out;
}

}  // namespace seqby::redis
