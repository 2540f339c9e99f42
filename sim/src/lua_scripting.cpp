// Redis 7.0's Lua scripting environment on Lua 5.1 (eval.c, script_lua.c): the redis table,
// reply conversion both ways, the error handler that adds script and line, read-only globals and
// the rand48-based math.random. No Lua error ever unwinds a C++ frame holding objects: every
// lua_error is raised from a function whose C++ locals are already destroyed.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lua.hpp>
#include <mutex>
#include <unordered_map>

#include "seqby/core/check.h"
#include "seqby/sim/sha1.h"
#include "sim_redis_engine.h"
#include "sim_redis_lua.h"

namespace seqby::sim {

namespace {

constexpr int kMaxNesting = 1000;

// The C functions that need the scripting object carry it as their first upvalue (a registry
// lookup by name would intern the name's string on every redis.call).
LuaScripting& scripting(lua_State* L) {
  return *static_cast<LuaScripting*>(lua_touserdata(L, lua_upvalueindex(1)));
}

void push_string(lua_State* L, const std::string& s) { lua_pushlstring(L, s.data(), s.size()); }

// luaPushErrorBuff: "-CODE msg" keeps its code, anything else gets "ERR "; a trailing newline goes.
void push_error_table(lua_State* L, const std::string& text) {
  std::string code = "ERR";
  std::string msg = text;
  if (!text.empty() && text[0] == '-') {
    const std::size_t space = text.find(' ');
    if (space == std::string::npos) {
      msg = text.substr(1);
    } else {
      code = text.substr(1, space - 1);
      msg = text.substr(space + 1);
    }
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.pop_back();
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.erase(0, 1);
  lua_newtable(L);
  push_string(L, code + " " + msg);
  lua_setfield(L, -2, "err");
}

void push_reply(lua_State* L, const Reply& r, int depth) {
  lua_checkstack(L, 4);
  switch (r.kind) {
    case Reply::Kind::integer:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      break;
    case Reply::Kind::bulk:
      push_string(L, r.str);
      break;
    case Reply::Kind::nil:
      lua_pushboolean(L, 0);
      break;
    case Reply::Kind::status:
      lua_newtable(L);
      push_string(L, r.str);
      lua_setfield(L, -2, "ok");
      break;
    case Reply::Kind::error:
      push_error_table(L, "-" + r.str);
      break;
    case Reply::Kind::array:
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      for (std::size_t i = 0; i < r.elements.size(); i++) {
        push_reply(L, r.elements[i], depth + 1);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      break;
  }
}

std::string mapchars(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

std::string field_string(lua_State* L, int index, const char* field, bool* present) {
  lua_getfield(L, index, field);
  std::string out;
  *present = lua_isstring(L, -1) != 0;
  if (*present) {
    std::size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    out.assign(s, len);
  }
  lua_pop(L, 1);
  return out;
}

// luaReplyToRedisReply for the value on top of the stack (left in place).
Reply to_reply(lua_State* L, int depth) {
  lua_checkstack(L, 4);
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      return Reply::bulk(std::string(s, len));
    }
    case LUA_TBOOLEAN:
      return lua_toboolean(L, -1) ? Reply::of_int(1) : Reply::nil();
    case LUA_TNUMBER: {
      const double d = lua_tonumber(L, -1);
      if (std::isnan(d)) return Reply::of_int(INT64_MIN);
      if (d >= 9223372036854775807.0) return Reply::of_int(INT64_MIN);
      if (d < -9223372036854775807.0) return Reply::of_int(INT64_MIN);
      return Reply::of_int(static_cast<std::int64_t>(d));
    }
    case LUA_TTABLE: {
      if (depth > kMaxNesting) return Reply::error("ERR reached lua stack limit");
      lua_pushstring(L, "err");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        std::size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        std::string msg(s, len);
        lua_pop(L, 1);
        return Reply::error(mapchars(msg));
      }
      lua_pop(L, 1);
      lua_pushstring(L, "ok");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        std::size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        std::string msg(s, len);
        lua_pop(L, 1);
        return Reply::status(mapchars(msg));
      }
      lua_pop(L, 1);
      std::vector<Reply> elements;
      // A hint only (the loop below stops at the first nil, as Redis does).
      elements.reserve(std::min<std::size_t>(lua_objlen(L, -1), 1024));
      for (int j = 1;; j++) {
        lua_pushnumber(L, j);
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TNIL) {
          lua_pop(L, 1);
          break;
        }
        elements.push_back(to_reply(L, depth + 1));
        lua_pop(L, 1);
      }
      return Reply::array(std::move(elements));
    }
    default:
      return Reply::nil();
  }
}

