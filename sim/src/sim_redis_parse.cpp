// Argument parsing with Redis 7.0's exact rules (string2ll, strtod checks, stream ids, globs),
// so that SimRedis accepts and rejects exactly the arguments real Redis does.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "sim_redis_engine.h"

namespace seqby::sim {

std::string format_stream_id(StreamId id) {
  return std::to_string(id.ms) + "-" + std::to_string(id.seq);
}

Reply id_reply(StreamId id) { return Reply::bulk(format_stream_id(id)); }

Reply arity_error(std::string_view name) {
  return Reply::error("ERR wrong number of arguments for '" + std::string(name) + "' command");
}

namespace parse {

bool to_int64(std::string_view s, std::int64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  if (s.size() == 1 && s[0] == '0') {
    out = 0;
    return true;
  }
  std::size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return false;
  }
  if (s[i] < '1' || s[i] > '9') return false;
  std::uint64_t v = 0;
  for (; i < s.size(); i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    const std::uint64_t digit = static_cast<std::uint64_t>(s[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > static_cast<std::uint64_t>(INT64_MAX) + 1) return false;
    out = static_cast<std::int64_t>(0 - v);
  } else {
    if (v > static_cast<std::uint64_t>(INT64_MAX)) return false;
    out = static_cast<std::int64_t>(v);
  }
  return true;
}

bool to_uint64(std::string_view s, std::uint64_t& out) {
  std::int64_t ll = 0;
  if (to_int64(s, ll)) {
    if (ll < 0) return false;
    out = static_cast<std::uint64_t>(ll);
    return true;
  }
  const std::string copy(s);
  if (copy.size() != std::string(copy.c_str()).size()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtoull(copy.c_str(), &end, 10);
  if (errno == EINVAL || errno == ERANGE || copy.empty() || *end != '\0') return false;
  return true;
}

bool to_double(std::string_view s, double& out) {
  const std::string copy(s);
  if (copy.empty() || std::isspace(static_cast<unsigned char>(copy[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (static_cast<std::size_t>(end - copy.c_str()) != copy.size()) return false;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO)) {
    return false;
  }
  if (std::isnan(v)) return false;
  out = v;
  return true;
}

// std::tolower in the "C" locale (nothing here changes the locale), without its call.
static char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); i++) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) {
      return false;
    }
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string format_double(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  return std::string(buf, static_cast<std::size_t>(n));
}

namespace {

// A port of Redis's stringmatchlen (util.c), case-sensitive.
bool match(const char* p, std::size_t plen, const char* s, std::size_t slen, int depth) {
  if (depth > 1000) return false;  // Redis's nesting limit guards against pathological patterns
  while (plen && slen) {
    switch (p[0]) {
      case '*':
        while (plen > 1 && p[1] == '*') {
          p++;
          plen--;
        }
        if (plen == 1) return true;
        while (slen) {
          if (match(p + 1, plen - 1, s, slen, depth + 1)) return true;
          s++;
          slen--;
        }
        return false;
      case '?':
        s++;
        slen--;
        break;
      case '[': {
        p++;
        plen--;
        const bool negate = plen && p[0] == '^';
        if (negate) {
          p++;
          plen--;
        }
        bool matched = false;
        while (true) {
          if (plen == 0) break;
          if (p[0] == '\\' && plen >= 2) {
            p++;
            plen--;
            if (p[0] == s[0]) matched = true;
          } else if (p[0] == ']') {
            break;
          } else if (plen >= 3 && p[1] == '-') {
            int start = static_cast<unsigned char>(p[0]);
            int end = static_cast<unsigned char>(p[2]);
            const int c = static_cast<unsigned char>(s[0]);
            if (start > end) std::swap(start, end);
            p += 2;
            plen -= 2;
            if (c >= start && c <= end) matched = true;
          } else if (p[0] == s[0]) {
            matched = true;
          }
          p++;
          plen--;
        }
        if (negate) matched = !matched;
        if (!matched) return false;
        s++;
        slen--;
        break;
      }
      case '\\':
        if (plen >= 2) {
          p++;
          plen--;
        }
        [[fallthrough]];
      default:
        if (p[0] != s[0]) return false;
        s++;
        slen--;
        break;
    }
    if (plen == 0) break;  // a '[' class may have consumed the whole pattern
    p++;
    plen--;
    if (slen == 0) {
      while (plen && *p == '*') {
        p++;
        plen--;
      }
      break;
    }
  }
  return plen == 0 && slen == 0;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) {
  return match(pattern.data(), pattern.size(), text.data(), text.size(), 0);
}

bool stream_id(std::string_view s, StreamId& id, std::uint64_t missing_seq, bool strict,
               bool* seq_given) {
  if (s.size() > 127) return false;
  if (strict && s.size() == 1 && (s[0] == '-' || s[0] == '+')) return false;
  if (seq_given != nullptr) *seq_given = true;
  if (s == "-") {
    id = StreamId{0, 0};
    return true;
  }
  if (s == "+") {
    id = kMaxStreamId;
    return true;
  }
  // Redis copies into a C buffer: an embedded NUL ends the text.
  const std::size_t nul = s.find('\0');
  if (nul != std::string_view::npos) s = s.substr(0, nul);
  const std::size_t dash = s.find('-');
  std::uint64_t ms = 0;
  std::uint64_t seq = missing_seq;
  if (!to_uint64(s.substr(0, dash), ms)) return false;
  if (dash != std::string_view::npos) {
    const std::string_view rest = s.substr(dash + 1);
    if (seq_given != nullptr && rest == "*") {
      seq = 0;
      *seq_given = false;
    } else if (!to_uint64(rest, seq)) {
      return false;
    }
  }
  id = StreamId{ms, seq};
  return true;
}

bool interval_id(std::string_view s, StreamId& id, bool& exclusive, std::uint64_t missing_seq) {
  exclusive = s.size() > 1 && s[0] == '(';
  if (exclusive) return stream_id(s.substr(1), id, missing_seq, true, nullptr);
  return stream_id(s, id, missing_seq, false, nullptr);
}

bool incr_id(StreamId& id) {
  if (id.seq == UINT64_MAX) {
    if (id.ms == UINT64_MAX) {
      id = StreamId{0, 0};
      return false;
    }
    id.ms++;
    id.seq = 0;
  } else {
    id.seq++;
  }
  return true;
}

bool decr_id(StreamId& id) {
  if (id.seq == 0) {
    if (id.ms == 0) {
      id = kMaxStreamId;
      return false;
    }
    id.ms--;
    id.seq = UINT64_MAX;
  } else {
    id.seq--;
  }
  return true;
}

}  // namespace parse
}  // namespace seqby::sim
