#include "seqby/core/metadata.h"

namespace seqby {

const char* handler_kind_name(HandlerKind kind) {
  switch (kind) {
    case HandlerKind::event_handler:
      return "event handler";
    case HandlerKind::command_handler:
      return "command handler";
    case HandlerKind::process_manager:
      return "process manager";
  }
  return "handler";
}

bool HandlerMeta::is_sequential() const {
  if (std::holds_alternative<std::string>(sequential_by)) return true;
  if (const bool* flag = std::get_if<bool>(&sequential_by)) return *flag;
  return false;
}

std::string describe_sequential_by(const SequentialBy& sequential_by) {
  if (const std::string* field = std::get_if<std::string>(&sequential_by)) {
    return "sequential_by=\"" + *field + "\"";
  }
  if (const bool* flag = std::get_if<bool>(&sequential_by)) {
    return *flag ? "sequential_by=true" : "sequential_by=false";
  }
  return "no sequential_by";
}

}  // namespace seqby