// The Lua arguments of a redis lib call as a command, in the scripting's argv buffer (its
// strings keep their capacity from call to call: a command never runs a script, so calls do not
// nest), popped from the stack. Pushes an error table and returns nullptr when there is none or
// one is neither a string nor a number.
Command* lua_command(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    push_error_table(L, "Please specify at least one argument for this redis lib call");
    return nullptr;
  }
  Command& argv = scripting(L).call_argv();
  argv.resize(static_cast<std::size_t>(argc));
  bool bad = false;
  for (int j = 1; j <= argc; j++) {
    std::string& arg = argv[static_cast<std::size_t>(j - 1)];
    if (lua_type(L, j) == LUA_TNUMBER) {
      const double d = static_cast<double>(lua_tonumber(L, j));
      char buf[64];
      if (d == std::trunc(d) && std::fabs(d) < 1e15 && !(d == 0 && std::signbit(d))) {
        // What "%.17g" prints for an integer this small, without the format parsing.
        const auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<long long>(d));
        arg.assign(buf, static_cast<std::size_t>(r.ptr - buf));
      } else {
        const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
        arg.assign(buf, static_cast<std::size_t>(n));
      }
    } else {
      std::size_t len = 0;
      const char* s = lua_tolstring(L, j, &len);
      if (s == nullptr) {
        bad = true;
        break;
      }
      arg.assign(s, len);
    }
  }
  lua_pop(L, argc);
  if (bad) {
    push_error_table(L, "Lua redis lib command arguments must be strings or integers");
    return nullptr;
  }
  return &argv;
}

// Runs the command of the Lua arguments and pushes its converted reply (or an error table).
// Returns true when the pushed value is an error table the caller must raise (for redis.call).
// All C++ objects die before this returns.
bool generic_call(lua_State* L, bool raise) {
  const Command* argv = lua_command(L);
  if (argv == nullptr) return raise;
  const Reply reply = scripting(L).engine().execute_from_script(*argv);
  push_reply(L, reply, 0);
  return raise && reply.is_error();
}

int redis_call(lua_State* L) {
  if (generic_call(L, true)) return lua_error(L);
  return 1;
}

int redis_pcall(lua_State* L) {
  generic_call(L, false);
  return 1;
}

int single_field_table(lua_State* L, const char* field) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error_table(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, field);
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int redis_status_reply(lua_State* L) { return single_field_table(L, "ok"); }

int redis_error_reply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    push_error_table(L, "wrong number or type of arguments");
    return 1;
  }
  std::size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  std::string text(s, len);
  if (text.empty() || text[0] != '-') text = "-" + text;
  push_error_table(L, text);
  return 1;
}

bool sha1hex_impl(lua_State* L) {
  if (lua_gettop(L) != 1) {
    push_error_table(L, "wrong number of arguments");
    return false;
  }
  std::size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  const std::string digest =
      sha1_hex(std::string_view(s == nullptr ? "" : s, s == nullptr ? 0 : len));
  push_string(L, digest);
  return true;
}

int redis_sha1hex(lua_State* L) {
  if (!sha1hex_impl(L)) return lua_error(L);
  return 1;
}

int redis_noop(lua_State*) { return 0; }

// redis.acl_check_cmd (Redis 7.0): whether the script's user may run a command, without running
// it. The simulated server has no ACL, so every user may run every command it knows; a command
// it does not know raises, as Redis's does.
int redis_acl_check_cmd(lua_State* L) {
  const Command* argv = lua_command(L);
  if (argv == nullptr) return lua_error(L);
  if (!scripting(L).engine().knows_command(*argv)) {
    push_error_table(L, "Invalid command passed to redis.acl_check_cmd()");
    return lua_error(L);
  }
  lua_pushboolean(L, 1);
  return 1;
}

