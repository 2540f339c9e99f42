#include "differential_gen.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "seqby/broker/scripts.h"
#include "seqby/core/check.h"
#include "seqby/sim/rng.h"

namespace seqby::testing {
namespace {

using redis::Command;
using redis::Reply;

// Small conversion scripts: nil holes, ok/err tables, pcall error capture, fractions, globals.
struct CustomScript {
  const char* name;
  const char* source;
};
constexpr CustomScript kCustomScripts[] = {
    {"custom_holes", "return {1, 2, nil, 4}"},
    {"custom_ok_err",
     "if ARGV[1] == 'ok' then return {ok='DONE'} elseif ARGV[1] == 'err' then "
     "return {err='CUSTOM failure'} end return {ARGV[1], {ok='nested'}, {err='nested err'}}"},
    {"custom_pcall",
     "local r = redis.pcall('INCR', KEYS[1]) if type(r) == 'table' and r.err then "
     "return {'caught', r.err} end return {'value', r}"},
    {"custom_call_error", "return redis.call('INCR', KEYS[1])"},
    {"custom_numbers",
     "return {3.99, -2.5, 0.5, 1e3, tonumber(ARGV[1]) or 'nan', tostring(7/2), true, false, "
     "'tail'}"},
    {"custom_type", "local t = redis.call('TYPE', KEYS[1]) return {t, type(t), t.ok}"},
    {"custom_sorted_members", "local m = redis.call('SMEMBERS', KEYS[1]) table.sort(m) return m"},
    {"custom_hgetall", "return redis.call('HGETALL', KEYS[1])"},
    {"custom_number_arg", "return redis.call('INCRBY', KEYS[1], tonumber(ARGV[1]))"},
    {"custom_get", "return redis.call('GET', KEYS[1])"},
    {"custom_status", "return redis.status_reply(ARGV[1])"},
    {"custom_error", "return redis.error_reply(ARGV[1])"},
    {"custom_xrange", "return redis.call('XRANGE', KEYS[1], '-', '+')"},
    {"custom_wrong_args", "return redis.pcall('GET')"},
    {"custom_unknown", "return redis.pcall('NOSUCHCMD', KEYS[1])"},
    {"custom_runtime_error", "local x = nil return x.y"},
    {"custom_global", "x = 5 return x"},
    {"custom_misc",
     "return {2^53, -0.0, {}, {a=1}, redis.sha1hex(ARGV[1] or ''), #KEYS, #ARGV, 'x' .. 1.5}"},
    {"custom_table_error", "return redis.call('SET', KEYS[1], {})"},
    {"custom_pending",
     "local r = redis.pcall('XPENDING', KEYS[1], ARGV[1]) if r.err then return r.err end "
     "return {r[1], r[2], r[3], #(r[4] or {})}"},
};

constexpr const char* kStrings[] = {"s:1", "s:2", "s:3", "s:4"};
constexpr const char* kPlainStrings[] = {"s:2", "s:3", "s:4"};
constexpr const char* kSets[] = {"set:1", "set:2", "set:3"};
constexpr const char* kHashes[] = {"h:1", "h:2", "h:3"};
constexpr const char* kStreams[] = {"x:1", "x:2", "x:3"};
// Not s:1 and x:1: the lease and the stream the fenced scripts mostly use keep their type.
constexpr const char* kAnyKeys[] = {"s:2", "s:3", "set:1", "set:2",  "h:1",
                                    "h:2", "x:2", "x:3",   "missing"};
constexpr const char* kValues[] = {"o1:1", "o1:2", "o2:1", "o2:2", "1", "7", "-3", "x", "", "3.5"};
constexpr const char* kTokens[] = {"o1:1", "o1:2", "o1:3", "o2:1", "o2:2", "o2:3"};
constexpr const char* kGroups[] = {"g1", "g2"};

class Generator {
 public:
  Generator(std::uint64_t seed, const std::vector<DifferentialScript>& scripts)
      : rng_(seed), scripts_(scripts) {}

  std::vector<DifferentialStep> run() {
    const std::uint64_t length = rng_.uniform(20, 60);
    // Often the lease s:1 is held from the start (token o1:1), so the fenced scripts get past
    // the fence and reach the stream commands.
    if (rng_.chance(0.6)) {
      const std::size_t acquire = script_index("acquire");
      loaded_.push_back(acquire);
      add({"EVAL", scripts_[acquire].source, "2", "s:1", "s:4", "o1", "100000"});
    }
    if (rng_.chance(0.6)) {
      add({"XGROUP", "CREATE", "x:1", "g1", "0", "MKSTREAM"});
      for (std::uint64_t i = rng_.uniform(0, 3); i > 0; --i) {
        add({"XADD", "x:1", "1-" + std::to_string(i), "type", "t1", "data", one_of(kValues)});
      }
    }
    while (steps_.size() < length) step();
    return std::move(steps_);
  }

