// lua_script_closures: what a script call costs in Lua for the functions its libraries define.
// cmake/embed_scripts.cmake prepends adapters/lua/lib's functions to the scripts that call them,
// and an EVAL script's chunk runs whole on every call: each `local function` of those libraries
// makes a new closure (and its upvalues) every call, for the collector to sweep, whether the call
// needs it or not. Per hot script, two benchmarks on a plain Lua 5.1 state with a stub `redis`
// table (no server, no simulator; each call gets fresh KEYS and ARGV tables, as Redis gives it):
//   BM_AsSent/NAME        the embedded text as the server runs it (libraries defined every call);
//   BM_LibrariesOnce/NAME the same libraries defined once and the script's own body run as a
//                         function (what a library loaded once would cost, e.g. Redis 7 Functions).
// Their `scripts` rates, taken in one run, compare: the difference is the per-call price of the
// library definitions. Counter `functions` is how many the call defines. The stub answers each
// call the way the script's steady path expects (the lease held, the commit the next in order),
// and each benchmark checks the script's reply before it is timed. Reported, never asserted.
//   build/bench_lua_script_closures
#include <benchmark/benchmark.h>

#include <cstring>
#include <lua.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "seqby/broker/scripts.h"

namespace {

constexpr const char* kToken = "o1:7";

struct Case {
  const char* script;
  std::vector<const char*> keys;
  std::vector<const char*> args;
  const char* reply;  // the steady path's reply, as lua_tostring gives it ("table" for a table)
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // the ack of 1-0, the held entry 2-0 entered: the ack's count
      {"fenced_next", {"L:c:k", "c:k"}, {kToken, "g", ">", "1-0", "32", "2-0"}, "1"},
      // the commit of seq 7 (last_seq 6), then fenced_next's steady step: the ack's count
      {"fenced_commit_next",
       {"L:c:k", "c:k", "S:c:k", "E:c:k"},
       {kToken, "g", ">", "1-0", "32", "2-0", "7", "effect"},
       "1"},
      // the commit of seq 7 (last_seq 6): {'accepted', 7, token}
      {"fenced_commit", {"L:c:k", "S:c:k", "E:c:k"}, {kToken, "7", "effect"}, "table"},
      // an append and the index: the new entry's id
      {"publish", {"c:k", "c:__partitions__"}, {"k", "type", "{}"}, "9-0"},
  };
  return all;
}

// redis.call / redis.pcall: GET answers the lease (held), HGET the sink's last_seq (6), XADD an
// id; anything else (XACK, HSET, SADD) 1.
int stub_call(lua_State* L) {
  const char* verb = luaL_checkstring(L, 1);
  if (std::strcmp(verb, "GET") == 0) {
    lua_pushstring(L, kToken);
  } else if (std::strcmp(verb, "HGET") == 0) {
    lua_pushstring(L, "6");
  } else if (std::strcmp(verb, "XADD") == 0) {
    lua_pushstring(L, "9-0");
  } else {
    lua_pushnumber(L, 1);
  }
  return 1;
}

int stub_true(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int stub_error_reply(lua_State* L) {
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "err");
  return 1;
}