int redis_true(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// __redis__err__handler: turns any error into {err=..., source=..., line=...}.
int error_handler(lua_State* L) {
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
  if (have && std::strcmp(ar.what, "C") == 0) {
    have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
  }
  if (!lua_istable(L, 1)) {
    lua_getfield(L, LUA_REGISTRYINDEX, "__seqby_tostring");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushstring(L, "ERR ");
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  lua_settop(L, 1);
  return 1;
}

int global_index(lua_State* L) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "S", &ar) && std::strcmp(ar.what, "C") != 0) {
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(L, 2) == nullptr ? "?" : lua_tostring(L, 2));
  }
  lua_rawget(L, 1);
  return 1;
}

int readonly_newindex(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

int math_random(lua_State* L) {
  LuaScripting& s = scripting(L);
  const lua_Number r =
      static_cast<lua_Number>(s.rand48_next() % INT32_MAX) / static_cast<lua_Number>(INT32_MAX);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      const int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      const int l = luaL_checkint(L, 1);
      const int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

// Redis 7.0's replacement for the global pcall: an error table raised by redis.call reaches
// the script as its plain "err" string.
int redis_lua_pcall(lua_State* L) {
  const int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

int math_randomseed(lua_State* L) {
  scripting(L).rand48_seed(static_cast<std::int32_t>(luaL_checkint(L, 1)));
  return 0;
}

void set_readonly(lua_State* L, int index, bool protect_globals) {
  lua_pushvalue(L, index);
  lua_newtable(L);
  lua_pushcfunction(L, readonly_newindex);
  lua_setfield(L, -2, "__newindex");
  if (protect_globals) {
    lua_pushcfunction(L, global_index);
    lua_setfield(L, -2, "__index");
  }
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
}

// What luaL_newstate installs: an unprotected error is reported (Lua then exits).
int panic(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "PANIC: unprotected error in call to Lua API (%s)\n",
               msg == nullptr ? "?" : msg);
  return 0;
}

void open_lib(lua_State* L, const char* name, lua_CFunction fn) {
  lua_pushcfunction(L, fn);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

}  // namespace

void* LuaPool::take(std::size_t size) {
  if (!pooled(size)) return std::malloc(size);
  const std::size_t c = class_of(size);
  if (free_[c] != nullptr) {
    FreeBlock* block = free_[c];
    free_[c] = block->next;
    return block;
  }
  const std::size_t block_size = (c + 1) * kGrainSize;
  if (static_cast<std::size_t>(end_ - cursor_) < block_size) {
    void* chunk = std::malloc(kChunkSize);
    if (chunk == nullptr) return nullptr;
    chunks_.push_back(chunk);
    cursor_ = static_cast<char*>(chunk);
    end_ = cursor_ + kChunkSize;
  }
  void* block = cursor_;
  cursor_ += block_size;
  return block;
}

void LuaPool::give(void* block, std::size_t size) {
  if (!pooled(size)) {
    std::free(block);
    return;
  }
  auto* b = static_cast<FreeBlock*>(block);
  const std::size_t c = class_of(size);
  b->next = free_[c];
  free_[c] = b;
}

void* LuaPool::reallocate(void* block, std::size_t old_size, std::size_t new_size) {
  if (new_size == 0) {
    if (block != nullptr) give(block, old_size);
    return nullptr;
  }
  if (block == nullptr) return take(new_size);
  if (pooled(old_size) && pooled(new_size) && class_of(old_size) == class_of(new_size)) {
    return block;
  }
  if (!pooled(old_size) && !pooled(new_size)) return std::realloc(block, new_size);
  void* moved = take(new_size);
  if (moved == nullptr) return nullptr;  // Lua keeps the old block
  std::memcpy(moved, block, old_size < new_size ? old_size : new_size);
  give(block, old_size);
  return moved;
}

void LuaPool::reset() {
  for (void* chunk : chunks_) std::free(chunk);
  chunks_.clear();
  for (FreeBlock*& head : free_) head = nullptr;
  cursor_ = nullptr;
  end_ = nullptr;
}

LuaScripting::LuaScripting(SimRedisEngine& engine) : engine_(engine) { open(); }

LuaScripting::~LuaScripting() { close(); }

void LuaScripting::close() {
  if (lua_ != nullptr) lua_close(lua_);
  lua_ = nullptr;
  pool_.reset();
  scripts_.clear();
}

void LuaScripting::open() {
  lua_State* L = lua_newstate(
      [](void* pool, void* block, std::size_t old_size, std::size_t new_size) {
        return static_cast<LuaPool*>(pool)->reallocate(block, old_size, new_size);
      },
      &pool_);
  SEQBY_CHECK(L != nullptr);
  lua_atpanic(L, panic);
  SEQBY_CHECK(L != nullptr);
  lua_ = L;
  // A collection cycle starts once the heap is ten times what the last one left (Lua's default:
  // twice). The live set is the compiled scripts and the libraries, the same from call to call,
  // and the default marked it all again every few dozen scripts. No reply depends on when Lua
  // collects (the scripts keep no weak tables or finalizers). A pause of 5000 saved no more
  // instructions and held more memory (a peak of 36 MB against 31 MB over seeds 0..99).
  lua_gc(L, LUA_GCSETPAUSE, 1000);
  open_lib(L, "", luaopen_base);
  open_lib(L, LUA_TABLIBNAME, luaopen_table);
  open_lib(L, LUA_STRLIBNAME, luaopen_string);
  open_lib(L, LUA_MATHLIBNAME, luaopen_math);

  lua_getglobal(L, "tostring");
  lua_setfield(L, LUA_REGISTRYINDEX, "__seqby_tostring");
  lua_pushcfunction(L, error_handler);
  handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushliteral(L, "KEYS");
  keys_name_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushliteral(L, "ARGV");
  argv_name_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);

  // Redis 7.0's allow list of base functions; everything else in the base library goes.
  static const char* const kRemoved[] = {"print",   "dofile", "loadfile", "setfenv",
                                         "require", "module", "newproxy", "package"};
  for (const char* name : kRemoved) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }

  lua_pushcfunction(L, redis_lua_pcall);
  lua_setglobal(L, "pcall");

  lua_getglobal(L, "math");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, math_random, 1);
  lua_setfield(L, -2, "random");
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, math_randomseed, 1);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  lua_newtable(L);
  const luaL_Reg redis_fns[] = {{"call", redis_call},
                                {"pcall", redis_pcall},
                                {"error_reply", redis_error_reply},
                                {"status_reply", redis_status_reply},
                                {"sha1hex", redis_sha1hex},
                                {"acl_check_cmd", redis_acl_check_cmd},
                                {"log", redis_noop},
                                {"setresp", redis_noop},
                                {"set_repl", redis_noop},
                                {"replicate_commands", redis_true},
                                {"breakpoint", redis_noop},
                                {"debug", redis_noop},
                                {nullptr, nullptr}};
  for (const luaL_Reg* r = redis_fns; r->name != nullptr; r++) {
    lua_pushlightuserdata(L, this);
    lua_pushcclosure(L, r->func, 1);
    lua_setfield(L, -2, r->name);
  }
  const std::pair<const char*, int> constants[] = {
      {"LOG_DEBUG", 0},   {"LOG_VERBOSE", 1},  {"LOG_NOTICE", 2},
      {"LOG_WARNING", 3}, {"REPL_NONE", 0},    {"REPL_AOF", 1},
      {"REPL_SLAVE", 2},  {"REPL_REPLICA", 2}, {"REPL_ALL", 3}};
  for (const auto& [name, value] : constants) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, "redis");

  for (const char* lib : {"redis", "string", "math", "table", "coroutine"}) {
    lua_getglobal(L, lib);
    if (lua_istable(L, -1)) set_readonly(L, -1, false);
    lua_pop(L, 1);
  }
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  set_readonly(L, -1, true);
  lua_pop(L, 1);
}