 private:
  template <std::size_t N>
  const char* one_of(const char* const (&items)[N]) {
    return items[rng_.below(N)];
  }
  // Mostly the first item, so that a sequence builds deep state on it (pending entries, held
  // leases), else any item.
  template <std::size_t N>
  const char* hot(const char* const (&items)[N]) {
    return rng_.chance(0.5) ? items[0] : one_of(items);
  }
  // A key of the kind asked for, or now and then any key (WRONGTYPE, missing keys).
  template <std::size_t N>
  const char* key(const char* const (&own)[N]) {
    return rng_.chance(0.1) ? one_of(kAnyKeys) : hot(own);
  }
  std::string num(std::uint64_t lo, std::uint64_t hi) {
    return std::to_string(rng_.uniform(lo, hi));
  }
  // An explicit stream id: mostly near the ids already added, sometimes odd forms.
  std::string id() {
    const std::uint64_t r = rng_.below(20);
    if (r == 0) return "0-0";
    if (r == 1) return std::to_string(rng_.uniform(1, 9));  // ms only: seq defaults
    return std::to_string(rng_.uniform(1, next_ms_)) + "-" + num(0, 1);
  }
  std::size_t script_index(std::string_view name) const {
    for (std::size_t i = 0; i < scripts_.size(); ++i) {
      if (scripts_[i].name == name) return i;
    }
    SEQBY_CHECK(false);
    return 0;
  }
  void add(Command command, Normalise normalise = Normalise::none) {
    steps_.push_back(DifferentialStep{std::move(command), normalise});
  }

  void step() {
    const std::uint64_t r = rng_.below(100);
    if (r < 10) return string_command();
    if (r < 16) return set_command();
    if (r < 22) return hash_command();
    if (r < 38) return stream_command();
    if (r < 62) return group_command();
    if (r < 65) return key_command();
    return script_command();
  }

  void string_command() {
    // Rarely the lease key s:1, so that a lease taken stays held for a while.
    const char* k = rng_.chance(0.9) ? key(kPlainStrings) : "s:1";
    switch (rng_.below(10)) {
      case 8:
        return add({"GETDEL", k});
      case 9:
        return add({"MGET", k, one_of(kAnyKeys), "s:1"});
      case 0:
      case 1: {
        Command c{"SET", k, one_of(kValues)};
        if (rng_.chance(0.3)) c.push_back(rng_.chance(0.5) ? "NX" : "XX");
        if (rng_.chance(0.5)) {
          c.push_back(rng_.chance(0.8) ? "PX" : "EX");
          c.push_back(rng_.chance(0.9) ? "100000" : one_of({"0", "-5", "abc"}));
        } else if (rng_.chance(0.2)) {
          c.push_back("KEEPTTL");
        }
        if (rng_.chance(0.15)) c.push_back("GET");
        return add(c);
      }
      case 2:
        return add({"GET", k});
      case 3:
        return add({rng_.chance(0.7) ? "INCR" : "DECR", k});
      case 4:
        return add({"INCRBY", k, one_of({"2", "-1", "1.5", "x"})});
      case 5:
        return add({"PTTL", k}, Normalise::ttl_sign);
      case 6:
        return add({"PEXPIRE", k, one_of({"100000", "200000", "abc"})});
      default:
        return add({"TTL", k}, Normalise::ttl_sign);
    }
  }

  void set_command() {
    const char* k = key(kSets);
    switch (rng_.below(5)) {
      case 0:
      case 1: {
        Command c{"SADD", k};
        for (std::uint64_t i = rng_.uniform(1, 3); i > 0; --i) c.push_back(one_of(kValues));
        return add(c);
      }
      case 2:
        return add({"SREM", k, one_of(kValues), one_of(kValues)});
      case 3:
        return add({"SISMEMBER", k, one_of(kValues)});
      default:
        return add({rng_.chance(0.5) ? "SMEMBERS" : "SCARD", k}, Normalise::sorted);
    }
  }

