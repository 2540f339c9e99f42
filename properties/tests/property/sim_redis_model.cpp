// A rapidcheck stateful test of SimRedis against a plain model: strings with TTLs on a manual
// server clock (which jumps forward), a stream with one consumer group, its pending entries with
// delivery times and counts, XAUTOCLAIM's cursor and scan limit, DELCONSUMER, and a small fenced
// Lua script. Each command predicts the exact reply from the model state before it runs.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "seqby/sim/sim_redis.h"

namespace seqby::redis {
inline void showValue(const Reply& reply, std::ostream& os) { os << to_string(reply); }
}  // namespace seqby::redis

namespace seqby::sim {
namespace {

using redis::Reply;

struct Id {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;
  friend auto operator<=>(const Id&, const Id&) = default;
  std::string str() const { return std::to_string(ms) + "-" + std::to_string(seq); }
};

struct Nack {
  std::string consumer;
  std::uint64_t time_ms = 0;
  std::uint64_t count = 0;
};

struct StringValue {
  std::string value;
  std::int64_t expire_at_ms = -1;
};

struct Model {
  std::uint64_t now_ms = 1000;
  std::map<std::string, StringValue> strings;
  std::map<Id, std::string> entries;
  Id last_id;
  Id last_delivered;
  std::map<Id, Nack> pel;
  std::set<std::string> consumers;
  int next_value = 0;

