// Shared by the RedisBroker sources. Internal to the adapter; not for engine code.
#pragma once

#include "seqby/core/result.h"

namespace seqby::redis::detail {

// The outcome of a decoded reply without its value.
template <typename T>
Status status_of(const Result<T>& result) {
  if (!result.ok()) return result.error();
  return Status::Ok();
}

}  // namespace seqby::redis::detail
