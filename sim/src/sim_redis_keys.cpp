// Generic keyspace commands (PING, TYPE, DEL, KEYS, EXPIRE family, ...) and strings (GET, SET,
// INCR family), following Redis 7.0's argument checks, reply shapes and error texts.
#include <algorithm>
#include <climits>

#include "sim_redis_engine.h"

namespace seqby::sim {

namespace {

const char* type_name(const Value& v) {
  switch (v.data.index()) {
    case 0:
      return "string";
    case 1:
      return "set";
    case 2:
      return "hash";
    case 3:
      return "zset";
    default:
      return "stream";
  }
}

Reply expire_time_error(std::string_view command) {
  return Reply::error("ERR invalid expire time in '" + std::string(command) + "' command");
}

}  // namespace

Reply SimRedisEngine::cmd_ping(const Command& a) {
  if (a.size() > 2) return arity_error("ping");
  if (a.size() == 2) return Reply::bulk(a[1]);
  return Reply::status("PONG");
}

Reply SimRedisEngine::cmd_echo(const Command& a) { return Reply::bulk(a[1]); }

Reply SimRedisEngine::cmd_time(const Command&) {
  return Reply::array({Reply::bulk(std::to_string(now_ms_ / 1000)),
                       Reply::bulk(std::to_string((now_ms_ % 1000) * 1000))});
}

Reply SimRedisEngine::cmd_type(const Command& a) {
  const Value* v = lookup(a[1]);
  return Reply::status(v == nullptr ? "none" : type_name(*v));
}

Reply SimRedisEngine::cmd_del(const Command& a) {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < a.size(); i++) {
    if (lookup(a[i]) != nullptr) {
      remove_key(a[i]);
      n++;
    }
  }
  return Reply::of_int(n);
}

Reply SimRedisEngine::cmd_exists(const Command& a) {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < a.size(); i++) {
    if (lookup(a[i]) != nullptr) n++;
  }
  return Reply::of_int(n);
}

// Real Redis returns keys in hash-table order; this returns them sorted.
Reply SimRedisEngine::cmd_keys(const Command& a) {
  std::vector<std::string> matched;
  const bool all = a[1] == "*";
  for (const auto& [key, value] : keys_) {
    if (expired(value)) continue;
    if (all || parse::glob_match(a[1], key)) matched.push_back(key);
  }
  std::sort(matched.begin(), matched.end());
  std::vector<Reply> out;
  out.reserve(matched.size());
  for (auto& key : matched) out.push_back(Reply::bulk(std::move(key)));
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_dbsize(const Command&) {
  std::int64_t n = 0;
  for (const auto& [key, value] : keys_) {
    if (!expired(value)) n++;
  }
  return Reply::of_int(n);
}

Reply SimRedisEngine::cmd_flushall(const Command& a) {
  if (a.size() > 2 ||
      (a.size() == 2 && !parse::iequals(a[1], "sync") && !parse::iequals(a[1], "async"))) {
    return Reply::error(kErrSyntax);
  }
  keys_.clear();
  return Reply::status("OK");
}

Reply SimRedisEngine::cmd_expire(const Command& a) {
  return expire_generic(a, 1000, false, "expire");
}
Reply SimRedisEngine::cmd_pexpire(const Command& a) {
  return expire_generic(a, 1, false, "pexpire");
}
Reply SimRedisEngine::cmd_expireat(const Command& a) {
  return expire_generic(a, 1000, true, "expireat");
}
Reply SimRedisEngine::cmd_pexpireat(const Command& a) {
  return expire_generic(a, 1, true, "pexpireat");
}

Reply SimRedisEngine::expire_generic(const Command& a, std::int64_t unit_ms, bool absolute,
                                     const char* command) {
  bool nx = false, xx = false, gt = false, lt = false;
  for (std::size_t j = 3; j < a.size(); j++) {
    if (parse::iequals(a[j], "nx")) {
      nx = true;
    } else if (parse::iequals(a[j], "xx")) {
      xx = true;
    } else if (parse::iequals(a[j], "gt")) {
      gt = true;
    } else if (parse::iequals(a[j], "lt")) {
      lt = true;
    } else {
      return Reply::error("ERR Unsupported option " + a[j]);
    }
  }
  if ((nx && xx) || (nx && gt) || (nx && lt)) {
    return Reply::error("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt) return Reply::error("ERR GT and LT options at the same time are not compatible");
  std::int64_t when = 0;
  if (!parse::to_int64(a[2], when)) return Reply::error(kErrNotInteger);
  if (unit_ms == 1000) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) return expire_time_error(command);
    when *= 1000;
  }
  const auto now = static_cast<std::int64_t>(now_ms_);
  const std::int64_t base = absolute ? 0 : now;
  if (when > LLONG_MAX - base) return expire_time_error(command);
  when += base;
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  const std::int64_t current = v->expire_at_ms;
  if (nx && current != -1) return Reply::of_int(0);
  if (xx && current == -1) return Reply::of_int(0);
  if (gt && (when <= current || current == -1)) return Reply::of_int(0);
  if (lt && current != -1 && when >= current) return Reply::of_int(0);
  if (when <= now) {
    remove_key(a[1]);
  } else {
    v->expire_at_ms = when;
  }
  return Reply::of_int(1);
}

Reply SimRedisEngine::cmd_ttl(const Command& a) { return ttl_generic(a, false); }
Reply SimRedisEngine::cmd_pttl(const Command& a) { return ttl_generic(a, true); }

Reply SimRedisEngine::ttl_generic(const Command& a, bool ms) {
  const Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(-2);
  if (v->expire_at_ms == -1) return Reply::of_int(-1);
  std::int64_t ttl = v->expire_at_ms - static_cast<std::int64_t>(now_ms_);
  if (ttl < 0) ttl = 0;
  return Reply::of_int(ms ? ttl : (ttl + 500) / 1000);
}

Reply SimRedisEngine::cmd_persist(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr || v->expire_at_ms == -1) return Reply::of_int(0);
  v->expire_at_ms = -1;
  return Reply::of_int(1);
}

