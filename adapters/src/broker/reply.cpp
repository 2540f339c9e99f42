#include "seqby/broker/reply.h"

namespace seqby::redis {

std::string to_string(const Reply& reply) {
  switch (reply.kind) {
    case Reply::Kind::nil:
      return "(nil)";
    case Reply::Kind::integer:
      return "(integer) " + std::to_string(reply.integer);
    case Reply::Kind::status:
      return reply.str;
    case Reply::Kind::error:
      return "(error) " + reply.str;
    case Reply::Kind::bulk:
      return "\"" + reply.str + "\"";
    case Reply::Kind::array: {
      std::string out = "[";
      for (std::size_t i = 0; i < reply.elements.size(); ++i) {
        if (i) out += ", ";
        out += to_string(reply.elements[i]);
      }
      return out + "]";
    }
  }
  return "?";
}

}  // namespace seqby::redis
