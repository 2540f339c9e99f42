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

bool not_run_yet(std::string_view error_text) {
  for (std::string_view code : {"CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN"}) {
    if (error_text.starts_with(code)) return true;
  }
  return false;
}

Error error_from_reply(const Reply& reply) {
  SEQBY_CHECK(reply.is_error());
  if (reply.is_error_with("FENCED")) return make_error(Errc::fenced, reply.str);
  if (reply.is_error_with("NOGROUP")) return make_error(Errc::no_group, reply.str);
  return make_error(Errc::protocol, reply.str);
}

Error shape_error(std::string_view what, const Reply& reply, std::string_view expected) {
  return make_error(Errc::protocol, "unexpected reply to " + std::string(what) + ": " +
                                        to_string(reply) + " (expected " + std::string(expected) +
                                        ")");
}

const Reply* FieldMap::find(std::string_view name) const {
  for (const auto& [field, value] : fields) {
    if (field == name) return &value;
  }
  return nullptr;
}

bool ReplyShape<std::int64_t>::read(const Reply& reply, std::int64_t* out) {
  if (reply.kind != Reply::Kind::integer) return false;
  *out = reply.integer;
  return true;
}

bool ReplyShape<std::uint64_t>::read(const Reply& reply, std::uint64_t* out) {
  if (reply.kind != Reply::Kind::integer || reply.integer < 0) return false;
  *out = static_cast<std::uint64_t>(reply.integer);
  return true;
}

bool ReplyShape<bool>::read(const Reply& reply, bool* out) {
  if (reply.kind != Reply::Kind::integer || (reply.integer != 0 && reply.integer != 1)) {
    return false;
  }
  *out = reply.integer == 1;
  return true;
}

bool ReplyShape<std::string>::read(const Reply& reply, std::string* out) {
  if (reply.kind != Reply::Kind::bulk && reply.kind != Reply::Kind::status) return false;
  *out = reply.str;
  return true;
}

bool ReplyShape<FieldMap>::read(const Reply& reply, FieldMap* out) {
  if (reply.kind != Reply::Kind::array || reply.elements.size() % 2 != 0) return false;
  out->fields.clear();
  out->fields.reserve(reply.elements.size() / 2);
  for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    std::string name;
    if (!ReplyShape<std::string>::read(reply.elements[i], &name)) return false;
    out->fields.emplace_back(std::move(name), reply.elements[i + 1]);
  }
  return true;
}

bool ReplyShape<AnyReply>::read(const Reply& reply, AnyReply* out) {
  if (reply.is_error()) return false;
  out->reply = reply;
  return true;
}

}  // namespace seqby::redis
