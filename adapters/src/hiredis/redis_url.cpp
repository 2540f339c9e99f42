#include "seqby/hiredis/redis_url.h"

#include <optional>

namespace seqby::redis {
namespace {

constexpr std::string_view kScheme = "redis://";
constexpr std::uint32_t kDbMax = 2147483647;

// The URL as a message may show it: the password after "user:" replaced by "***".
std::string redact(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const std::size_t authority_begin = scheme_end + 3;
  std::size_t authority_end = url.find('/', authority_begin);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  const std::string_view authority = url.substr(authority_begin, authority_end - authority_begin);
  const std::size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  const std::size_t colon = authority.substr(0, at).find(':');
  if (colon == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, authority_begin + colon + 1));
  out += "***";
  out += url.substr(authority_begin + at);
  return out;
}

Error bad(std::string_view url, const std::string& what) {
  return make_error(Errc::invalid, "invalid redis URL \"" + redact(url) + "\": " + what);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = hex_value(text[i + 1]);
    const int lo = hex_value(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

template <typename T>
std::optional<T> parse_decimal(std::string_view text, T min, T max) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (value < min || value > max) return std::nullopt;
  return static_cast<T>(value);
}

}  // namespace

Result<RedisConfig> parse_redis_url(std::string_view url) {
  if (url.substr(0, 9) == "rediss://") {
    return bad(url, "TLS (rediss://) is not supported by hiredis 0.14");
  }
  if (url.substr(0, kScheme.size()) != kScheme) {
    return bad(url, "scheme must be \"redis://\"");
  }
  const std::string_view rest = url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return bad(url, "query and fragment are not supported");
  }
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  RedisConfig config;

  std::string_view hostport = authority;
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    hostport = authority.substr(at + 1);
    const std::size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      return bad(url, "user info must be \"user:password\" or \":password\"");
    }
    auto user = percent_decode(userinfo.substr(0, colon));
    if (!user) return bad(url, "user has a bad %-escape");
    auto password = percent_decode(userinfo.substr(colon + 1));
    if (!password) return bad(url, "password has a bad %-escape");
    if (password->empty()) return bad(url, "password is empty");
    config.user = std::move(*user);
    config.password = std::move(*password);
  }

  std::string_view port_text;
  bool has_port = false;
  if (!hostport.empty() && hostport.front() == '[') {
    const std::size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad(url, "host has an unclosed '['");
    config.host = std::string(hostport.substr(1, close - 1));
    const std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return bad(url, "host is followed by \"" + std::string(after) + "\"");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const std::size_t colon = hostport.find(':');
    config.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = hostport.substr(colon + 1);
      has_port = true;
    }
  }
  if (config.host.empty()) return bad(url, "host is empty");
  if (has_port) {
    auto port = parse_decimal<std::uint16_t>(port_text, 1, 65535);
    if (!port)
      return bad(url, "port \"" + std::string(port_text) + "\" is not a number in 1..65535");
    config.port = *port;
  }

  if (slash != std::string_view::npos) {
    const std::string_view db_text = rest.substr(slash + 1);
    if (!db_text.empty()) {
      auto db = parse_decimal<std::uint32_t>(db_text, 0, kDbMax);
      if (!db) {
        return bad(url, "db \"" + std::string(db_text) + "\" is not a number in 0.." +
                            std::to_string(kDbMax));
      }
      config.db = *db;
    }
  }
  return config;
}

std::string redacted_url(const RedisConfig& config) {
  std::string out(kScheme);
  if (!config.password.empty()) out += config.user + ":***@";
  if (config.host.find(':') != std::string::npos) {
    out += "[" + config.host + "]";
  } else {
    out += config.host;
  }
  out += ":" + std::to_string(config.port);
  if (config.db != 0) out += "/" + std::to_string(config.db);
  return out;
}

}  // namespace seqby::redis