  std::optional<StringValue> live(const std::string& key) const {
    auto it = strings.find(key);
    if (it == strings.end()) return std::nullopt;
    if (it->second.expire_at_ms >= 0 &&
        static_cast<std::int64_t>(now_ms) > it->second.expire_at_ms) {
      return std::nullopt;
    }
    return it->second;
  }
};

class ManualClock : public Clock {
 public:
  std::uint64_t now_ms() override { return now_ms_; }
  std::uint64_t now_ms_ = 1000;
};

struct Sut {
  ManualClock clock;
  SimRedis redis{clock};
};

using Command = rc::state::Command<Model, Sut>;

Reply entry(Id id, const std::string& value) {
  return Reply::array(
      {Reply::bulk(id.str()), Reply::array({Reply::bulk("n"), Reply::bulk(value)})});
}

std::string gen_key() { return *rc::gen::element<std::string>("a", "b", "lease"); }
std::string gen_owner() { return *rc::gen::element<std::string>("o:1", "o:2"); }
std::string gen_consumer() { return *rc::gen::element<std::string>("c1", "c2", "c3"); }

// An id worth naming: mostly one that is (or was) in the stream, sometimes an arbitrary one.
Id gen_id(const Model& m) {
  std::vector<Id> known;
  for (const auto& [id, v] : m.entries) known.push_back(id);
  for (const auto& [id, n] : m.pel) known.push_back(id);
  if (known.empty() || *rc::gen::inRange(0, 5) == 0) {
    return Id{*rc::gen::inRange<std::uint64_t>(0, 5000), *rc::gen::inRange<std::uint64_t>(0, 3)};
  }
  return known[*rc::gen::inRange<std::size_t>(0, known.size())];
}

void check(Sut& s, const redis::Command& command, const Reply& expected) {
  const Reply actual = s.redis.execute(command);
  RC_ASSERT(actual == expected);
}

struct SetPx : Command {
  std::string key = gen_key();
  std::string value = gen_owner();
  std::int64_t ttl_ms = *rc::gen::inRange<std::int64_t>(1, 3000);
  void apply(Model& m) const override {
    m.strings[key] = {value, static_cast<std::int64_t>(m.now_ms) + ttl_ms};
  }
  void run(const Model&, Sut& s) const override {
    check(s, {"SET", key, value, "PX", std::to_string(ttl_ms)}, Reply::status("OK"));
  }
  void show(std::ostream& os) const override {
    os << "SET " << key << " " << value << " PX " << ttl_ms;
  }
};

struct Get : Command {
  std::string key = gen_key();
  void run(const Model& m, Sut& s) const override {
    const auto v = m.live(key);
    check(s, {"GET", key}, v ? Reply::bulk(v->value) : Reply::nil());
  }
  void show(std::ostream& os) const override { os << "GET " << key; }
};

struct Pttl : Command {
  std::string key = gen_key();
  void run(const Model& m, Sut& s) const override {
    const auto v = m.live(key);
    std::int64_t expected = -2;
    if (v)
      expected = v->expire_at_ms < 0 ? -1 : v->expire_at_ms - static_cast<std::int64_t>(m.now_ms);
    check(s, {"PTTL", key}, Reply::of_int(expected));
  }
  void show(std::ostream& os) const override { os << "PTTL " << key; }
};

struct Advance : Command {
  std::uint64_t ms = *rc::gen::element<std::uint64_t>(0, 1, 10, 100, 999, 1000, 2500);
  void apply(Model& m) const override { m.now_ms += ms; }
  void run(const Model&, Sut& s) const override { s.clock.now_ms_ += ms; }
  void show(std::ostream& os) const override { os << "advance clock " << ms << " ms"; }
};

struct Xadd : Command {
  static Id next_id(const Model& m) {
    if (m.now_ms > m.last_id.ms) return Id{m.now_ms, 0};
    return Id{m.last_id.ms, m.last_id.seq + 1};
  }
  void apply(Model& m) const override {
    const Id id = next_id(m);
    m.entries[id] = "v" + std::to_string(m.next_value++);
    m.last_id = id;
  }
  void run(const Model& m, Sut& s) const override {
    check(s, {"XADD", "s", "*", "n", "v" + std::to_string(m.next_value)},
          Reply::bulk(next_id(m).str()));
  }
  void show(std::ostream& os) const override { os << "XADD s * n v"; }
};

struct ReadGroup : Command {
  std::string consumer = gen_consumer();
  int count = *rc::gen::inRange(1, 4);
  std::vector<Id> fresh(const Model& m) const {
    std::vector<Id> out;
    for (auto it = m.entries.upper_bound(m.last_delivered);
         it != m.entries.end() && static_cast<int>(out.size()) < count; ++it) {
      out.push_back(it->first);
    }
    return out;
  }
  void apply(Model& m) const override {
    const auto ids = fresh(m);
    if (ids.empty()) return;
    m.consumers.insert(consumer);
    for (const Id& id : ids) m.pel[id] = Nack{consumer, m.now_ms, 1};
    m.last_delivered = ids.back();
  }
  void run(const Model& m, Sut& s) const override {
    const auto ids = fresh(m);
    Reply expected = Reply::nil();
    if (!ids.empty()) {
      std::vector<Reply> items;
      for (const Id& id : ids) items.push_back(entry(id, m.entries.at(id)));
      expected = Reply::array({Reply::array({Reply::bulk("s"), Reply::array(std::move(items))})});
    }
    check(
        s,
        {"XREADGROUP", "GROUP", "g", consumer, "COUNT", std::to_string(count), "STREAMS", "s", ">"},
        expected);
  }
  void show(std::ostream& os) const override {
    os << "XREADGROUP GROUP g " << consumer << " COUNT " << count << " STREAMS s >";
  }
};

struct Xdel : Command {
  Id id;
  explicit Xdel(const Model& m) : id(gen_id(m)) {}
  void apply(Model& m) const override { m.entries.erase(id); }
  void run(const Model& m, Sut& s) const override {
    check(s, {"XDEL", "s", id.str()}, Reply::of_int(m.entries.count(id) ? 1 : 0));
  }
  void show(std::ostream& os) const override { os << "XDEL s " << id.str(); }
};

// XACK through a fenced script: acknowledged only while the lease holds `owner`.
struct FencedAck : Command {
  static constexpr const char* kScript =
      "if redis.call('get', KEYS[1]) ~= ARGV[1] then return redis.error_reply('FENCED') end\n"
      "return redis.call('xack', KEYS[2], 'g', ARGV[2])";
  std::string owner = gen_owner();
  Id id;
  explicit FencedAck(const Model& m) : id(gen_id(m)) {}
  bool holds(const Model& m) const {
    const auto lease = m.live("lease");
    return lease && lease->value == owner;
  }
  void apply(Model& m) const override {
    if (holds(m)) m.pel.erase(id);
  }
  void run(const Model& m, Sut& s) const override {
    const Reply expected =
        holds(m) ? Reply::of_int(m.pel.count(id) ? 1 : 0) : Reply::error("ERR FENCED");
    check(s, {"EVAL", kScript, "2", "lease", "s", owner, id.str()}, expected);
  }
  void show(std::ostream& os) const override {
    os << "fenced XACK " << id.str() << " as " << owner;
  }
};

struct Autoclaim : Command {
  std::string consumer = gen_consumer();
  std::int64_t min_idle_ms = *rc::gen::element<std::int64_t>(0, 50, 1000, 3000);
  Id start;
  std::int64_t count = *rc::gen::inRange<std::int64_t>(1, 4);
  bool justid = *rc::gen::arbitrary<bool>();
  explicit Autoclaim(const Model& m) : start(*rc::gen::inRange(0, 3) == 0 ? Id{} : gen_id(m)) {}