void LuaScripting::flush() {
  close();
  open();
}

void LuaScripting::rand48_seed(std::int32_t seed) {
  const auto s = static_cast<std::uint32_t>(seed);
  rand48_state_ = (static_cast<std::uint64_t>(s) << 16) | 0x330E;
}

std::int32_t LuaScripting::rand48_next() {
  rand48_state_ = (0x5DEECE66DULL * rand48_state_ + 0xB) & ((1ULL << 48) - 1);
  return static_cast<std::int32_t>(rand48_state_ >> 17);
}

namespace {

constexpr std::size_t kCompiledMemoSizeMax = 512;

// The compiled form (lua_dump) of every script loaded so far, by digest, process-wide: each
// simulated server (every world, every restart, every SCRIPT FLUSH) loads the same embedded
// scripts, and undumping Lua 5.1 bytecode costs a fraction of parsing the text again. The
// function is the same either way: the dump keeps the source name and line information, so
// error messages name the same lines. Only a script that compiled is remembered.
class CompiledMemo {
 public:
  static CompiledMemo& instance() {
    static CompiledMemo memo;
    return memo;
  }
  // Pushes the function compiled from `body` (whose digest is `sha`); false with the compiler's
  // message pushed instead, as luaL_loadbuffer does.
  bool load(lua_State* L, const std::string& sha, const std::string& body) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (auto known = by_sha_.find(sha); known != by_sha_.end()) {
        const std::string& code = known->second;
        if (luaL_loadbuffer(L, code.data(), code.size(), "@user_script") == 0) return true;
        lua_pop(L, 1);  // undumping failed (out of memory): compile the text as before
      }
    }
    if (luaL_loadbuffer(L, body.data(), body.size(), "@user_script") != 0) return false;
    std::string code;
    const auto append = [](lua_State*, const void* p, std::size_t size, void* out) {
      static_cast<std::string*>(out)->append(static_cast<const char*>(p), size);
      return 0;
    };
    if (lua_dump(L, append, &code) != 0) return true;  // not remembered; loaded all the same
    const std::lock_guard<std::mutex> lock(mutex_);
    if (by_sha_.size() < kCompiledMemoSizeMax) by_sha_.emplace(sha, std::move(code));
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> by_sha_;
};

}  // namespace

