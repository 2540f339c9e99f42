// Streams without groups: XADD (ids, NOMKSTREAM, MAXLEN/MINID trimming), XLEN, XRANGE,
// XREVRANGE, XDEL, XTRIM, with Redis 7.0's parsing order and error texts. Entries live in listpack
// nodes of at most 100 entries (Redis's stream-node-max-entries; the 4096-byte node limit is not
// modelled), which decides what approximate (~) trimming removes.
#include "sim_redis_engine.h"

namespace seqby::sim {

namespace {

constexpr std::uint32_t kNodeMaxEntries = 100;

template <typename T>
T* typed(Value* v) {
  return v == nullptr ? nullptr : std::get_if<T>(&v->data);
}

struct TrimArgs {
  enum class Strategy { none, maxlen, minid } strategy = Strategy::none;
  bool approx = false;
  std::int64_t maxlen = 0;
  StreamId minid;
  std::int64_t limit = 0;
  bool nomkstream = false;
  bool id_given = false;
  bool seq_given = true;
  StreamId id;
};

// streamParseAddOrTrimArgsOrReply: returns the index of the id (XADD) or a.size() (XTRIM), or
// sets `error`.
std::size_t parse_add_or_trim(const Command& a, TrimArgs& args, bool xadd, Reply& error) {
  bool limit_given = false;
  std::size_t i = 2;
  for (; i < a.size(); i++) {
    const std::size_t more = a.size() - 1 - i;
    const std::string& opt = a[i];
    if (xadd && opt == "*") break;
    if (parse::iequals(opt, "maxlen") && more) {
      if (args.strategy != TrimArgs::Strategy::none) {
        error = Reply::error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      args.approx = false;
      if (more >= 2 && (a[i + 1] == "~" || a[i + 1] == "=")) {
        args.approx = a[i + 1] == "~";
        i++;
      }
      if (!parse::to_int64(a[i + 1], args.maxlen)) {
        error = Reply::error(kErrNotInteger);
        return 0;
      }
      if (args.maxlen < 0) {
        error = Reply::error("ERR The MAXLEN argument must be >= 0.");
        return 0;
      }
      i++;
      args.strategy = TrimArgs::Strategy::maxlen;
    } else if (parse::iequals(opt, "minid") && more) {
      if (args.strategy != TrimArgs::Strategy::none) {
        error = Reply::error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      args.approx = false;
      if (more >= 2 && (a[i + 1] == "~" || a[i + 1] == "=")) {
        args.approx = a[i + 1] == "~";
        i++;
      }
      if (!parse::stream_id(a[i + 1], args.minid, 0, true, nullptr)) {
        error = Reply::error(kErrInvalidStreamId);
        return 0;
      }
      i++;
      args.strategy = TrimArgs::Strategy::minid;
    } else if (parse::iequals(opt, "limit") && more) {
      if (!parse::to_int64(a[i + 1], args.limit)) {
        error = Reply::error(kErrNotInteger);
        return 0;
      }
      if (args.limit < 0) {
        error = Reply::error("ERR The LIMIT argument must be >= 0.");
        return 0;
      }
      limit_given = true;
      i++;
    } else if (xadd && parse::iequals(opt, "nomkstream")) {
      args.nomkstream = true;
    } else if (xadd) {
      if (!parse::stream_id(opt, args.id, 0, true, &args.seq_given)) {
        error = Reply::error(kErrInvalidStreamId);
        return 0;
      }
      args.id_given = true;
      break;
    } else {
      error = Reply::error(kErrSyntax);
      return 0;
    }
  }
  if (args.limit && args.strategy == TrimArgs::Strategy::none) {
    error = Reply::error(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && args.strategy == TrimArgs::Strategy::none) {
    error = Reply::error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (limit_given) {
    if (!args.approx) {
      error = Reply::error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else {
    args.limit = args.approx ? 100 * kNodeMaxEntries : 0;
  }
  return i;
}

void append_entry(Stream& s, StreamId id, std::vector<std::string> fields) {
  auto last = s.nodes.empty() ? s.nodes.end() : std::prev(s.nodes.end());
  if (last == s.nodes.end() || last->second.total >= kNodeMaxEntries) {
    last = s.nodes.emplace(id, StreamNode{}).first;
  }
  last->second.live++;
  last->second.total++;
  s.entries.emplace(id, std::move(fields));
  s.entries_added++;
  s.last_id = id;
  if (s.entries.size() == 1) s.first_id = id;
}

void refresh_first_id(Stream& s) {
  s.first_id = s.entries.empty() ? StreamId{} : s.entries.begin()->first;
}

// streamTrim: whole nodes first; an exact trim then deletes inside the head node.
std::int64_t trim(Stream& s, const TrimArgs& args) {
  if (args.strategy == TrimArgs::Strategy::none) return 0;
  std::int64_t deleted = 0;
  const auto maxlen = static_cast<std::size_t>(args.maxlen);
  while (!s.nodes.empty()) {
    if (args.strategy == TrimArgs::Strategy::maxlen && s.entries.size() <= maxlen) break;
    auto node = s.nodes.begin();
    const auto entries = static_cast<std::int64_t>(node->second.live);
    if (args.limit && deleted + entries > args.limit) break;
    auto next = std::next(node);
    auto end = next == s.nodes.end() ? s.entries.end() : s.entries.lower_bound(next->first);
    auto begin = s.entries.lower_bound(node->first);
    bool remove_node = false;
    if (args.strategy == TrimArgs::Strategy::maxlen) {
      remove_node = s.entries.size() - static_cast<std::size_t>(entries) >= maxlen;
    } else {
      remove_node = begin != end && std::prev(end)->first < args.minid;
    }
    if (remove_node) {
      s.entries.erase(begin, end);
      s.nodes.erase(node);
      deleted += entries;
      continue;
    }
    if (args.approx) break;
    for (auto it = begin; it != end;) {
      if (args.strategy == TrimArgs::Strategy::maxlen) {
        if (s.entries.size() <= maxlen) break;
      } else if (it->first >= args.minid) {
        break;
      }
      it = s.entries.erase(it);
      node->second.live--;
      deleted++;
    }
    break;
  }
  refresh_first_id(s);
  return deleted;
}

}  // namespace

Reply stream_entry_reply(StreamId id, const std::vector<std::string>& fields) {
  std::vector<Reply> kv;
  kv.reserve(fields.size());
  for (const auto& f : fields) kv.push_back(Reply::bulk(f));
  return array_of(id_reply(id), Reply::array(std::move(kv)));
}

bool stream_delete_entry(Stream& s, StreamId id) {
  auto it = s.entries.find(id);
  if (it == s.entries.end()) return false;
  s.entries.erase(it);
  auto node = std::prev(s.nodes.upper_bound(id));
  if (--node->second.live == 0) s.nodes.erase(node);
  return true;
}

bool stream_range_has_tombstones(const Stream& s, StreamId start, StreamId end) {
  if (s.entries.empty() || s.max_deleted_id.is_zero()) return false;
  if (s.first_id > s.max_deleted_id) return false;
  return start <= s.max_deleted_id && s.max_deleted_id <= end;
}

std::int64_t stream_estimate_distance(const Stream& s, StreamId id) {
  const auto added = static_cast<std::int64_t>(s.entries_added);
  const auto length = static_cast<std::int64_t>(s.entries.size());
  if (s.entries_added == 0) return 0;
  if (length == 0 && id <= s.last_id) return added;
  if (id == s.last_id) return added;
  if (id > s.last_id) return -1;
  if (s.max_deleted_id.is_zero() || s.max_deleted_id < s.first_id) {
    if (id < s.first_id) return added - length;
    if (id == s.first_id) return added - length + 1;
  }
  return -1;
}

Reply SimRedisEngine::cmd_xadd(const Command& a) {
  TrimArgs args;
  Reply error;
  const std::size_t idpos = parse_add_or_trim(a, args, true, error);
  if (error.is_error()) return error;
  const std::size_t field_pos = idpos + 1;
  if (a.size() < field_pos + 2 || (a.size() - field_pos) % 2 == 1) return arity_error("xadd");
  if (args.id_given && args.seq_given && args.id.is_zero()) {
    return Reply::error("ERR The ID specified in XADD must be greater than 0-0");
  }
  Value* v = lookup(a[1]);
  if (v != nullptr && typed<Stream>(v) == nullptr) return Reply::error(kErrWrongType);
  if (v == nullptr && args.nomkstream) return Reply::nil();
  Stream& s = v != nullptr ? *typed<Stream>(v) : std::get<Stream>(create<Stream>(a[1]).data);
  if (s.last_id == kMaxStreamId) {
    return Reply::error(
        "ERR The stream has exhausted the last possible ID, unable to add more items");
  }
  StreamId id;
  if (args.id_given) {
    if (args.seq_given) {
      id = args.id;
    } else if (s.last_id.ms == args.id.ms) {
      if (s.last_id.seq == UINT64_MAX) {
        return Reply::error(
            "ERR The ID specified in XADD is equal or smaller than the target stream top item");
      }
      id = StreamId{s.last_id.ms, s.last_id.seq + 1};
    } else {
      id = args.id;
    }
  } else if (now_ms_ > s.last_id.ms) {
    id = StreamId{now_ms_, 0};
  } else {
    id = s.last_id;
    parse::incr_id(id);
  }
  if (id <= s.last_id) {
    return Reply::error(
        "ERR The ID specified in XADD is equal or smaller than the target stream top item");
  }
  append_entry(s, id, std::vector<std::string>(a.begin() + static_cast<long>(field_pos), a.end()));
  trim(s, args);
  if (!blocked_on_.empty()) signal_stream_ready(a[1]);
  return id_reply(id);
}

Reply SimRedisEngine::cmd_xlen(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Stream* s = typed<Stream>(v);
  if (s == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(static_cast<std::int64_t>(s->entries.size()));
}

Reply SimRedisEngine::cmd_xrange(const Command& a) { return xrange_generic(a, false); }
Reply SimRedisEngine::cmd_xrevrange(const Command& a) { return xrange_generic(a, true); }

Reply SimRedisEngine::xrange_generic(const Command& a, bool rev) {
  const std::string& start_arg = rev ? a[3] : a[2];
  const std::string& end_arg = rev ? a[2] : a[3];
  StreamId start, end;
  bool start_ex = false, end_ex = false;
  if (!parse::interval_id(start_arg, start, start_ex, 0)) return Reply::error(kErrInvalidStreamId);
  if (start_ex && !parse::incr_id(start)) {
    return Reply::error("ERR invalid start ID for the interval");
  }
  if (!parse::interval_id(end_arg, end, end_ex, UINT64_MAX)) {
    return Reply::error(kErrInvalidStreamId);
  }
  if (end_ex && !parse::decr_id(end)) return Reply::error("ERR invalid end ID for the interval");
  std::int64_t count = -1;
  for (std::size_t j = 4; j < a.size(); j++) {
    if (parse::iequals(a[j], "count") && j + 1 < a.size()) {
      if (!parse::to_int64(a[j + 1], count)) return Reply::error(kErrNotInteger);
      if (count < 0) count = 0;
      j++;
    } else {
      return Reply::error(kErrSyntax);
    }
  }
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::array({});
  Stream* s = typed<Stream>(v);
  if (s == nullptr) return Reply::error(kErrWrongType);
  if (count == 0) return Reply::nil();
  std::vector<Reply> out;
  if (start > end) return Reply::array({});
  if (!rev) {
    for (auto it = s->entries.lower_bound(start); it != s->entries.end() && it->first <= end;
         ++it) {
      out.push_back(stream_entry_reply(it->first, it->second));
      if (count > 0 && static_cast<std::int64_t>(out.size()) == count) break;
    }
  } else {
    for (auto it = std::make_reverse_iterator(s->entries.upper_bound(end));
         it != s->entries.rend() && it->first >= start; ++it) {
      out.push_back(stream_entry_reply(it->first, it->second));
      if (count > 0 && static_cast<std::int64_t>(out.size()) == count) break;
    }
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_xdel(const Command& a) {
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Stream* s = typed<Stream>(v);
  if (s == nullptr) return Reply::error(kErrWrongType);
  std::vector<StreamId> ids(a.size() - 2);
  for (std::size_t j = 2; j < a.size(); j++) {
    if (!parse::stream_id(a[j], ids[j - 2], 0, true, nullptr)) {
      return Reply::error(kErrInvalidStreamId);
    }
  }
  std::int64_t deleted = 0;
  bool first_entry = false;
  for (const StreamId& id : ids) {
    if (!stream_delete_entry(*s, id)) continue;
    if (id == s->first_id) first_entry = true;
    if (id > s->max_deleted_id) s->max_deleted_id = id;
    deleted++;
  }
  if (deleted && (s->entries.empty() || first_entry)) refresh_first_id(*s);
  return Reply::of_int(deleted);
}

Reply SimRedisEngine::cmd_xtrim(const Command& a) {
  TrimArgs args;
  Reply error;
  parse_add_or_trim(a, args, false, error);
  if (error.is_error()) return error;
  Value* v = lookup(a[1]);
  if (v == nullptr) return Reply::of_int(0);
  Stream* s = typed<Stream>(v);
  if (s == nullptr) return Reply::error(kErrWrongType);
  return Reply::of_int(trim(*s, args));
}

}  // namespace seqby::sim
