// Sets, hashes and sorted sets with Redis 7.0's checks and reply shapes. Empty collections are
// deleted, as in Redis. SMEMBERS is sorted (numerically when every member is an integer, as
// Redis's intset orders them; otherwise by bytes, where real Redis's order is its hash table's).
#include <algorithm>
#include <climits>
#include <cmath>

#include "sim_redis_engine.h"

namespace seqby::sim {

std::vector<std::pair<std::string, std::string>>::iterator Hash::find(std::string_view field) {
  return std::find_if(fields.begin(), fields.end(),
                      [&](const auto& kv) { return kv.first == field; });
}

namespace {

template <typename T>
T* typed(Value* v) {
  return v == nullptr ? nullptr : std::get_if<T>(&v->data);
}

struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;
  bool gte_min(double v) const { return min_exclusive ? v > min : v >= min; }
  bool lte_max(double v) const { return max_exclusive ? v < max : v <= max; }
  bool contains(double v) const { return gte_min(v) && lte_max(v); }
  bool empty() const { return min > max || (min == max && (min_exclusive || max_exclusive)); }
};

// Redis zslParseRange: strtod with only trailing-garbage and NaN checks.
bool parse_bound(const std::string& s, double& out, bool& exclusive) {
  exclusive = !s.empty() && s[0] == '(';
  const std::string text = exclusive ? s.substr(1) : s;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0' && !std::isnan(out);
}

bool parse_range(const std::string& min, const std::string& max, ScoreRange& r) {
  return parse_bound(min, r.min, r.min_exclusive) && parse_bound(max, r.max, r.max_exclusive);
}

void zset_insert(ZSet& z, const std::string& member, double score) {
  auto it = z.scores.find(member);
  if (it != z.scores.end()) {
    z.order.erase({it->second, member});
    it->second = score;
  } else {
    z.scores.emplace(member, score);
  }
  z.order.emplace(score, member);
}

void push_member(std::vector<Reply>& out, const std::pair<double, std::string>& e, bool scores) {
  out.push_back(Reply::bulk(e.second));
  if (scores) out.push_back(Reply::bulk(parse::format_double(e.first)));
}

}  // namespace

// --- sets ---------------------------------------------------------------------------------

Reply SimRedisEngine::cmd_sadd(const Command& a) {
  Value* v = lookup(a[1]);
  if (v != nullptr && typed<Set>(v) == nullptr) return Reply::error(kErrWrongType);
  Set& set = v != nullptr ? *typed<Set>(v) : std::get<Set>(create<Set>(a[1]).data);
  std::int64_t added = 0;
  for (std::size_t i = 2; i < a.size(); i++) added += set.insert(a[i]).second ? 1 : 0;
  return Reply::of_int(added);
}

Reply SimRedisEngine::cmd_srem(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Set* set = typed<Set>(v);
  if (set == nullptr) return Reply::error(kErrWrongType);
  std::int64_t removed = 0;
  for (std::size_t i = 2; i < a.size(); i++) removed += static_cast<std::int64_t>(set->erase(a[i]));
  if (set->empty()) remove_key(a[1]);
  return Reply::of_int(removed);
}

Reply SimRedisEngine::cmd_smembers(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::array({});
  const Set* set = typed<Set>(v);
  if (set == nullptr) return Reply::error(kErrWrongType);
  std::vector<Reply> out;
  out.reserve(set->size());
  std::vector<std::pair<std::int64_t, const std::string*>> numbers;
  if (set->size() <= 512) {
    numbers.reserve(set->size());
    for (const std::string& m : *set) {
      std::int64_t n = 0;
      if (!parse::to_int64(m, n)) break;
      numbers.emplace_back(n, &m);
    }
  }
  if (numbers.size() == set->size()) {  // every member an integer: intset order
    std::sort(numbers.begin(), numbers.end());
    for (const auto& [n, m] : numbers) out.push_back(Reply::bulk(*m));
  } else {
    for (const std::string& m : *set) out.push_back(Reply::bulk(m));
  }
  return Reply::array(std::move(out));
}

