// EVAL, EVALSHA and SCRIPT LOAD/EXISTS/FLUSH (Redis 7.0 eval.c). A script runs to completion
// inside one client command: it sees the clock read once at its start (key expiry is frozen), and
// its writes stay when it fails later (no rollback).
#include <span>
#include <string>
#include <string_view>

#include "sim_redis_engine.h"
#include "sim_redis_lua.h"

namespace seqby::sim {

namespace {

Reply noscript() { return Reply::error("NOSCRIPT No matching script. Please use EVAL."); }

}  // namespace

Reply SimRedisEngine::cmd_eval(const Command& a) { return eval_generic(a, {}, &a[1]); }

Reply SimRedisEngine::cmd_evalsha(const Command& a) {
  constexpr std::size_t kShaSize = 40;
  if (a[1].size() != kShaSize) return noscript();
  char sha[kShaSize];
  for (std::size_t i = 0; i < kShaSize; i++) {
    const char c = a[1][i];
    sha[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return eval_generic(a, std::string_view(sha, kShaSize), nullptr);
}

Reply SimRedisEngine::eval_generic(const Command& a, std::string_view sha_arg,
                                   const std::string* body) {
  std::int64_t numkeys = 0;
  if (!parse::to_int64(a[2], numkeys)) return Reply::error(kErrNotInteger);
  if (numkeys > static_cast<std::int64_t>(a.size()) - 3) {
    return Reply::error("ERR Number of keys can't be greater than number of args");
  }
  if (numkeys < 0) return Reply::error("ERR Number of keys can't be negative");
  std::string created_sha;
  std::string_view sha = sha_arg;
  if (body != nullptr) {
    Reply error;
    if (!lua_->create_function(*body, created_sha, error)) return error;
    sha = created_sha;
  } else if (!lua_->has(sha)) {
    return noscript();
  }
  const std::span<const std::string> all(a);
  const auto key_count = static_cast<std::size_t>(numkeys);
  in_script_ = true;
  Reply reply = lua_->run(sha, all.subspan(3, key_count), all.subspan(3 + key_count));
  in_script_ = false;
  return reply;
}

Reply SimRedisEngine::cmd_script(const Command& a) {
  if (parse::iequals(a[1], "load")) {
    std::string sha;
    Reply error;
    if (!lua_->create_function(a[2], sha, error)) return error;
    return Reply::bulk(sha);
  }
  if (parse::iequals(a[1], "exists")) {
    std::vector<Reply> out;
    for (std::size_t i = 2; i < a.size(); i++) {
      out.push_back(Reply::of_int(lua_->has(parse::lower(a[i])) ? 1 : 0));
    }
    return Reply::array(std::move(out));
  }
  // FLUSH [ASYNC|SYNC]
  if (a.size() == 3 && !parse::iequals(a[2], "sync") && !parse::iequals(a[2], "async")) {
    return Reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  }
  if (a.size() > 3) return Reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  lua_->flush();
  for (std::set<std::string>& known : node_scripts_) known.clear();  // every cluster node's
  return Reply::status("OK");
}

}  // namespace seqby::sim
