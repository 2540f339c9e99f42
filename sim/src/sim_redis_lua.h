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
#include <vector>

#include "seqby/broker/reply.h"

struct lua_State;

namespace seqby::sim {

class SimRedisEngine;

// Lua's allocator: blocks up to kPooledSizeMax bytes come from per-size free lists carved out of
// large chunks (Lua allocates and frees many small strings and tables per script); bigger ones
// from malloc. Every chunk is freed with the pool, after lua_close. Single-threaded.
class LuaPool {
 public:
  LuaPool() = default;
  ~LuaPool() { reset(); }
  LuaPool(const LuaPool&) = delete;
  LuaPool& operator=(const LuaPool&) = delete;

  // lua_Alloc's contract: nsize 0 frees, else (re)allocates; nullptr when memory is exhausted.
  void* reallocate(void* block, std::size_t old_size, std::size_t new_size);
  // Frees every chunk. REQUIRES: no block is in use (the lua_State is closed).
  void reset();

 private:
  static constexpr std::size_t kGrainSize = 16;
  static constexpr std::size_t kPooledSizeMax = 512;
  static constexpr std::size_t kClassCount = kPooledSizeMax / kGrainSize;
  static constexpr std::size_t kChunkSize = std::size_t{64} << 10;

  static bool pooled(std::size_t size) { return size <= kPooledSizeMax; }
  static std::size_t class_of(std::size_t size) { return (size + kGrainSize - 1) / kGrainSize - 1; }
  void* take(std::size_t size);
  void give(void* block, std::size_t size);

  struct FreeBlock {
    FreeBlock* next;
  };
  FreeBlock* free_[kClassCount] = {};
  std::vector<void*> chunks_;
  char* cursor_ = nullptr;  // the unused rest of the newest chunk
  char* end_ = nullptr;
};

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
  LuaPool pool_;  // outlives lua_
  lua_State* lua_ = nullptr;
  // sha -> the compiled function's reference in the Lua registry (luaL_ref).
  std::map<std::string, int, std::less<>> scripts_;
  int handler_ref_ = 0;    // the error handler's registry reference
  int keys_name_ref_ = 0;  // the strings "KEYS" and "ARGV", kept interned
  int argv_name_ref_ = 0;
  std::uint64_t rand48_state_ = 0x1234ABCD330EULL;
  redis::Command call_argv_;
};

}  // namespace seqby::sim