  void hash_command() {
    const char* k = key(kHashes);
    const char* fields[] = {"f1", "f2", "last_seq", "last_token"};
    switch (rng_.below(7)) {
      case 0:
      case 1: {
        Command c{"HSET", k, one_of(fields), one_of(kValues)};
        if (rng_.chance(0.3)) {
          c.push_back(one_of(fields));
          c.push_back(one_of(kValues));
        }
        return add(c);
      }
      case 2:
        if (rng_.chance(0.3)) return add({"HMGET", k, one_of(fields), one_of(fields)});
        return add({"HGET", k, one_of(fields)});
      case 3:
        return add({"HDEL", k, one_of(fields)});
      case 4:
        return add({"HGETALL", k});
      case 5:
        return add({"HINCRBY", k, one_of(fields), one_of({"1", "-2", "x"})});
      default:
        if (rng_.chance(0.5)) return add({"HLEN", k});
        return add({"HEXISTS", k, one_of(fields)});
    }
  }

  void stream_command() {
    const char* k = key(kStreams);
    switch (rng_.below(8)) {
      case 0:
      case 1:
      case 2: {
        Command c{"XADD", k};
        if (rng_.chance(0.1)) c.push_back("NOMKSTREAM");
        if (rng_.chance(0.1)) {
          c.push_back("MAXLEN");
          c.push_back(num(1, 4));
        } else if (rng_.chance(0.05)) {
          c.push_back("MINID");
          c.push_back(id());
        }
        if (rng_.chance(0.75)) {
          ++next_ms_;
          c.push_back(std::to_string(next_ms_) + (rng_.chance(0.2) ? "-*" : "-" + num(0, 2)));
        } else {
          c.push_back(id());
        }
        c.insert(c.end(), {"type", one_of({"t1", "t2"}), "data", one_of(kValues)});
        if (rng_.chance(0.05)) c.push_back("odd");
        return add(c);
      }
      case 3:
        return add({"XLEN", k});
      case 4: {
        Command c{rng_.chance(0.8) ? "XRANGE" : "XREVRANGE", k};
        const bool rev = c[0] == "XREVRANGE";
        c.push_back(rng_.chance(0.5) ? (rev ? "+" : "-") : (rng_.chance(0.2) ? "(" : "") + id());
        c.push_back(rng_.chance(0.5) ? (rev ? "-" : "+") : id());
        if (rng_.chance(0.3)) c.insert(c.end(), {"COUNT", num(0, 3)});
        return add(c);
      }
      case 5:
        return add({"XDEL", k, id()});
      case 6:
        if (rng_.chance(0.3)) return add({"XTRIM", k, "MINID", id()});
        return add({"XTRIM", k, "MAXLEN", num(0, 4)});
      default: {
        Command c{"XREAD"};
        if (rng_.chance(0.5)) c.insert(c.end(), {"COUNT", num(1, 3)});
        c.insert(c.end(), {"STREAMS", k, rng_.chance(0.2) ? "$" : (rng_.chance(0.5) ? "0" : id())});
        return add(c);
      }
    }
  }