// SMOVE source destination member (Redis 7.0 t_set.c smoveCommand): both keys must be sets (or
// absent); the member leaves the source (which goes when empty) and joins the destination.
Reply SimRedisEngine::cmd_smove(const Command& a) {
  Value* source = lookup(a[1]);
  Value* destination = lookup(a[2]);
  if ((source != nullptr && typed<Set>(source) == nullptr) ||
      (destination != nullptr && typed<Set>(destination) == nullptr)) {
    return Reply::error(kErrWrongType);
  }
  if (source == nullptr) return Reply::of_int(0);
  Set& from = *typed<Set>(source);
  if (a[1] == a[2]) return Reply::of_int(from.count(a[3]) != 0 ? 1 : 0);
  if (from.erase(a[3]) == 0) return Reply::of_int(0);
  if (from.empty()) remove_key(a[1]);
  Value* target = lookup(a[2]);
  Set& to = target != nullptr ? *typed<Set>(target) : std::get<Set>(create<Set>(a[2]).data);
  to.insert(a[3]);
  return Reply::of_int(1);
}

// SUNION key [key ...]: the members of every set (absent keys are empty), in member order.
Reply SimRedisEngine::cmd_sunion(const Command& a) {
  Set out;
  for (std::size_t i = 1; i < a.size(); i++) {
    Value* v = lookup(a[i]);
    if (v == nullptr) continue;
    const Set* set = typed<Set>(v);
    if (set == nullptr) return Reply::error(kErrWrongType);
    out.insert(set->begin(), set->end());
  }
  std::vector<Reply> replies;
  replies.reserve(out.size());
  for (const std::string& m : out) replies.push_back(Reply::bulk(m));
  return Reply::array(std::move(replies));
}

