#include "seqby/broker/cluster_slot.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "seqby/core/check.h"

namespace seqby::redis {
namespace {

// Where a command's keys are, in Redis's COMMAND terms: from argument `first` to `last`
// (negative: counted from the end, -1 the last argument) every `step`-th one.
struct KeyRange {
  int first;
  int last;
  int step;
};

enum class Shape : std::uint8_t {
  range,        // KeyRange
  no_key,       // any master
  all_masters,  // every master
  numkeys,      // EVAL / EVALSHA / FCALL: numkeys at argument 2, the keys after it
  streams,      // XREAD / XREADGROUP: after STREAMS, the first half of the rest
  subcommand,   // XINFO / XGROUP / OBJECT / MEMORY: the key at 2 when there is one
  script,       // SCRIPT LOAD / FLUSH: every master; any other SCRIPT subcommand refused
  refused,      // state across commands or across nodes: never through a routing link
};

struct CommandSpec {
  std::string_view name;
  Shape shape;
  KeyRange keys;
  std::string_view why;  // Shape::refused
};

constexpr KeyRange kOne{1, 1, 1};
constexpr KeyRange kAll{1, -1, 1};
constexpr KeyRange kPairs{1, -1, 2};
constexpr KeyRange kTwo{1, 2, 1};
constexpr KeyRange kNone{0, 0, 0};

// Every command seqby sends (RedisBroker, the worker, admin, the journal readers, the tests'
// setup) and its neighbours. Sorted by name (checked once).
constexpr std::array kCommands = {
    CommandSpec{"ACL", Shape::no_key, kNone, ""},
    CommandSpec{"APPEND", Shape::range, kOne, ""},
    CommandSpec{"AUTH", Shape::refused, kNone,
                "AUTH is per connection: give the password in the link's configuration"},
    CommandSpec{"CLIENT", Shape::no_key, kNone, ""},
    CommandSpec{"CLUSTER", Shape::no_key, kNone, ""},
    CommandSpec{"COMMAND", Shape::no_key, kNone, ""},
    CommandSpec{"CONFIG", Shape::no_key, kNone, ""},
    CommandSpec{"COPY", Shape::range, kTwo, ""},
    CommandSpec{
        "DBSIZE", Shape::refused, kNone,
        "DBSIZE counts one node's keys: ask each master (ClusterLink::execute_on_each_master)"},
    CommandSpec{"DECR", Shape::range, kOne, ""},
    CommandSpec{"DECRBY", Shape::range, kOne, ""},
    CommandSpec{"DEL", Shape::range, kAll, ""},
    CommandSpec{"DISCARD", Shape::refused, kNone,
                "transactions span commands of one connection; a script does it in one"},
    CommandSpec{"DUMP", Shape::range, kOne, ""},
    CommandSpec{"ECHO", Shape::no_key, kNone, ""},
    CommandSpec{"EVAL", Shape::numkeys, kNone, ""},
    CommandSpec{"EVALSHA", Shape::numkeys, kNone, ""},
    CommandSpec{"EVALSHA_RO", Shape::numkeys, kNone, ""},
    CommandSpec{"EVAL_RO", Shape::numkeys, kNone, ""},
    CommandSpec{"EXEC", Shape::refused, kNone,
                "transactions span commands of one connection; a script does it in one"},
    CommandSpec{"EXISTS", Shape::range, kAll, ""},
    CommandSpec{"EXPIRE", Shape::range, kOne, ""},
    CommandSpec{"FCALL", Shape::numkeys, kNone, ""},
    CommandSpec{"FCALL_RO", Shape::numkeys, kNone, ""},
    CommandSpec{"FLUSHALL", Shape::all_masters, kNone, ""},
    CommandSpec{"FLUSHDB", Shape::all_masters, kNone, ""},
    CommandSpec{"GET", Shape::range, kOne, ""},
    CommandSpec{"GETDEL", Shape::range, kOne, ""},
    CommandSpec{"HDEL", Shape::range, kOne, ""},
    CommandSpec{"HELLO", Shape::refused, kNone, "HELLO is per connection (RESP2 only here)"},
    CommandSpec{"HEXISTS", Shape::range, kOne, ""},
    CommandSpec{"HGET", Shape::range, kOne, ""},
    CommandSpec{"HGETALL", Shape::range, kOne, ""},
    CommandSpec{"HINCRBY", Shape::range, kOne, ""},
    CommandSpec{"HKEYS", Shape::range, kOne, ""},
    CommandSpec{"HLEN", Shape::range, kOne, ""},
    CommandSpec{"HMGET", Shape::range, kOne, ""},
    CommandSpec{"HSET", Shape::range, kOne, ""},
    CommandSpec{"HSETNX", Shape::range, kOne, ""},
    CommandSpec{"HVALS", Shape::range, kOne, ""},
    CommandSpec{"INCR", Shape::range, kOne, ""},
    CommandSpec{"INCRBY", Shape::range, kOne, ""},
    CommandSpec{"INFO", Shape::no_key, kNone, ""},
    CommandSpec{"KEYS", Shape::all_masters, kNone, ""},
    CommandSpec{"LLEN", Shape::range, kOne, ""},
    CommandSpec{"LPUSH", Shape::range, kOne, ""},
    CommandSpec{"LRANGE", Shape::range, kOne, ""},
    CommandSpec{"MEMORY", Shape::subcommand, kNone, ""},
    CommandSpec{"MGET", Shape::range, kAll, ""},
    CommandSpec{"MSET", Shape::range, kPairs, ""},
    CommandSpec{"MULTI", Shape::refused, kNone,
                "transactions span commands of one connection; a script does it in one"},
    CommandSpec{"OBJECT", Shape::subcommand, kNone, ""},
    CommandSpec{"PERSIST", Shape::range, kOne, ""},
    CommandSpec{"PEXPIRE", Shape::range, kOne, ""},
    CommandSpec{"PING", Shape::no_key, kNone, ""},
    CommandSpec{"PSUBSCRIBE", Shape::refused, kNone, "subscriptions hold a connection"},
    CommandSpec{"PTTL", Shape::range, kOne, ""},
    CommandSpec{"PUBLISH", Shape::no_key, kNone, ""},
    CommandSpec{"RENAME", Shape::range, kTwo, ""},
    CommandSpec{"RESTORE", Shape::range, kOne, ""},
    CommandSpec{"ROLE", Shape::no_key, kNone, ""},
    CommandSpec{"RPUSH", Shape::range, kOne, ""},
    CommandSpec{"SADD", Shape::range, kOne, ""},
    CommandSpec{"SCAN", Shape::refused, kNone,
                "a SCAN cursor belongs to one node: scan each master "
                "(ClusterLink::execute_on_each_master)"},
    CommandSpec{"SCARD", Shape::range, kOne, ""},
    CommandSpec{"SCRIPT", Shape::script, kNone, ""},
    CommandSpec{"SELECT", Shape::refused, kNone, "a Redis Cluster has database 0 only"},
    CommandSpec{"SET", Shape::range, kOne, ""},
    CommandSpec{"SISMEMBER", Shape::range, kOne, ""},
    CommandSpec{"SMEMBERS", Shape::range, kOne, ""},
    CommandSpec{"SMISMEMBER", Shape::range, kOne, ""},
    CommandSpec{"SREM", Shape::range, kOne, ""},
    CommandSpec{"SSCAN", Shape::range, kOne, ""},
    CommandSpec{"STRLEN", Shape::range, kOne, ""},
    CommandSpec{"SUBSCRIBE", Shape::refused, kNone, "subscriptions hold a connection"},
    CommandSpec{"SUNION", Shape::range, kAll, ""},  // discovery: the index and its reaping set
    CommandSpec{"TIME", Shape::no_key, kNone, ""},
    CommandSpec{"TOUCH", Shape::range, kAll, ""},
    CommandSpec{"TTL", Shape::range, kOne, ""},
    CommandSpec{"TYPE", Shape::range, kOne, ""},
    CommandSpec{"UNLINK", Shape::range, kAll, ""},
    CommandSpec{"UNWATCH", Shape::refused, kNone,
                "transactions span commands of one connection; a script does it in one"},
    CommandSpec{"WAIT", Shape::refused, kNone,
                "WAIT counts the replicas that have the writes of one connection, and the link "
                "spreads commands over a connection per node"},
    CommandSpec{"WATCH", Shape::refused, kNone,
                "transactions span commands of one connection; a script does it in one"},
    CommandSpec{"XACK", Shape::range, kOne, ""},
    CommandSpec{"XADD", Shape::range, kOne, ""},
    CommandSpec{"XAUTOCLAIM", Shape::range, kOne, ""},
    CommandSpec{"XCLAIM", Shape::range, kOne, ""},
    CommandSpec{"XDEL", Shape::range, kOne, ""},
    CommandSpec{"XGROUP", Shape::subcommand, kNone, ""},
    CommandSpec{"XINFO", Shape::subcommand, kNone, ""},
    CommandSpec{"XLEN", Shape::range, kOne, ""},
    CommandSpec{"XPENDING", Shape::range, kOne, ""},
    CommandSpec{"XRANGE", Shape::range, kOne, ""},
    CommandSpec{"XREAD", Shape::streams, kNone, ""},
    CommandSpec{"XREADGROUP", Shape::streams, kNone, ""},
    CommandSpec{"XREVRANGE", Shape::range, kOne, ""},
    CommandSpec{"XSETID", Shape::range, kOne, ""},
    CommandSpec{"XTRIM", Shape::range, kOne, ""},
    CommandSpec{"ZADD", Shape::range, kOne, ""},
    CommandSpec{"ZCARD", Shape::range, kOne, ""},
    CommandSpec{"ZRANGE", Shape::range, kOne, ""},
    CommandSpec{"ZREM", Shape::range, kOne, ""},
    CommandSpec{"ZSCORE", Shape::range, kOne, ""},
};

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

const CommandSpec* find_spec(std::string_view name) {
  static const bool sorted =
      std::is_sorted(kCommands.begin(), kCommands.end(),
                     [](const CommandSpec& a, const CommandSpec& b) { return a.name < b.name; });
  SEQBY_CHECK(sorted);
  auto it =
      std::lower_bound(kCommands.begin(), kCommands.end(), name,
                       [](const CommandSpec& spec, std::string_view n) { return spec.name < n; });
  if (it == kCommands.end() || it->name != name) return nullptr;
  return &*it;
}

CommandRoute refuse(std::string text) {
  CommandRoute route;
  route.kind = CommandRoute::Kind::refused;
  route.refusal = std::move(text);
  return route;
}

CommandRoute malformed(const std::string& name, std::string_view what) {
  return refuse("ERR seqby cluster link: " + name + " " + std::string(what) +
                " (not sent: its keys cannot be found)");
}

// The keys of `command` for the shapes that name keys; false when the command is malformed.
bool keys_of(const Command& command, const CommandSpec& spec, std::vector<std::string>* keys) {
  const int argc = static_cast<int>(command.size());
  switch (spec.shape) {
    case Shape::range: {
      const int last = spec.keys.last < 0 ? argc + spec.keys.last : spec.keys.last;
      if (argc <= spec.keys.first || last < spec.keys.first) return false;
      for (int i = spec.keys.first; i <= last && i < argc; i += spec.keys.step) {
        keys->push_back(command[i]);
      }
      return true;
    }
    case Shape::numkeys: {
      if (argc < 3) return false;
      const std::string& text = command[2];
      if (text.empty() || text.size() > 9 ||
          !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return false;
      }
      const int numkeys = std::stoi(text);
      if (3 + numkeys > argc) return false;
      for (int i = 0; i < numkeys; ++i) keys->push_back(command[3 + i]);
      return true;
    }
    case Shape::streams: {
      int at = -1;
      for (int i = 1; i < argc; ++i) {
        if (upper(command[i]) == "STREAMS") {
          at = i;
          break;
        }
      }
      const int rest = at < 0 ? 0 : argc - at - 1;
      if (rest == 0 || rest % 2 != 0) return false;
      for (int i = 0; i < rest / 2; ++i) keys->push_back(command[at + 1 + i]);
      return true;
    }
    case Shape::subcommand:
      // XINFO STREAM|GROUPS|CONSUMERS key ..., XGROUP CREATE|SETID|DESTROY|... key ...,
      // OBJECT ENCODING key, MEMORY USAGE key; a bare HELP names none.
      if (argc >= 3) keys->push_back(command[2]);
      return argc >= 2;
    default:
      return true;
  }
}

}  // namespace

std::uint16_t key_slot(std::string_view key) {
  const std::uint16_t slot = key_hash_slot(key);
  SEQBY_CHECK(slot < kClusterSlotCount);
  return slot;
}

CommandRoute route_command(const Command& command) {
  if (command.empty()) return refuse("ERR seqby cluster link: empty command");
  const std::string name = upper(command.front());
  const CommandSpec* spec = find_spec(name);
  if (spec == nullptr) {
    return refuse("ERR seqby cluster link: no key positions known for " + name +
                  " (not sent; cluster_slot.cpp lists the commands it can route)");
  }
  if (spec->shape == Shape::refused) {
    return refuse("ERR seqby cluster link: " + name +
                  " is not sent over a cluster: " + std::string(spec->why));
  }
  if (spec->shape == Shape::no_key) return CommandRoute{};
  if (spec->shape == Shape::all_masters) {
    CommandRoute route;
    route.kind = CommandRoute::Kind::all_masters;
    return route;
  }
  if (spec->shape == Shape::script) {
    const std::string sub = command.size() >= 2 ? upper(command[1]) : "";
    if (sub != "LOAD" && sub != "FLUSH") {
      return refuse("ERR seqby cluster link: SCRIPT " + sub +
                    " is not sent over a cluster (LOAD and FLUSH go to every master)");
    }
    CommandRoute route;
    route.kind = CommandRoute::Kind::all_masters;
    return route;
  }
  CommandRoute route;
  if (!keys_of(command, *spec, &route.keys)) {
    return malformed(name, spec->shape == Shape::streams   ? "without STREAMS key... id..."
                           : spec->shape == Shape::numkeys ? "with a bad numkeys"
                                                           : "with too few arguments");
  }
  if (route.keys.empty()) {
    route.kind = CommandRoute::Kind::any_master;
    return route;
  }
  route.kind = CommandRoute::Kind::slot;
  route.slot = key_slot(route.keys.front());
  bool one_slot = true;
  for (const std::string& key : route.keys) one_slot = one_slot && key_slot(key) == route.slot;
  if (one_slot) return route;
  // Redis's own text first, so that a caller testing the prefix treats both alike.
  std::string text =
      "CROSSSLOT Keys in request don't hash to the same slot (refused by the "
      "seqby cluster link, not sent): " +
      name;
  constexpr std::size_t kKeysShownMax = 8;
  for (std::size_t i = 0; i < route.keys.size() && i < kKeysShownMax; ++i) {
    text += (i == 0 ? " " : ", ") + std::string("\"") + route.keys[i] + "\" slot " +
            std::to_string(key_slot(route.keys[i]));
  }
  if (route.keys.size() > kKeysShownMax) {
    text += " and " + std::to_string(route.keys.size() - kKeysShownMax) + " more keys";
  }
  CommandRoute refused = refuse(std::move(text));
  refused.keys = std::move(route.keys);
  return refused;
}

}  // namespace seqby::redis
