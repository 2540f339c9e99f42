// Reply helpers shared by the RedisBroker sources: shape checks that turn an unexpected reply
// into Errc::protocol naming the call. Internal to the adapter; not for engine code.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/reply.h"
#include "seqby/core/result.h"

namespace seqby::redis::detail {

Error shape_error(std::string_view call, const Reply& reply);
// Ok unless a transport error or an error reply (mapped by error_from_reply).
Status status_of(const Result<Reply>& reply);
// An array of bulk strings.
Result<std::vector<std::string>> strings_of(std::string_view call, const Result<Reply>& reply);

}  // namespace seqby::redis::detail
