#include "seqby/core/result.h"

namespace seqby {

const char* errc_name(Errc code) {
  switch (code) {
    case Errc::timeout:
      return "timeout";
    case Errc::closed:
      return "closed";
    case Errc::fenced:
      return "fenced";
    case Errc::no_group:
      return "no_group";
    case Errc::protocol:
      return "protocol";
    case Errc::invalid:
      return "invalid";
    case Errc::not_found:
      return "not_found";
    case Errc::refused:
      return "refused";
    case Errc::unsupported:
      return "unsupported";
  }
  return "unknown";
}

}  // namespace seqby