  // Redis 7.0's loop: at most 10*count PEL entries looked at, deleted entries dropped.
  Reply simulate(Model& m) const {
    std::int64_t left = count;
    std::int64_t attempts = count * 10;
    std::vector<Reply> claimed, deleted;
    auto it = m.pel.lower_bound(start);
    while (attempts-- && left && it != m.pel.end()) {
      const Id id = it->first;
      if (!m.entries.count(id)) {
        deleted.push_back(Reply::bulk(id.str()));
        it = m.pel.erase(it);
        left--;
        continue;
      }
      Nack& nack = it->second;
      if (min_idle_ms && static_cast<std::int64_t>(m.now_ms - nack.time_ms) < min_idle_ms) {
        ++it;
        continue;
      }
      m.consumers.insert(consumer);
      nack.consumer = consumer;
      nack.time_ms = m.now_ms;
      if (!justid) nack.count++;
      claimed.push_back(justid ? Reply::bulk(id.str()) : entry(id, m.entries.at(id)));
      left--;
      ++it;
    }
    const Id cursor = it == m.pel.end() ? Id{} : it->first;
    return Reply::array({Reply::bulk(cursor.str()), Reply::array(std::move(claimed)),
                         Reply::array(std::move(deleted))});
  }
  void apply(Model& m) const override { simulate(m); }
  void run(const Model& m, Sut& s) const override {
    Model copy = m;
    redis::Command c = {
        "XAUTOCLAIM",         "s", "g", consumer, std::to_string(min_idle_ms), start.str(), "COUNT",
        std::to_string(count)};
    if (justid) c.push_back("JUSTID");
    check(s, c, simulate(copy));
  }
  void show(std::ostream& os) const override {
    os << "XAUTOCLAIM s g " << consumer << " " << min_idle_ms << " " << start.str() << " COUNT "
       << count << (justid ? " JUSTID" : "");
  }
};

struct PendingSummary : Command {
  void run(const Model& m, Sut& s) const override {
    Reply expected = Reply::array({Reply::of_int(0), Reply::nil(), Reply::nil(), Reply::nil()});
    if (!m.pel.empty()) {
      std::map<std::string, int> per_consumer;
      for (const auto& [id, n] : m.pel) per_consumer[n.consumer]++;
      std::vector<Reply> consumers;
      for (const auto& [name, n] : per_consumer) {
        consumers.push_back(Reply::array({Reply::bulk(name), Reply::bulk(std::to_string(n))}));
      }
      expected = Reply::array({Reply::of_int(static_cast<std::int64_t>(m.pel.size())),
                               Reply::bulk(m.pel.begin()->first.str()),
                               Reply::bulk(m.pel.rbegin()->first.str()),
                               Reply::array(std::move(consumers))});
    }
    check(s, {"XPENDING", "s", "g"}, expected);
  }
  void show(std::ostream& os) const override { os << "XPENDING s g"; }
};

struct PendingRange : Command {
  void run(const Model& m, Sut& s) const override {
    std::vector<Reply> rows;
    for (const auto& [id, n] : m.pel) {
      rows.push_back(Reply::array({Reply::bulk(id.str()), Reply::bulk(n.consumer),
                                   Reply::of_int(static_cast<std::int64_t>(m.now_ms - n.time_ms)),
                                   Reply::of_int(static_cast<std::int64_t>(n.count))}));
    }
    check(s, {"XPENDING", "s", "g", "-", "+", "1000"}, Reply::array(std::move(rows)));
  }
  void show(std::ostream& os) const override { os << "XPENDING s g - + 1000"; }
};

struct DelConsumer : Command {
  std::string consumer = gen_consumer();
  std::int64_t pending(const Model& m) const {
    std::int64_t n = 0;
    for (const auto& [id, nack] : m.pel) n += nack.consumer == consumer ? 1 : 0;
    return n;
  }
  void apply(Model& m) const override {
    std::erase_if(m.pel, [&](const auto& kv) { return kv.second.consumer == consumer; });
    m.consumers.erase(consumer);
  }
  void run(const Model& m, Sut& s) const override {
    check(s, {"XGROUP", "DELCONSUMER", "s", "g", consumer}, Reply::of_int(pending(m)));
  }
  void show(std::ostream& os) const override { os << "XGROUP DELCONSUMER s g " << consumer; }
};

RC_GTEST_PROP(SimRedisModel, RepliesMatchThePlainModel, ()) {
  Sut sut;
  RC_ASSERT(sut.redis.execute({"XGROUP", "CREATE", "s", "g", "0", "MKSTREAM"}) ==
            Reply::status("OK"));
  Model model;
  rc::state::check(
      model, sut,
      rc::state::gen::execOneOfWithArgs<SetPx, Get, Pttl, Advance, Xadd, Xadd, ReadGroup, ReadGroup,
                                        Xdel, FencedAck, Autoclaim, Autoclaim, PendingSummary,
                                        PendingRange, DelConsumer>());
}

}  // namespace
}  // namespace seqby::sim