bool LuaScripting::create_function(const std::string& body, std::string& sha, Reply& error) {
  sha = sha1_hex_memo(body);
  if (has(sha)) return true;
  lua_State* L = lua_;
  if (!CompiledMemo::instance().load(L, sha, body)) {
    std::size_t len = 0;
    const char* msg = lua_tolstring(L, -1, &len);
    error = Reply::error(mapchars("ERR Error compiling script (new function): " +
                                  std::string(msg == nullptr ? "" : msg, len)));
    lua_pop(L, 1);
    return false;
  }
  scripts_.emplace(sha, luaL_ref(L, LUA_REGISTRYINDEX));
  return true;
}

Reply LuaScripting::run(std::string_view sha, std::span<const std::string> keys,
                        std::span<const std::string> args) {
  const auto script = scripts_.find(sha);
  SEQBY_CHECK(script != scripts_.end());
  lua_State* L = lua_;
  const int base = lua_gettop(L);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  for (const auto* list : {&keys, &args}) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, list == &keys ? keys_name_ref_ : argv_name_ref_);
    lua_createtable(L, static_cast<int>(list->size()), 0);
    for (std::size_t i = 0; i < list->size(); i++) {
      push_string(L, (*list)[i]);
      lua_rawseti(L, -2, static_cast<int>(i + 1));
    }
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, script->second);
  const int status = lua_pcall(L, 0, 1, base + 1);
  Reply reply;
  if (status != 0) {
    if (!lua_istable(L, -1)) {
      const char* msg = lua_tostring(L, -1);
      reply = Reply::error(mapchars("ERR Error running script f_" + std::string(sha) + ", " +
                                    std::string(msg == nullptr ? "execution failure" : msg)));
    } else {
      bool has_msg = false, has_source = false, has_line = false;
      std::string msg = field_string(L, -1, "err", &has_msg);
      const std::string source = field_string(L, -1, "source", &has_source);
      const std::string line = field_string(L, -1, "line", &has_line);
      if (!has_msg) msg = "ERR execution failure";
      if (has_source && has_line) {
        msg += " script: " + std::string(sha) + ", on " + source + ":" + line + ".";
      }
      reply = Reply::error(mapchars(msg));
    }
  } else {
    reply = to_reply(L, 0);
  }
  lua_settop(L, base);
  return reply;
}

}  // namespace seqby::sim