  void group_command() {
    const char* k = key(kStreams);
    const char* g = hot(kGroups);
    const char* consumer = hot(kTokens);
    switch (rng_.below(14)) {
      case 0:
      case 1: {
        Command c{"XGROUP", "CREATE", k, g};
        c.push_back(rng_.chance(0.5) ? "0" : (rng_.chance(0.3) ? "$" : id()));
        if (rng_.chance(0.7)) c.push_back("MKSTREAM");
        if (rng_.chance(0.1)) c.insert(c.end(), {"ENTRIESREAD", num(0, 3)});
        return add(c);
      }
      case 2:
      case 3:
      case 4: {
        Command c{"XREADGROUP", "GROUP", g, consumer};
        if (rng_.chance(0.6)) c.insert(c.end(), {"COUNT", num(rng_.chance(0.05) ? 0 : 1, 3)});
        if (rng_.chance(0.08)) c.push_back("NOACK");
        c.push_back("STREAMS");
        const char* start = rng_.chance(0.65) ? ">" : (rng_.chance(0.7) ? "0" : nullptr);
        const std::string from = start != nullptr ? start : id();
        if (rng_.chance(0.15)) {
          c.insert(c.end(), {k, one_of(kStreams), from, ">"});
        } else {
          c.insert(c.end(), {k, from});
        }
        return add(c);
      }
      case 5: {
        Command c{"XACK", k, g, id()};
        if (rng_.chance(0.3)) c.push_back(id());
        return add(c);
      }
      case 6:
        return add({"XPENDING", k, g});
      case 7: {
        Command c{"XPENDING", k, g};
        if (rng_.chance(0.2)) c.insert(c.end(), {"IDLE", "0"});
        c.push_back(rng_.chance(0.6) ? "-" : id());
        c.push_back(rng_.chance(0.6) ? "+" : id());
        c.push_back(rng_.chance(0.05) ? std::string(one_of({"0", "-1"})) : num(1, 5));
        if (rng_.chance(0.4)) c.push_back(consumer);
        return add(c, Normalise::pending_idle);
      }
      case 8: {
        Command c{"XCLAIM", k, g, consumer, "0", id()};
        if (rng_.chance(0.4)) c.push_back(id());
        if (rng_.chance(0.4)) c.push_back("JUSTID");
        if (rng_.chance(0.1)) c.push_back("FORCE");
        if (rng_.chance(0.1)) c.insert(c.end(), {"RETRYCOUNT", num(0, 5)});
        return add(c);
      }
      case 9: {
        Command c{"XAUTOCLAIM", k, g, consumer, "0", rng_.chance(0.6) ? "0-0" : id()};
        if (rng_.chance(0.6)) c.insert(c.end(), {"COUNT", num(rng_.chance(0.05) ? 0 : 1, 3)});
        if (rng_.chance(0.5)) c.push_back("JUSTID");
        return add(c);
      }
      case 10:
        return add({"XGROUP", "DELCONSUMER", k, g, consumer});
      case 11: {
        switch (rng_.below(3)) {
          case 0:
            return add({"XGROUP", "CREATECONSUMER", k, g, consumer});
          case 1: {
            Command c{"XGROUP", "SETID", k, g,
                      rng_.chance(0.5) ? "0" : (rng_.chance(0.2) ? "$" : id())};
            if (rng_.chance(0.3)) c.insert(c.end(), {"ENTRIESREAD", num(0, 4)});
            return add(c);
          }
          default:
            return add({"XGROUP", "DESTROY", k, g});
        }
      }
      case 12:
        return add({"XINFO", "GROUPS", k});
      default:
        if (rng_.chance(0.5)) return add({"XINFO", "CONSUMERS", k, g}, Normalise::consumers_idle);
        return add({"XINFO", "STREAM", k}, Normalise::stream_info);
    }
  }

  void key_command() {
    switch (rng_.below(5)) {
      case 0:
        return add({"DEL", one_of(kAnyKeys)});
      case 1:
        return add({"EXISTS", one_of(kAnyKeys), one_of(kAnyKeys)});
      case 2:
        return add({"TYPE", one_of(kAnyKeys)});
      case 3:
        return add({"KEYS", "*"}, Normalise::sorted);
      default:
        return add({"DBSIZE"});
    }
  }