Reply SimRedisEngine::cmd_get(const Command& a) {
  const Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::nil();
  const auto* s = std::get_if<std::string>(&v->data);
  if (s == nullptr) return Reply::error(kErrWrongType);
  return Reply::bulk(*s);
}

Reply SimRedisEngine::cmd_mget(const Command& a) {
  std::vector<Reply> out;
  for (std::size_t i = 1; i < a.size(); i++) {
    const Value* v = lookup(a[i]);
    const auto* s = v == nullptr ? nullptr : std::get_if<std::string>(&v->data);
    out.push_back(s == nullptr ? Reply::nil() : Reply::bulk(*s));
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_getdel(const Command& a) {
  Reply reply = cmd_get(a);
  if (reply.kind == Reply::Kind::bulk) remove_key(a[1]);
  return reply;
}

Reply SimRedisEngine::cmd_set(const Command& a) {
  bool nx = false, xx = false, get = false, keepttl = false;
  bool ex = false, px = false, exat = false, pxat = false;
  const std::string* expire = nullptr;
  for (std::size_t j = 3; j < a.size(); j++) {
    const std::string& opt = a[j];
    const bool has_next = j + 1 < a.size();
    if (parse::iequals(opt, "nx") && !xx) {
      nx = true;
    } else if (parse::iequals(opt, "xx") && !nx) {
      xx = true;
    } else if (parse::iequals(opt, "get")) {
      get = true;
    } else if (parse::iequals(opt, "keepttl") && !ex && !exat && !px && !pxat) {
      keepttl = true;
    } else if (parse::iequals(opt, "ex") && !keepttl && !exat && !px && !pxat && has_next) {
      ex = true;
      expire = &a[++j];
    } else if (parse::iequals(opt, "px") && !keepttl && !ex && !exat && !pxat && has_next) {
      px = true;
      expire = &a[++j];
    } else if (parse::iequals(opt, "exat") && !keepttl && !ex && !px && !pxat && has_next) {
      exat = true;
      expire = &a[++j];
    } else if (parse::iequals(opt, "pxat") && !keepttl && !ex && !exat && !px && has_next) {
      pxat = true;
      expire = &a[++j];
    } else {
      return Reply::error(kErrSyntax);
    }
  }
  std::int64_t expire_at_ms = -1;
  if (expire != nullptr) {
    std::int64_t ms = 0;
    if (!parse::to_int64(*expire, ms)) return Reply::error(kErrNotInteger);
    const bool seconds = ex || exat;
    if (ms <= 0 || (seconds && ms > LLONG_MAX / 1000)) return expire_time_error("set");
    if (seconds) ms *= 1000;
    if (ex || px) {
      // Redis adds in signed arithmetic and reports an overflow as a bad expire time.
      const auto now = static_cast<std::int64_t>(now_ms_);
      if (ms > LLONG_MAX - now) return expire_time_error("set");
      ms += now;
    }
    expire_at_ms = ms;
  }
  Reply old = Reply::nil();
  Value* v = lookup(a[1]);
  if (get && v != nullptr) {
    const auto* s = std::get_if<std::string>(&v->data);
    if (s == nullptr) return Reply::error(kErrWrongType);
    old = Reply::bulk(*s);
  }
  const bool found = v != nullptr;
  if ((nx && found) || (xx && !found)) return get ? old : Reply::nil();
  const std::int64_t kept = found && keepttl ? v->expire_at_ms : -1;
  Value& nv = keys_[a[1]];
  nv.data = a[2];
  nv.expire_at_ms = expire != nullptr ? expire_at_ms : kept;
  if (nv.expire_at_ms != -1 && nv.expire_at_ms < static_cast<std::int64_t>(now_ms_) &&
      expire != nullptr && (exat || pxat)) {
    remove_key(a[1]);  // an absolute time in the past deletes the key at once
  }
  return get ? old : Reply::status("OK");
}

Reply SimRedisEngine::incr_generic(const std::string& key, std::int64_t by) {
  Value* v = lookup(key);
  std::int64_t value = 0;
  if (v != nullptr) {
    const auto* s = std::get_if<std::string>(&v->data);
    if (s == nullptr) return Reply::error(kErrWrongType);
    if (!parse::to_int64(*s, value)) return Reply::error(kErrNotInteger);
  }
  if ((by < 0 && value < 0 && by < LLONG_MIN - value) ||
      (by > 0 && value > 0 && by > LLONG_MAX - value)) {
    return Reply::error("ERR increment or decrement would overflow");
  }
  value += by;
  if (v == nullptr) {
    create<std::string>(key).data = std::to_string(value);
  } else {
    v->data = std::to_string(value);
  }
  return Reply::of_int(value);
}

Reply SimRedisEngine::cmd_incr(const Command& a) { return incr_generic(a[1], 1); }
Reply SimRedisEngine::cmd_decr(const Command& a) { return incr_generic(a[1], -1); }

Reply SimRedisEngine::cmd_incrby(const Command& a) {
  std::int64_t by = 0;
  if (!parse::to_int64(a[2], by)) return Reply::error(kErrNotInteger);
  return incr_generic(a[1], by);
}

Reply SimRedisEngine::cmd_decrby(const Command& a) {
  std::int64_t by = 0;
  if (!parse::to_int64(a[2], by)) return Reply::error(kErrNotInteger);
  if (by == LLONG_MIN) return Reply::error("ERR decrement would overflow");
  return incr_generic(a[1], -by);
}

}  // namespace seqby::sim
