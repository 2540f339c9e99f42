// Errors as values. An operating error (a timeout, a lost connection, a FENCED reply) is a normal
// outcome the caller must look at; programming errors are assertions (see check.h), never Results.
// Result<T> holds either a T or an Error; Status is Result<void>.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "seqby/core/check.h"

namespace seqby {

enum class Errc : std::uint8_t {
  timeout,      // no reply within the deadline; the command may or may not have run
  closed,       // the connection dropped; in-flight commands may or may not have run
  fenced,       // the lease is no longer ours (a FENCED reply): stop acting for this partition
  no_group,     // the consumer group does not exist (NOGROUP)
  protocol,     // a reply of an unexpected shape, or an unexpected error reply
  invalid,      // bad input (a key, a name, a field) named in the message
  not_found,    // the thing asked for does not exist
  refused,      // a precondition no longer holds (e.g. an id that is no longer the head)
  unsupported,  // the broker cannot do this (e.g. wait for new entries: then the engine polls)
};

const char* errc_name(Errc code);

struct Error {
  Errc code;
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & {
    SEQBY_CHECK(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    SEQBY_CHECK(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    SEQBY_CHECK(ok());
    return std::get<0>(std::move(v_));
  }
  const Error& error() const {
    SEQBY_CHECK(!ok());
    return std::get<1>(v_);
  }
  Errc code() const { return error().code; }

 private:
  std::variant<T, Error> v_;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    SEQBY_CHECK(!ok_);
    return error_;
  }
  Errc code() const { return error().code; }

 private:
  Error error_{Errc::protocol, {}};
  bool ok_ = true;
};

inline Error make_error(Errc code, std::string message) { return Error{code, std::move(message)}; }

}  // namespace seqby