  // KEYS and ARGV for the script called `name`.
  void script_args(const std::string& name, Command* keys, Command* argv) {
    const char* lease = rng_.chance(0.8) ? "s:1" : key(kStrings);
    const char* fence = rng_.chance(0.85) ? "s:4" : key(kStrings);
    const char* stream = key(kStreams);
    const char* owner = rng_.chance(0.7) ? "o1" : "o2";
    const char* ttl = rng_.chance(0.95) ? "100000" : "abc";
    if (name == "acquire") {
      *keys = {lease, fence};
      *argv = {owner, ttl};
    } else if (name == "renew") {
      *keys = {lease};
      *argv = {hot(kTokens), ttl};
    } else if (name == "release" || name == "check_lease") {
      *keys = {lease};
      *argv = {name == "release" ? one_of(kTokens) : hot(kTokens)};
    } else if (name == "fenced_read") {
      *keys = {lease, stream};
      *argv = {hot(kTokens), hot(kGroups), rng_.chance(0.6) ? ">" : "0"};
    } else if (name == "fenced_next") {
      *keys = {lease, stream};
      *argv = {hot(kTokens), hot(kGroups), rng_.chance(0.6) ? ">" : "0",
               rng_.chance(0.6) ? id() : ""};
    } else if (name == "renew_many") {
      *argv = {ttl, "0", owner, hot(kGroups)};
      for (std::uint64_t i = rng_.uniform(1, 3); i > 0; --i) {
        keys->push_back(rng_.chance(0.7) ? lease : key(kStrings));
        argv->push_back(hot(kTokens));
      }
    } else if (name == "reindex") {
      // A stream, or a missing key or a string in its place; its index given (one server) or not.
      *keys = {lease, rng_.chance(0.7) ? stream : key(kStrings)};
      if (rng_.chance(0.6)) keys->push_back(key(kSets));
      *argv = {hot(kTokens), "1", one_of(kValues)};
    } else if (name == "acquire_many") {
      const std::uint64_t n = rng_.uniform(1, 3);
      for (std::uint64_t i = 0; i < n; ++i) keys->push_back(i == 0 ? lease : key(kStrings));
      for (std::uint64_t i = 0; i < n; ++i) keys->push_back(i == 0 ? fence : key(kStrings));
      // Half the calls look at each unit's stream: a stream, a missing key or a string.
      const bool streams = rng_.chance(0.5);
      for (std::uint64_t i = 0; streams && i < n; ++i) {
        keys->push_back(rng_.chance(0.7) ? key(kStreams) : key(kStrings));
      }
      *argv = {owner, ttl, num(1, 3), "0", hot(kGroups), streams ? "1" : "0"};
    } else if (name == "ring_wake") {
      // Its own stream: a `*` id differs between the two sides, so nothing else reads it.
      *keys = {"wake:1"};
      *argv = {ttl};
    } else if (name == "fenced_ack") {
      *keys = {lease, stream};
      *argv = {hot(kTokens), hot(kGroups), id()};
    } else if (name == "fenced_commit_next" || name == "unfenced_commit_next") {
      *keys = {lease, stream, key(kHashes), key(kHashes)};
      *argv = {hot(kTokens), hot(kGroups),   rng_.chance(0.6) ? ">" : "0",
               id(),         num(1, 3),      rng_.chance(0.2) ? id() : "",
               num(0, 4),    one_of(kValues)};
    } else if (name == "fenced_steps") {
      // One to three steps, some without a commit (seq ""), now and then a count that is not one.
      for (std::uint64_t i = rng_.uniform(1, 3); i > 0; --i) {
        const bool commit = rng_.chance(0.6);
        keys->insert(keys->end(), {rng_.chance(0.8) ? lease : key(kStrings), key(kStreams),
                                   key(kHashes), key(kHashes)});
        argv->insert(
            argv->end(),
            {hot(kTokens), hot(kGroups), rng_.chance(0.6) ? ">" : "0",
             commit || rng_.chance(0.5) ? id() : "", rng_.chance(0.05) ? "x" : num(1, 3),
             rng_.chance(0.2) ? id() : "", commit ? num(0, 4) : "", commit ? one_of(kValues) : ""});
      }
    } else if (name == "fenced_commit") {
      *keys = {lease, key(kHashes), key(kHashes)};
      *argv = {hot(kTokens), num(0, 4), one_of(kValues)};
    } else if (name == "reclaim") {
      *keys = {lease, stream};
      *argv = {hot(kTokens), hot(kGroups), num(1, 3), num(1, 3), rng_.chance(0.7) ? "0-0" : id()};
    } else if (name == "drop_stale_consumers") {
      *keys = {lease, stream};
      *argv = {hot(kTokens), hot(kGroups), num(1, 3)};
    } else if (name == "publish") {
      // Its own stream: a `*` id differs between the two sides, so nothing else reads it.
      *keys = {"pub:1", key(kSets)};
      *argv = {one_of({"k1", "k2"}), "t1", one_of(kValues)};
    } else if (name == "admin_dlq_replay") {
      // A DLQ of its own that nothing writes: the refusal (NOENTRY) is compared.
      *keys = {"pubdlq:1", "pub:1", key(kSets)};
      *argv = {one_of({"1-1", "0-1"}), one_of({"k1", "k2"})};
    } else if (name == "announce_member") {
      *keys = {key(kStrings), key(kSets)};
      *argv = {owner, ttl};
    } else if (name == "live_members") {
      *keys = {key(kSets)};
      for (std::uint64_t i = rng_.uniform(0, 3); i > 0; --i) {
        keys->push_back(key(kStrings));
        argv->push_back(one_of(kValues));
      }
    } else if (name == "custom_pending") {
      *keys = {stream};
      *argv = {one_of(kGroups)};
    } else if (name.rfind("custom_x", 0) == 0) {
      *keys = {stream};
    } else if (name == "custom_sorted_members") {
      *keys = {key(kSets)};
    } else if (name == "custom_hgetall") {
      *keys = {key(kHashes)};
    } else {
      *keys = {key(kStrings)};
      *argv = {rng_.chance(0.3) ? one_of({"ok", "err", "ERR bad", "x"}) : one_of(kValues)};
    }
  }

