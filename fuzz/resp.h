// RESP2 bytes for the reply targets: replies read from bytes by hiredis's own reader (what a
// connection to Redis does with what the server sent), and a Reply written back as RESP2, so a
// target can check that a Reply survives the wire. Inputs that declare an array of more than
// kArrayElementsMax elements are skipped: hiredis 0.14 allocates the declared count up front
// (`*N` is N pointers before any element arrives), a limit of the library, not of seqby.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hiredis_common.h"
#include "seqby/broker/reply.h"

namespace seqby::fuzz {

inline constexpr long long kArrayElementsMax = 1 << 16;
inline constexpr std::size_t kRepliesMax = 64;

// Whether some "*N" in `bytes` declares more than kArrayElementsMax elements.
inline bool declares_huge_array(std::string_view bytes) {
  for (std::size_t at = bytes.find('*'); at != std::string_view::npos;
       at = bytes.find('*', at + 1)) {
    std::size_t digits = at + 1;
    long long count = 0;
    while (digits < bytes.size() && bytes[digits] >= '0' && bytes[digits] <= '9') {
      count = count * 10 + (bytes[digits] - '0');
      if (count > kArrayElementsMax) return true;
      ++digits;
    }
  }
  return false;
}

// What hiredis read from `bytes`: the replies converted (convert_reply), in order, and whether
// the reader stopped at a protocol error.
struct ReadReplies {
  std::vector<Result<redis::Reply>> replies;
  bool protocol_error = false;
};

inline ReadReplies read_resp(std::string_view bytes) {
  ReadReplies out;
  redisReader* reader = redisReaderCreate();
  if (redisReaderFeed(reader, bytes.data(), bytes.size()) != REDIS_OK) {
    out.protocol_error = true;
  }
  while (!out.protocol_error && out.replies.size() < kRepliesMax) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
      out.protocol_error = true;
      break;
    }
    if (raw == nullptr) break;  // the rest is an incomplete reply
    redis::hiredis::ReplyPtr reply(static_cast<redisReply*>(raw));
    out.replies.push_back(redis::hiredis::convert_reply(reply.get()));
  }
  redisReaderFree(reader);
  return out;
}

inline void append_resp(std::string& out, const redis::Reply& reply) {
  using Kind = redis::Reply::Kind;
  switch (reply.kind) {
    case Kind::nil:
      out += "$-1\r\n";
      return;
    case Kind::integer:
      out += ":" + std::to_string(reply.integer) + "\r\n";
      return;
    case Kind::status:
      out += "+" + reply.str + "\r\n";
      return;
    case Kind::error:
      out += "-" + reply.str + "\r\n";
      return;
    case Kind::bulk:
      out += "$" + std::to_string(reply.str.size()) + "\r\n" + reply.str + "\r\n";
      return;
    case Kind::array:
      out += "*" + std::to_string(reply.elements.size()) + "\r\n";
      for (const redis::Reply& element : reply.elements) append_resp(out, element);
      return;
  }
}

inline std::string to_resp(const redis::Reply& reply) {
  std::string out;
  append_resp(out, reply);
  return out;
}

}  // namespace seqby::fuzz