// A Lua state with the libraries Redis opens and the stub redis table; the script's function
// (one call's chunk, or the body of a library run once) is left in the registry as `ref`.
class ScriptState {
 public:
  ScriptState(const Case& c, bool libraries_once) : case_(c) {
    L_ = luaL_newstate();
    luaL_openlibs(L_);
    lua_newtable(L_);
    const luaL_Reg stubs[] = {{"call", stub_call},
                              {"pcall", stub_call},
                              {"acl_check_cmd", stub_true},
                              {"error_reply", stub_error_reply}};
    for (const luaL_Reg& stub : stubs) {
      lua_pushcfunction(L_, stub.func);
      lua_setfield(L_, -2, stub.name);
    }
    lua_setglobal(L_, "redis");
    const char* embedded = seqby::redis::script_source(c.script);
    if (embedded == nullptr) {
      error_ = std::string("no embedded script named ") + c.script;
      return;
    }
    const std::string source = embedded;
    // The script's own text starts with its header, "-- NAME:"; the libraries come before it.
    const std::string header = std::string("-- ") + c.script + ":";
    const std::size_t body_at = source.find(header);
    if (body_at == std::string::npos) {
      error_ = "no '" + header + "' in the embedded script";
      return;
    }
    functions_ = count_functions(std::string_view(source).substr(0, body_at));
    const std::string chunk = libraries_once ? source.substr(0, body_at) + "\nreturn function()\n" +
                                                   source.substr(body_at) + "\nend\n"
                                             : source;
    if (luaL_loadbuffer(L_, chunk.data(), chunk.size(), c.script) != 0 ||
        (libraries_once && lua_pcall(L_, 0, 1, 0) != 0)) {
      error_ = text_at(-1);
      return;
    }
    ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
    std::string reply;
    if (!call(&reply)) return;
    if (reply != c.reply)
      error_ = "the steady path answered '" + reply + "', not '" + c.reply + "'";
  }
  ~ScriptState() { lua_close(L_); }
  ScriptState(const ScriptState&) = delete;
  ScriptState& operator=(const ScriptState&) = delete;

  const std::string& error() const { return error_; }
  int functions() const { return functions_; }

  // One call: fresh KEYS and ARGV, the function run; its reply as text when `reply` is given.
  bool call(std::string* reply = nullptr) {
    set_list("KEYS", case_.keys);
    set_list("ARGV", case_.args);
    lua_rawgeti(L_, LUA_REGISTRYINDEX, ref_);
    if (lua_pcall(L_, 0, 1, 0) != 0) {
      error_ = text_at(-1);
      lua_pop(L_, 1);
      return false;
    }
    if (reply != nullptr) *reply = lua_istable(L_, -1) ? "table" : text_at(-1);
    lua_pop(L_, 1);
    return true;
  }

 private:
  // The value at `index` as text ("" when it is neither a string nor a number).
  std::string text_at(int index) {
    const char* text = lua_tostring(L_, index);
    return text == nullptr ? "" : text;
  }
  static int count_functions(std::string_view text) {
    int n = 0;
    for (std::size_t at = 0; (at = text.find("local function ", at)) != std::string_view::npos;
         ++at) {
      if (at == 0 || text[at - 1] == '\n') ++n;
    }
    return n;
  }
  void set_list(const char* name, const std::vector<const char*>& values) {
    lua_createtable(L_, static_cast<int>(values.size()), 0);
    for (std::size_t i = 0; i < values.size(); ++i) {
      lua_pushstring(L_, values[i]);
      lua_rawseti(L_, -2, static_cast<int>(i + 1));
    }
    lua_setglobal(L_, name);
  }

  const Case& case_;
  lua_State* L_ = nullptr;
  int ref_ = LUA_NOREF;
  int functions_ = 0;
  std::string error_;
};

void run(benchmark::State& state, const Case& c, bool libraries_once) {
  ScriptState script(c, libraries_once);
  if (!script.error().empty()) {
    state.SkipWithError(script.error().c_str());
    return;
  }
  for (auto _ : state) {
    if (!script.call()) {
      state.SkipWithError(script.error().c_str());
      return;
    }
  }
  state.counters["scripts"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["functions"] = libraries_once ? 0 : script.functions();
}

int register_all() {
  for (const Case& c : cases()) {
    benchmark::RegisterBenchmark((std::string("BM_AsSent/") + c.script).c_str(),
                                 [&c](benchmark::State& s) { run(s, c, false); });
    benchmark::RegisterBenchmark((std::string("BM_LibrariesOnce/") + c.script).c_str(),
                                 [&c](benchmark::State& s) { run(s, c, true); });
  }
  return 0;
}

const int kRegistered = register_all();

}  // namespace

BENCHMARK_MAIN();