  void script_command() {
    // The engine's scripts come first in scripts_; they are run more often than the custom ones.
    const std::size_t engine_count = redis::embedded_scripts().size();
    const DifferentialScript& script =
        scripts_[rng_.below(rng_.chance(0.7) ? engine_count : scripts_.size())];
    const std::size_t index = static_cast<std::size_t>(&script - scripts_.data());
    if (rng_.chance(0.07)) {
      loaded_.push_back(index);
      return add({"SCRIPT", "LOAD", script.source});
    }
    if (rng_.chance(0.04)) return add({"SCRIPT", "EXISTS", script.sha, scripts_[0].sha});
    Command keys;
    Command argv;
    script_args(script.name, &keys, &argv);
    const bool seen = std::find(loaded_.begin(), loaded_.end(), index) != loaded_.end();
    const bool by_sha = rng_.chance(seen ? 0.6 : 0.08);
    if (!by_sha) loaded_.push_back(index);
    Command c{by_sha ? "EVALSHA" : "EVAL", by_sha ? script.sha : script.source,
              std::to_string(keys.size())};
    if (rng_.chance(0.005)) c[2] = std::to_string(keys.size() + argv.size() + 1);
    c.insert(c.end(), keys.begin(), keys.end());
    c.insert(c.end(), argv.begin(), argv.end());
    const bool new_id =
        script.name == "publish" || script.name == "ring_wake" || script.name == "admin_dlq_replay";
    add(c, new_id ? Normalise::id_shape : Normalise::none);
  }

  sim::Rng rng_;
  const std::vector<DifferentialScript>& scripts_;
  std::vector<DifferentialStep> steps_;
  std::vector<std::size_t> loaded_;  // scripts this sequence has run by EVAL or SCRIPT LOAD
  std::uint64_t next_ms_ = 1;
};

bool is_id(const std::string& s) {
  const std::size_t dash = s.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == s.size()) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char ch) { return ch == '-' || (ch >= '0' && ch <= '9'); });
}

}  // namespace

std::vector<DifferentialScript> differential_scripts() {
  std::vector<DifferentialScript> scripts;
  for (const auto& s : redis::embedded_scripts()) scripts.push_back({s.name, s.source, ""});
  for (const auto& s : kCustomScripts) scripts.push_back({s.name, s.source, ""});
  return scripts;
}

std::vector<DifferentialStep> generate_sequence(std::uint64_t seed,
                                                const std::vector<DifferentialScript>& scripts) {
  return Generator(seed, scripts).run();
}

Reply normalise_reply(const Reply& reply, Normalise normalise) {
  Reply out = reply;
  switch (normalise) {
    case Normalise::none:
      break;
    case Normalise::sorted:
      if (out.kind == Reply::Kind::array) {
        std::sort(out.elements.begin(), out.elements.end(),
                  [](const Reply& a, const Reply& b) { return a.str < b.str; });
      }
      break;
    case Normalise::ttl_sign:
      if (out.kind == Reply::Kind::integer && out.integer > 0) out.integer = 1;
      break;
    case Normalise::pending_idle:
      if (out.kind != Reply::Kind::array) break;
      for (Reply& entry : out.elements) {
        if (entry.kind == Reply::Kind::array && entry.elements.size() == 4) {
          entry.elements[2] = Reply::of_int(0);
        }
      }
      break;
    case Normalise::consumers_idle:
    case Normalise::stream_info: {
      const char* field = normalise == Normalise::stream_info ? "radix-tree-nodes" : "idle";
      auto zero_field = [field](Reply& map) {
        if (map.kind != Reply::Kind::array) return;
        for (std::size_t i = 0; i + 1 < map.elements.size(); i += 2) {
          if (map.elements[i].str == field) map.elements[i + 1] = Reply::of_int(0);
        }
      };
      if (normalise == Normalise::stream_info) {
        zero_field(out);
      } else if (out.kind == Reply::Kind::array) {
        for (Reply& consumer : out.elements) zero_field(consumer);
      }
      break;
    }
    case Normalise::id_shape:
      if (out.kind == Reply::Kind::bulk && is_id(out.str)) out.str = "ID";
      break;
  }
  return out;
}

std::string command_text(const Command& command) {
  std::string text;
  for (const std::string& arg : command) {
    if (!text.empty()) text += ' ';
    std::string quoted = "\"";
    for (char ch : arg) {
      if (ch == '"' || ch == '\\') quoted += '\\';
      quoted += ch == '\n' ? ' ' : ch;
    }
    text += quoted + "\"";
  }
  return text;
}

}  // namespace seqby::testing
