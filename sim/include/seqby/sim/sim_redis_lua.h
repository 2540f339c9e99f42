// The Lua 5.1 side of SimRedis: one lua_State for the engine's lifetime, a script cache of
// compiled functions keyed by SHA-1, and Redis 7.0's scripting environment (KEYS/ARGV, the redis
// table, reply conversions both ways, error tables with script and line, read-only globals, the
// fixed-seed math.random). It has no os, io, debug or package library, so a script cannot reach
// anything outside the simulated server. Redis's cjson, bit, struct and cmsgpack are absent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "seqby/redis/reply.h"

struct lua_State;

namespace seqby::sim {

class SimRedisEngine;

class LuaScripting {
 public:
  explicit LuaScripting(SimRedisEngine& engine);
  ~LuaScripting();
  LuaScripting(const LuaScripting&) = delete;
  LuaScripting& operator=(const LuaScripting&) = delete;

  // Compiles `body` unless its SHA-1 is cached; sets `sha`. On a compile error returns false
  // and sets `error` to Redis's "Error compiling script" reply.
  bool create_function(const std::string& body, std::string& sha, redis::Reply& error);
  // True when a script with this lowercase sha is cached.
  bool has(std::string_view sha) const { return scripts_.find(sha) != scripts_.end(); }
  // Runs a cached script with KEYS = keys and ARGV = args; returns the converted reply.
  // REQUIRES: has(sha).
  redis::Reply run(std::string_view sha, std::span<const std::string> keys,
                   std::span<const std::string> args);
  void flush();
  std::size_t script_count() const { return scripts_.size(); }

  // Redis's rand48 (used by math.random). Like Redis 7.0 it starts from rand48's default state
  // and is never reseeded between scripts (nor by SCRIPT FLUSH), only by math.randomseed.
  std::int32_t rand48_next();
  void rand48_seed(std::int32_t seed);

  SimRedisEngine& engine() { return engine_; }
  // The argument buffer redis.call reuses (for the bridge only).
  redis::Command& call_argv() { return call_argv_; }

 private:
  void open();
  void close();

  SimRedisEngine& engine_;
  lua_State* lua_ = nullptr;
  // sha -> the compiled function's reference in the Lua registry (luaL_ref).
  std::map<std::string, int, std::less<>> scripts_;
  int handler_ref_ = 0;  // the error handler's registry reference
  std::uint64_t rand48_state_ = 0x1234ABCD330EULL;
  redis::Command call_argv_;
};

}  // namespace seqby::sim