Reply SimRedisEngine::cmd_sismember(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  const Set* set = typed<Set>(v);
  if (set == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(set->count(a[2]) != 0 ? 1 : 0);
}

Reply SimRedisEngine::cmd_scard(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  const Set* set = typed<Set>(v);
  if (set == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(static_cast<std::int64_t>(set->size()));
}

// --- hashes -------------------------------------------------------------------------------

Reply SimRedisEngine::cmd_hset(const Command& a) {
  if (a.size() % 2 == 1) return arity_error("hset");
  Value* v = lookup(a[1]);
  if (v != nullptr && typed<Hash>(v) == nullptr) return Reply::error(kErrWrongType);
  Hash& hash = v != nullptr ? *typed<Hash>(v) : std::get<Hash>(create<Hash>(a[1]).data);
  std::int64_t created = 0;
  for (std::size_t i = 2; i + 1 < a.size(); i += 2) {
    auto it = hash.find(a[i]);
    if (it == hash.fields.end()) {
      hash.fields.emplace_back(a[i], a[i + 1]);
      created++;
    } else {
      it->second = a[i + 1];
    }
  }
  return Reply::of_int(created);
}

Reply SimRedisEngine::cmd_hget(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::nil();
  Hash* hash = typed<Hash>(v);
  if (hash == nullptr) return Reply::error(kErrWrongType);
  auto it = hash->find(a[2]);
  return it == hash->fields.end() ? Reply::nil() : Reply::bulk(it->second);
}

Reply SimRedisEngine::cmd_hmget(const Command& a) {
  Value* v = lookup(a[1]);
  Hash* hash = typed<Hash>(v);
  if (v != nullptr && hash == nullptr) return Reply::error(kErrWrongType);
  std::vector<Reply> out;
  for (std::size_t i = 2; i < a.size(); i++) {
    auto it = hash == nullptr ? decltype(hash->fields.end()){} : hash->find(a[i]);
    out.push_back(hash == nullptr || it == hash->fields.end() ? Reply::nil()
                                                              : Reply::bulk(it->second));
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_hdel(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Hash* hash = typed<Hash>(v);
  if (hash == nullptr) return Reply::error(kErrWrongType);
  std::int64_t deleted = 0;
  for (std::size_t i = 2; i < a.size(); i++) {
    auto it = hash->find(a[i]);
    if (it != hash->fields.end()) {
      hash->fields.erase(it);
      deleted++;
      if (hash->fields.empty()) {
        remove_key(a[1]);
        break;
      }
    }
  }
  return Reply::of_int(deleted);
}

Reply SimRedisEngine::cmd_hgetall(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::array({});
  const Hash* hash = typed<Hash>(v);
  if (hash == nullptr) return Reply::error(kErrWrongType);
  std::vector<Reply> out;
  out.reserve(hash->fields.size() * 2);
  for (const auto& [field, value] : hash->fields) {
    out.push_back(Reply::bulk(field));
    out.push_back(Reply::bulk(value));
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_hincrby(const Command& a) {
  std::int64_t by = 0;
  if (!parse::to_int64(a[3], by)) return Reply::error(kErrNotInteger);
  Value* v = lookup(a[1]);
  if (v != nullptr && typed<Hash>(v) == nullptr) return Reply::error(kErrWrongType);
  Hash& hash = v != nullptr ? *typed<Hash>(v) : std::get<Hash>(create<Hash>(a[1]).data);
  auto it = hash.find(a[2]);
  std::int64_t value = 0;
  if (it != hash.fields.end() && !parse::to_int64(it->second, value)) {
    return Reply::error("ERR hash value is not an integer");
  }
  if ((by < 0 && value < 0 && by < LLONG_MIN - value) ||
      (by > 0 && value > 0 && by > LLONG_MAX - value)) {
    if (hash.fields.empty()) remove_key(a[1]);
    return Reply::error("ERR increment or decrement would overflow");
  }
  value += by;
  if (it == hash.fields.end()) {
    hash.fields.emplace_back(a[2], std::to_string(value));
  } else {
    it->second = std::to_string(value);
  }
  return Reply::of_int(value);
}

Reply SimRedisEngine::cmd_hexists(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Hash* hash = typed<Hash>(v);
  if (hash == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(hash->find(a[2]) != hash->fields.end() ? 1 : 0);
}

Reply SimRedisEngine::cmd_hlen(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Hash* hash = typed<Hash>(v);
  if (hash == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(static_cast<std::int64_t>(hash->fields.size()));
}

// --- sorted sets --------------------------------------------------------------------------

Reply SimRedisEngine::cmd_zadd(const Command& a) {
  bool nx = false, xx = false, ch = false, incr = false, gt = false, lt = false;
  std::size_t idx = 2;
  for (; idx < a.size(); idx++) {
    const std::string& opt = a[idx];
    if (parse::iequals(opt, "nx"))
      nx = true;
    else if (parse::iequals(opt, "xx"))
      xx = true;
    else if (parse::iequals(opt, "ch"))
      ch = true;
    else if (parse::iequals(opt, "incr"))
      incr = true;
    else if (parse::iequals(opt, "gt"))
      gt = true;
    else if (parse::iequals(opt, "lt"))
      lt = true;
    else
      break;
  }
  const std::size_t elements = a.size() - idx;
  if (elements % 2 != 0 || elements == 0) return Reply::error(kErrSyntax);
  if (nx && xx) return Reply::error("ERR XX and NX options at the same time are not compatible");
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    return Reply::error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (incr && elements > 2) {
    return Reply::error("ERR INCR option supports a single increment-element pair");
  }
  std::vector<double> scores;
  for (std::size_t j = idx; j < a.size(); j += 2) {
    double s = 0;
    if (!parse::to_double(a[j], s)) return Reply::error(kErrNotFloat);
    scores.push_back(s);
  }
  Value* v = lookup(a[1]);
  if (v != nullptr && typed<ZSet>(v) == nullptr) return Reply::error(kErrWrongType);
  std::int64_t added = 0, updated = 0, processed = 0;
  double score = 0;
  if (v != nullptr || !xx) {
    ZSet& z = v != nullptr ? *typed<ZSet>(v) : std::get<ZSet>(create<ZSet>(a[1]).data);
    for (std::size_t j = 0; j < scores.size(); j++) {
      const std::string& member = a[idx + 1 + j * 2];
      score = scores[j];
      auto it = z.scores.find(member);
      if (it != z.scores.end()) {
        if (nx) continue;
        const double current = it->second;
        if (incr) {
          score += current;
          if (std::isnan(score)) {
            return Reply::error("ERR resulting score is not a number (NaN)");
          }
        }
        if ((gt && score <= current) || (lt && score >= current)) {
          score = current;
          continue;
        }
        processed++;
        if (score != current) {
          zset_insert(z, member, score);
          updated++;
        }
      } else {
        if (xx) continue;
        zset_insert(z, member, score);
        added++;
        processed++;
      }
    }
  }
  if (incr) return processed ? Reply::bulk(parse::format_double(score)) : Reply::nil();
  return Reply::of_int(ch ? added + updated : added);
}

Reply SimRedisEngine::cmd_zrem(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  std::int64_t removed = 0;
  for (std::size_t i = 2; i < a.size(); i++) {
    auto it = z->scores.find(a[i]);
    if (it == z->scores.end()) continue;
    z->order.erase({it->second, it->first});
    z->scores.erase(it);
    removed++;
  }
  if (z->scores.empty()) remove_key(a[1]);
  return Reply::of_int(removed);
}

Reply SimRedisEngine::cmd_zscore(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::nil();
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  auto it = z->scores.find(a[2]);
  return it == z->scores.end() ? Reply::nil() : Reply::bulk(parse::format_double(it->second));
}

Reply SimRedisEngine::cmd_zcard(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(static_cast<std::int64_t>(z->scores.size()));
}

Reply SimRedisEngine::cmd_zcount(const Command& a) {
  ScoreRange r;
  if (!parse_range(a[2], a[3], r)) return Reply::error("ERR min or max is not a float");
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  std::int64_t n = 0;
  if (!r.empty()) {
    for (const auto& e : z->order) n += r.contains(e.first) ? 1 : 0;
  }
  return Reply::of_int(n);
}

namespace {

enum class RangeKind { rank, score };

struct RangeRequest {
  RangeKind kind = RangeKind::rank;
  bool rev = false;
  bool withscores = false;
  std::int64_t offset = 0;
  std::int64_t limit = -1;
};

Reply range_reply(const ZSet& z, const RangeRequest& q, std::int64_t start, std::int64_t end,
                  const ScoreRange& r) {
  std::vector<Reply> out;
  if (q.kind == RangeKind::rank) {
    const auto len = static_cast<std::int64_t>(z.order.size());
    if (start < 0) start += len;
    if (end < 0) end += len;
    if (start < 0) start = 0;
    if (start > end || start >= len) return Reply::array({});
    if (end >= len) end = len - 1;
    std::int64_t i = 0;
    if (!q.rev) {
      for (auto it = z.order.begin(); it != z.order.end() && i <= end; ++it, ++i) {
        if (i >= start) push_member(out, *it, q.withscores);
      }
    } else {
      for (auto it = z.order.rbegin(); it != z.order.rend() && i <= end; ++it, ++i) {
        if (i >= start) push_member(out, *it, q.withscores);
      }
    }
    return Reply::array(std::move(out));
  }
  if (q.offset > 0 && q.offset >= static_cast<std::int64_t>(z.order.size())) {
    return Reply::array({});
  }
  if (r.empty() || q.offset < 0) return Reply::array({});
  std::int64_t skip = q.offset;
  std::int64_t left = q.limit;
  auto visit = [&](const std::pair<double, std::string>& e) {
    if (!r.contains(e.first)) return true;
    if (skip > 0) {
      skip--;
      return true;
    }
    if (left == 0) return false;
    if (left > 0) left--;
    push_member(out, e, q.withscores);
    return true;
  };
  if (!q.rev) {
    for (auto it = z.order.lower_bound({r.min, std::string()}); it != z.order.end(); ++it) {
      if (!r.lte_max(it->first)) break;
      if (!visit(*it)) break;
    }
  } else {
    for (auto it = z.order.rbegin(); it != z.order.rend(); ++it) {
      if (!r.gte_min(it->first)) break;
      if (!visit(*it)) break;
    }
  }
  return Reply::array(std::move(out));
}

}  // namespace

// ZRANGE key start stop [BYSCORE] [REV] [LIMIT offset count] [WITHSCORES] (no BYLEX).
Reply SimRedisEngine::cmd_zrange(const Command& a) {
  RangeRequest q;
  bool kind_given = false;
  for (std::size_t j = 4; j < a.size(); j++) {
    const std::size_t left = a.size() - j - 1;
    if (parse::iequals(a[j], "withscores")) {
      q.withscores = true;
    } else if (parse::iequals(a[j], "limit") && left >= 2) {
      if (!parse::to_int64(a[j + 1], q.offset) || !parse::to_int64(a[j + 2], q.limit)) {
        return Reply::error(kErrNotInteger);
      }
      j += 2;
    } else if (!q.rev && parse::iequals(a[j], "rev")) {
      q.rev = true;
    } else if (!kind_given && parse::iequals(a[j], "byscore")) {
      q.kind = RangeKind::score;
      kind_given = true;
    } else if (!kind_given && parse::iequals(a[j], "bylex")) {
      return Reply::error("ERR SimRedis does not implement ZRANGE BYLEX");
    } else {
      return Reply::error(kErrSyntax);
    }
  }
  if (q.limit != -1 && q.kind == RangeKind::rank) {
    return Reply::error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  std::int64_t start = 0, end = 0;
  ScoreRange r;
  if (q.kind == RangeKind::rank) {
    if (!parse::to_int64(a[2], start) || !parse::to_int64(a[3], end)) {
      return Reply::error(kErrNotInteger);
    }
  } else {
    const std::string& min = q.rev ? a[3] : a[2];
    const std::string& max = q.rev ? a[2] : a[3];
    if (!parse_range(min, max, r)) return Reply::error("ERR min or max is not a float");
  }
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::array({});
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  return range_reply(*z, q, start, end, r);
}

Reply SimRedisEngine::cmd_zrangebyscore(const Command& a) {
  RangeRequest q;
  q.kind = RangeKind::score;
  for (std::size_t j = 4; j < a.size(); j++) {
    const std::size_t left = a.size() - j - 1;
    if (parse::iequals(a[j], "withscores")) {
      q.withscores = true;
    } else if (parse::iequals(a[j], "limit") && left >= 2) {
      if (!parse::to_int64(a[j + 1], q.offset) || !parse::to_int64(a[j + 2], q.limit)) {
        return Reply::error(kErrNotInteger);
      }
      j += 2;
    } else {
      return Reply::error(kErrSyntax);
    }
  }
  ScoreRange r;
  if (!parse_range(a[2], a[3], r)) return Reply::error("ERR min or max is not a float");
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::array({});
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  return range_reply(*z, q, 0, 0, r);
}

Reply SimRedisEngine::cmd_zremrangebyscore(const Command& a) {
  ScoreRange r;
  if (!parse_range(a[2], a[3], r)) return Reply::error("ERR min or max is not a float");
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  ZSet* z = typed<ZSet>(v);
  if (z == nullptr) return Reply::error(kErrWrongType);
  std::int64_t removed = 0;
  if (!r.empty()) {
    for (auto it = z->order.lower_bound({r.min, std::string()}); it != z->order.end();) {
      if (!r.lte_max(it->first)) break;
      if (!r.gte_min(it->first)) {
        ++it;
        continue;
      }
      z->scores.erase(it->second);
      it = z->order.erase(it);
      removed++;
    }
  }
  if (z->scores.empty()) remove_key(a[1]);
  return Reply::of_int(removed);
}

}  // namespace seqby::sim
