// Consumer groups: XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XGROUP and XINFO, following
// Redis 7.0's t_stream.c: pending entries carry the consumer, the delivery time (server clock) and
// the delivery count; consumers are created lazily on first delivery or claim; XAUTOCLAIM scans at
// most 10*COUNT pending entries and drops entries deleted from the stream.
#include "sim_redis_engine.h"

namespace seqby::sim {

namespace {

template <typename T>
T* typed(Value* v) {
  return v == nullptr ? nullptr : std::get_if<T>(&v->data);
}

Reply nogroup(const std::string& key, const std::string& group, const char* suffix) {
  return Reply::error("NOGROUP No such key '" + key + "' or consumer group '" + group + "'" +
                      suffix);
}

Reply nogroup_for_key(const std::string& group, const std::string& key) {
  return Reply::error("NOGROUP No such consumer group '" + group + "' for key name '" + key + "'");
}

Reply subcommand_syntax_error(const Command& a) {
  return Reply::error("ERR unknown subcommand or wrong number of arguments for '" +
                      a[1].substr(0, 128) + "'. Try " + parse::upper(a[0]) + " HELP.");
}

// Looks a consumer up, creating it when missing; `refresh` updates its seen time as Redis's
// streamLookupConsumer(SLC_DEFAULT) does.
StreamConsumer& consumer_for(StreamGroup& g, const std::string& name, std::uint64_t now_ms) {
  auto [it, created] = g.consumers.try_emplace(name);
  (void)created;
  it->second.seen_time_ms = now_ms;
  return it->second;
}

void remove_nack(StreamGroup& g, std::map<StreamId, StreamNack>::iterator nack) {
  auto owner = g.consumers.find(nack->second.consumer);
  if (owner != g.consumers.end()) owner->second.pending.erase(nack->first);
  g.pel.erase(nack);
}

// Moves `nack` to consumer `name` (removing it from its previous owner's list).
void assign_nack(StreamGroup& g, StreamId id, StreamNack& nack, const std::string& name,
                 StreamConsumer& to) {
  if (nack.consumer != name) {
    auto owner = g.consumers.find(nack.consumer);
    if (!nack.consumer.empty() && owner != g.consumers.end()) owner->second.pending.erase(id);
    nack.consumer = name;
  }
  to.pending.insert(id);
}

}  // namespace

Reply SimRedisEngine::cmd_xreadgroup(const Command& a) { return xread_generic(a, true); }
Reply SimRedisEngine::cmd_xread(const Command& a) { return xread_generic(a, false); }

Reply SimRedisEngine::xread_generic(const Command& a, bool xreadgroup) {
  std::int64_t count = 0;
  std::size_t streams_arg = 0;
  std::size_t streams_count = 0;
  bool noack = false;
  bool block = false;
  const std::string* group_name = nullptr;
  const std::string* consumer_name = nullptr;
  for (std::size_t i = 1; i < a.size(); i++) {
    const std::size_t more = a.size() - i - 1;
    const std::string& o = a[i];
    if (parse::iequals(o, "block") && more) {
      if (in_script_) {
        return Reply::error("ERR " + a[0] +
                            " command is not allowed with BLOCK option from scripts");
      }
      i++;
      std::int64_t timeout = 0;
      if (!parse::to_int64(a[i], timeout)) {
        return Reply::error("ERR timeout is not an integer or out of range");
      }
      if (timeout < 0) return Reply::error("ERR timeout is negative");
      block = true;
    } else if (parse::iequals(o, "count") && more) {
      i++;
      if (!parse::to_int64(a[i], count)) return Reply::error(kErrNotInteger);
      if (count < 0) count = 0;
    } else if (parse::iequals(o, "streams") && more) {
      streams_arg = i + 1;
      streams_count = a.size() - streams_arg;
      if (streams_count % 2 != 0) {
        return Reply::error(
            "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.");
      }
      streams_count /= 2;
      break;
    } else if (parse::iequals(o, "group") && more >= 2) {
      if (!xreadgroup) {
        return Reply::error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
      }
      group_name = &a[i + 1];
      consumer_name = &a[i + 2];
      i += 2;
    } else if (parse::iequals(o, "noack")) {
      if (!xreadgroup) {
        return Reply::error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
      }
      noack = true;
    } else {
      return Reply::error(kErrSyntax);
    }
  }
  if (streams_arg == 0) return Reply::error(kErrSyntax);
  if (xreadgroup && group_name == nullptr) {
    return Reply::error("ERR Missing GROUP option for XREADGROUP");
  }

  std::vector<StreamGroup*> groups(streams_count, nullptr);
  std::vector<StreamId> ids(streams_count);
  std::vector<bool> new_only(streams_count, false);
  for (std::size_t k = 0; k < streams_count; k++) {
    const std::string& key = a[streams_arg + k];
    const std::string& id_arg = a[streams_arg + streams_count + k];
    Value* v = lookup(key);
    Stream* s = typed<Stream>(v);
    if (v != nullptr && s == nullptr) return Reply::error(kErrWrongType);
    if (xreadgroup) {
      auto g = s == nullptr ? decltype(s->groups.end()){} : s->groups.find(*group_name);
      if (s == nullptr || g == s->groups.end()) {
        return nogroup(key, *group_name, " in XREADGROUP with GROUP option");
      }
      groups[k] = &g->second;
    }
    if (id_arg == "$") {
      if (xreadgroup) {
        return Reply::error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
      }
      ids[k] = s != nullptr ? s->last_id : StreamId{};
      continue;
    }
    if (id_arg == ">") {
      if (!xreadgroup) {
        return Reply::error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
      }
      new_only[k] = true;
      continue;
    }
    if (!parse::stream_id(id_arg, ids[k], 0, true, nullptr)) {
      return Reply::error(kErrInvalidStreamId);
    }
  }

  std::vector<Reply> out;
  for (std::size_t k = 0; k < streams_count; k++) {
    const std::string& key = a[streams_arg + k];
    Stream* found = typed<Stream>(lookup(key));
    if (found == nullptr) continue;
    Stream& s = *found;
    if (!xreadgroup) {
      if (s.entries.empty() || s.entries.rbegin()->first <= ids[k]) continue;
      StreamId start = ids[k];
      parse::incr_id(start);
      std::vector<Reply> entries;
      for (auto it = s.entries.lower_bound(start); it != s.entries.end(); ++it) {
        entries.push_back(stream_entry_reply(it->first, it->second));
        if (count && static_cast<std::int64_t>(entries.size()) == count) break;
      }
      out.push_back(array_of(Reply::bulk(key), Reply::array(std::move(entries))));
      continue;
    }
    StreamGroup& g = *groups[k];
    StreamId start;
    if (new_only[k]) {
      if (s.entries.empty() || s.entries.rbegin()->first <= g.last_id) continue;
      start = g.last_id;
    } else {
      start = ids[k];
    }
    parse::incr_id(start);
    StreamConsumer& consumer = consumer_for(g, *consumer_name, now_ms_);
    std::vector<Reply> entries;
    if (!new_only[k]) {
      // History: this consumer's own pending entries from `start`.
      for (auto it = consumer.pending.lower_bound(start); it != consumer.pending.end(); ++it) {
        if (count && static_cast<std::int64_t>(entries.size()) >= count) break;
        auto entry = s.entries.find(*it);
        if (entry == s.entries.end()) {
          entries.push_back(array_of(id_reply(*it), Reply::nil()));
        } else {
          entries.push_back(stream_entry_reply(entry->first, entry->second));
          StreamNack& nack = g.pel.at(*it);
          nack.delivery_time_ms = now_ms_;
          nack.delivery_count++;
        }
      }
    } else {
      for (auto it = s.entries.lower_bound(start); it != s.entries.end(); ++it) {
        const StreamId id = it->first;
        if (id > g.last_id) {
          if (g.entries_read != -1 && !stream_range_has_tombstones(s, id, kMaxStreamId)) {
            g.entries_read++;
          } else if (s.entries_added) {
            g.entries_read = stream_estimate_distance(s, id);
          }
          g.last_id = id;
        }
        entries.push_back(stream_entry_reply(id, it->second));
        if (!noack) {
          auto [nack_it, inserted] = g.pel.try_emplace(id);
          StreamNack& nack = nack_it->second;
          if (!inserted) {
            auto owner = g.consumers.find(nack.consumer);
            if (owner != g.consumers.end()) owner->second.pending.erase(id);
          }
          nack.consumer = *consumer_name;
          nack.delivery_time_ms = now_ms_;
          nack.delivery_count = 1;
          consumer.pending.insert(id);
        }
        if (count && static_cast<std::int64_t>(entries.size()) == count) break;
      }
    }
    out.push_back(array_of(Reply::bulk(key), Reply::array(std::move(entries))));
  }
  if (out.empty()) {
    // XREADGROUP BLOCK does not block (sim_redis.h): it replies as on a timeout.
    if (block && !xreadgroup && block_wake_ != nullptr) {
      std::vector<std::pair<const std::string*, StreamId>> streams;
      streams.reserve(streams_count);
      for (std::size_t k = 0; k < streams_count; k++) {
        streams.emplace_back(&a[streams_arg + k], ids[k]);
      }
      block_current(streams, count);
    }
    return Reply::nil();
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_xack(const Command& a) {
  Value* v = lookup(a[1]);
  Stream* s = typed<Stream>(v);
  if (v != nullptr && s == nullptr) return Reply::error(kErrWrongType);
  if (s == nullptr) return Reply::of_int(0);
  auto g = s->groups.find(a[2]);
  if (g == s->groups.end()) return Reply::of_int(0);
  std::vector<StreamId> ids(a.size() - 3);
  for (std::size_t j = 3; j < a.size(); j++) {
    if (!parse::stream_id(a[j], ids[j - 3], 0, true, nullptr)) {
      return Reply::error(kErrInvalidStreamId);
    }
  }
  std::int64_t acknowledged = 0;
  for (const StreamId& id : ids) {
    auto nack = g->second.pel.find(id);
    if (nack == g->second.pel.end()) continue;
    remove_nack(g->second, nack);
    acknowledged++;
  }
  return Reply::of_int(acknowledged);
}

Reply SimRedisEngine::cmd_xpending(const Command& a) {
  const bool summary = a.size() == 3;
  if (a.size() != 3 && (a.size() < 6 || a.size() > 9)) return Reply::error(kErrSyntax);
  StreamId start, end;
  std::int64_t count = 0;
  std::int64_t min_idle = 0;
  const std::string* consumer_name = nullptr;
  if (a.size() >= 6) {
    std::size_t idx = 3;
    if (parse::iequals(a[3], "idle")) {
      if (!parse::to_int64(a[4], min_idle)) return Reply::error(kErrNotInteger);
      if (a.size() < 8) return Reply::error(kErrSyntax);
      idx += 2;
    }
    if (!parse::to_int64(a[idx + 2], count)) return Reply::error(kErrNotInteger);
    if (count < 0) count = 0;
    bool ex = false;
    if (!parse::interval_id(a[idx], start, ex, 0)) return Reply::error(kErrInvalidStreamId);
    if (ex && !parse::incr_id(start)) return Reply::error("ERR invalid start ID for the interval");
    if (!parse::interval_id(a[idx + 1], end, ex, UINT64_MAX)) {
      return Reply::error(kErrInvalidStreamId);
    }
    if (ex && !parse::decr_id(end)) return Reply::error("ERR invalid end ID for the interval");
    if (idx + 3 < a.size()) consumer_name = &a[idx + 3];
  }
  Value* v = lookup(a[1]);
  Stream* s = typed<Stream>(v);
  if (v != nullptr && s == nullptr) return Reply::error(kErrWrongType);
  auto g = s == nullptr ? decltype(s->groups.end()){} : s->groups.find(a[2]);
  if (s == nullptr || g == s->groups.end()) return nogroup(a[1], a[2], "");
  StreamGroup& group = g->second;
  if (summary) {
    if (group.pel.empty()) {
      return Reply::array({Reply::of_int(0), Reply::nil(), Reply::nil(), Reply::nil()});
    }
    std::vector<Reply> consumers;
    for (const auto& [name, c] : group.consumers) {
      if (c.pending.empty()) continue;
      consumers.push_back(
          Reply::array({Reply::bulk(name), Reply::bulk(std::to_string(c.pending.size()))}));
    }
    return Reply::array({Reply::of_int(static_cast<std::int64_t>(group.pel.size())),
                         id_reply(group.pel.begin()->first), id_reply(group.pel.rbegin()->first),
                         Reply::array(std::move(consumers))});
  }
  const std::set<StreamId>* only = nullptr;
  if (consumer_name != nullptr) {
    auto c = group.consumers.find(*consumer_name);
    if (c == group.consumers.end()) return Reply::array({});
    only = &c->second.pending;
  }
  const auto now = static_cast<std::int64_t>(now_ms_);
  std::vector<Reply> out;
  auto emit = [&](StreamId id) {
    const StreamNack& nack = group.pel.at(id);
    const std::int64_t idle = now - static_cast<std::int64_t>(nack.delivery_time_ms);
    if (min_idle && idle < min_idle) return;
    count--;
    out.push_back(array_of(id_reply(id), Reply::bulk(nack.consumer),
                           Reply::of_int(idle < 0 ? 0 : idle),
                           Reply::of_int(static_cast<std::int64_t>(nack.delivery_count))));
  };
  if (only != nullptr) {
    for (auto it = only->lower_bound(start); count && it != only->end() && *it <= end; ++it) {
      emit(*it);
    }
  } else {
    for (auto it = group.pel.lower_bound(start); count && it != group.pel.end() && it->first <= end;
         ++it) {
      emit(it->first);
    }
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_xclaim(const Command& a) {
  Value* v = lookup(a[1]);
  Stream* s = typed<Stream>(v);
  if (v != nullptr && s == nullptr) return Reply::error(kErrWrongType);
  auto g = s == nullptr ? decltype(s->groups.end()){} : s->groups.find(a[2]);
  if (s == nullptr || g == s->groups.end()) return nogroup(a[1], a[2], "");
  StreamGroup& group = g->second;
  std::int64_t min_idle = 0;
  if (!parse::to_int64(a[4], min_idle)) {
    return Reply::error("ERR Invalid min-idle-time argument for XCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  std::size_t j = 5;
  std::vector<StreamId> ids;
  for (; j < a.size(); j++) {
    StreamId id;
    if (!parse::stream_id(a[j], id, 0, true, nullptr)) break;
    ids.push_back(id);
  }
  const auto now = static_cast<std::int64_t>(now_ms_);
  std::int64_t retry_count = -1;
  std::int64_t delivery_time = -1;
  bool force = false, justid = false;
  StreamId last_id;
  for (; j < a.size(); j++) {
    const std::size_t more = a.size() - 1 - j;
    const std::string& opt = a[j];
    if (parse::iequals(opt, "force")) {
      force = true;
    } else if (parse::iequals(opt, "justid")) {
      justid = true;
    } else if (parse::iequals(opt, "idle") && more) {
      j++;
      if (!parse::to_int64(a[j], delivery_time)) {
        return Reply::error("ERR Invalid IDLE option argument for XCLAIM");
      }
      delivery_time = now - delivery_time;
    } else if (parse::iequals(opt, "time") && more) {
      j++;
      if (!parse::to_int64(a[j], delivery_time)) {
        return Reply::error("ERR Invalid TIME option argument for XCLAIM");
      }
    } else if (parse::iequals(opt, "retrycount") && more) {
      j++;
      if (!parse::to_int64(a[j], retry_count)) {
        return Reply::error("ERR Invalid RETRYCOUNT option argument for XCLAIM");
      }
    } else if (parse::iequals(opt, "lastid") && more) {
      j++;
      if (!parse::stream_id(a[j], last_id, 0, true, nullptr)) {
        return Reply::error(kErrInvalidStreamId);
      }
    } else {
      return Reply::error("ERR Unrecognized XCLAIM option '" + opt + "'");
    }
  }
  if (last_id > group.last_id) group.last_id = last_id;
  if (delivery_time != -1) {
    if (delivery_time < 0 || delivery_time > now) delivery_time = now;
  } else {
    delivery_time = now;
  }
  const std::string& name = a[3];
  StreamConsumer* consumer = nullptr;
  std::vector<Reply> out;
  for (const StreamId& id : ids) {
    auto nack = group.pel.find(id);
    auto entry = s->entries.find(id);
    if (entry == s->entries.end()) {
      if (nack != group.pel.end()) remove_nack(group, nack);
      continue;
    }
    if (force && nack == group.pel.end()) {
      nack = group.pel.emplace(id, StreamNack{std::string(), now_ms_, 1}).first;
    }
    if (nack == group.pel.end()) continue;
    if (!nack->second.consumer.empty() && min_idle) {
      const std::int64_t idle = now - static_cast<std::int64_t>(nack->second.delivery_time_ms);
      if (idle < min_idle) continue;
    }
    if (consumer == nullptr) consumer = &consumer_for(group, name, now_ms_);
    assign_nack(group, id, nack->second, name, *consumer);
    nack->second.delivery_time_ms = static_cast<std::uint64_t>(delivery_time);
    if (retry_count >= 0) {
      nack->second.delivery_count = static_cast<std::uint64_t>(retry_count);
    } else if (!justid) {
      nack->second.delivery_count++;
    }
    out.push_back(justid ? id_reply(id) : stream_entry_reply(id, entry->second));
  }
  return Reply::array(std::move(out));
}

Reply SimRedisEngine::cmd_xautoclaim(const Command& a) {
  Value* v = lookup(a[1]);
  std::int64_t min_idle = 0;
  if (!parse::to_int64(a[4], min_idle)) {
    return Reply::error("ERR Invalid min-idle-time argument for XAUTOCLAIM");
  }
  if (min_idle < 0) min_idle = 0;
  StreamId start;
  bool start_ex = false;
  if (!parse::interval_id(a[5], start, start_ex, 0)) return Reply::error(kErrInvalidStreamId);
  if (start_ex && !parse::incr_id(start)) {
    return Reply::error("ERR invalid start ID for the interval");
  }
  std::int64_t count = 100;
  bool justid = false;
  for (std::size_t j = 6; j < a.size(); j++) {
    const std::size_t more = a.size() - 1 - j;
    if (parse::iequals(a[j], "count") && more) {
      constexpr std::int64_t kMaxCount = INT64_MAX / 16;
      if (!parse::to_int64(a[j + 1], count) || count < 1 || count > kMaxCount) {
        return Reply::error("ERR COUNT must be > 0");
      }
      j++;
    } else if (parse::iequals(a[j], "justid")) {
      justid = true;
    } else {
      return Reply::error(kErrSyntax);
    }
  }
  Stream* s = typed<Stream>(v);
  if (v != nullptr && s == nullptr) return Reply::error(kErrWrongType);
  auto g = s == nullptr ? decltype(s->groups.end()){} : s->groups.find(a[2]);
  if (s == nullptr || g == s->groups.end()) return nogroup(a[1], a[2], "");
  StreamGroup& group = g->second;
  std::int64_t attempts = count * 10;
  const auto now = static_cast<std::int64_t>(now_ms_);
  const std::string& name = a[3];
  StreamConsumer* consumer = nullptr;
  std::vector<Reply> claimed;
  std::vector<Reply> deleted;
  auto it = group.pel.lower_bound(start);
  while (attempts-- && count && it != group.pel.end()) {
    const StreamId id = it->first;
    auto entry = s->entries.find(id);
    if (entry == s->entries.end()) {
      auto next = std::next(it);
      remove_nack(group, it);
      it = next;
      deleted.push_back(id_reply(id));
      count--;
      continue;
    }
    StreamNack& nack = it->second;
    if (min_idle && now - static_cast<std::int64_t>(nack.delivery_time_ms) < min_idle) {
      ++it;
      continue;
    }
    if (consumer == nullptr) consumer = &consumer_for(group, name, now_ms_);
    assign_nack(group, id, nack, name, *consumer);
    nack.delivery_time_ms = now_ms_;
    if (!justid) nack.delivery_count++;
    claimed.push_back(justid ? id_reply(id) : stream_entry_reply(id, entry->second));
    count--;
    ++it;
  }
  const StreamId cursor = it == group.pel.end() ? StreamId{} : it->first;
  return Reply::array(
      {id_reply(cursor), Reply::array(std::move(claimed)), Reply::array(std::move(deleted))});
}

Reply SimRedisEngine::cmd_xgroup(const Command& a) {
  const std::string& opt = a[1];
  const bool is_create = parse::iequals(opt, "create");
  bool mkstream = false;
  std::int64_t entries_read = -1;
  Stream* s = nullptr;
  StreamGroup* group = nullptr;
  if (a.size() >= 4) {
    if (is_create && a.size() >= 6) {
      for (std::size_t i = 5; i < a.size();) {
        if (parse::iequals(a[i], "mkstream")) {
          mkstream = true;
          i++;
        } else if (parse::iequals(a[i], "entriesread") && i + 1 < a.size()) {
          if (!parse::to_int64(a[i + 1], entries_read)) return Reply::error(kErrNotInteger);
          if (entries_read < 0 && entries_read != -1) {
            return Reply::error("ERR value for ENTRIESREAD must be positive or -1");
          }
          i += 2;
        } else {
          return subcommand_syntax_error(a);
        }
      }
    }
    Value* v = lookup(a[2]);
    s = typed<Stream>(v);
    if (v != nullptr && s == nullptr) return Reply::error(kErrWrongType);
    if (!mkstream) {
      if (s == nullptr) {
        return Reply::error(
            "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
            "want to use the MKSTREAM option to create an empty stream automatically.");
      }
    }
    if (s != nullptr) {
      auto g = s->groups.find(a[3]);
      if (g != s->groups.end()) group = &g->second;
    }
    if (group == nullptr &&
        (parse::iequals(opt, "setid") || parse::iequals(opt, "createconsumer") ||
         parse::iequals(opt, "delconsumer"))) {
      return nogroup_for_key(a[3], a[2]);
    }
  }
  if (is_create && a.size() >= 5 && a.size() <= 8) {
    StreamId id;
    if (a[4] == "$") {
      id = s != nullptr ? s->last_id : StreamId{};
    } else if (!parse::stream_id(a[4], id, 0, true, nullptr)) {
      return Reply::error(kErrInvalidStreamId);
    }
    if (s == nullptr) s = &std::get<Stream>(create<Stream>(a[2]).data);
    auto [g, inserted] = s->groups.try_emplace(a[3]);
    if (!inserted) return Reply::error("BUSYGROUP Consumer Group name already exists");
    g->second.last_id = id;
    g->second.entries_read = entries_read;
    return Reply::status("OK");
  }
  if (parse::iequals(opt, "setid") && (a.size() == 5 || a.size() == 7)) {
    StreamId id;
    if (a[4] == "$") {
      id = s->last_id;
    } else if (!parse::stream_id(a[4], id, 0, false, nullptr)) {
      return Reply::error(kErrInvalidStreamId);
    }
    if (a.size() == 7) {
      if (!parse::iequals(a[5], "entriesread")) return subcommand_syntax_error(a);
      if (!parse::to_int64(a[6], entries_read)) return Reply::error(kErrNotInteger);
      if (entries_read < 0 && entries_read != -1) {
        return Reply::error("ERR value for ENTRIESREAD must be positive or -1");
      }
    }
    group->last_id = id;
    group->entries_read = entries_read;
    return Reply::status("OK");
  }
  if (parse::iequals(opt, "destroy") && a.size() == 4) {
    if (group == nullptr) return Reply::of_int(0);
    s->groups.erase(a[3]);
    return Reply::of_int(1);
  }
  if (parse::iequals(opt, "createconsumer") && a.size() == 5) {
    auto [c, inserted] = group->consumers.try_emplace(a[4]);
    if (inserted) c->second.seen_time_ms = now_ms_;
    return Reply::of_int(inserted ? 1 : 0);
  }
  if (parse::iequals(opt, "delconsumer") && a.size() == 5) {
    auto c = group->consumers.find(a[4]);
    if (c == group->consumers.end()) return Reply::of_int(0);
    const auto pending = static_cast<std::int64_t>(c->second.pending.size());
    for (const StreamId& id : c->second.pending) group->pel.erase(id);
    group->consumers.erase(c);
    return Reply::of_int(pending);
  }
  return subcommand_syntax_error(a);
}

Reply SimRedisEngine::cmd_xinfo(const Command& a) {
  const std::string& opt = a[1];
  Value* v = lookup(a[2]);
  if (v == nullptr) return Reply::error("ERR no such key");
  Stream* s = typed<Stream>(v);
  if (s == nullptr) return Reply::error(kErrWrongType);
  const auto now = static_cast<std::int64_t>(now_ms_);
  if (parse::iequals(opt, "consumers") && a.size() == 4) {
    auto g = s->groups.find(a[3]);
    if (g == s->groups.end()) return nogroup_for_key(a[3], a[2]);
    std::vector<Reply> out;
    for (const auto& [name, c] : g->second.consumers) {
      std::int64_t idle = now - static_cast<std::int64_t>(c.seen_time_ms);
      if (idle < 0) idle = 0;
      out.push_back(Reply::array({Reply::bulk("name"), Reply::bulk(name), Reply::bulk("pending"),
                                  Reply::of_int(static_cast<std::int64_t>(c.pending.size())),
                                  Reply::bulk("idle"), Reply::of_int(idle)}));
    }
    return Reply::array(std::move(out));
  }
  if (parse::iequals(opt, "groups") && a.size() == 3) {
    std::vector<Reply> out;
    for (const auto& [name, g] : s->groups) {
      Reply lag = Reply::nil();
      if (s->entries_added == 0) {
        lag = Reply::of_int(0);
      } else if (g.entries_read != -1 &&
                 !stream_range_has_tombstones(*s, g.last_id, kMaxStreamId)) {
        lag = Reply::of_int(static_cast<std::int64_t>(s->entries_added) - g.entries_read);
      } else {
        const std::int64_t read = stream_estimate_distance(*s, g.last_id);
        if (read != -1) lag = Reply::of_int(static_cast<std::int64_t>(s->entries_added) - read);
      }
      out.push_back(Reply::array(
          {Reply::bulk("name"), Reply::bulk(name), Reply::bulk("consumers"),
           Reply::of_int(static_cast<std::int64_t>(g.consumers.size())), Reply::bulk("pending"),
           Reply::of_int(static_cast<std::int64_t>(g.pel.size())), Reply::bulk("last-delivered-id"),
           id_reply(g.last_id), Reply::bulk("entries-read"),
           g.entries_read == -1 ? Reply::nil() : Reply::of_int(g.entries_read), Reply::bulk("lag"),
           std::move(lag)}));
    }
    return Reply::array(std::move(out));
  }
  if (parse::iequals(opt, "stream")) {
    if (a.size() > 3) {
      if (parse::iequals(a[3], "full")) {
        return Reply::error("ERR SimRedis does not implement XINFO STREAM FULL");
      }
      return subcommand_syntax_error(a);
    }
    // radix-tree-nodes depends on Redis's radix tree layout; this reports keys + 1.
    const auto nodes = static_cast<std::int64_t>(s->nodes.size());
    Reply first = Reply::nil();
    Reply last = Reply::nil();
    if (!s->entries.empty()) {
      first = stream_entry_reply(s->entries.begin()->first, s->entries.begin()->second);
      last = stream_entry_reply(s->entries.rbegin()->first, s->entries.rbegin()->second);
    }
    return Reply::array({Reply::bulk("length"),
                         Reply::of_int(static_cast<std::int64_t>(s->entries.size())),
                         Reply::bulk("radix-tree-keys"),
                         Reply::of_int(nodes),
                         Reply::bulk("radix-tree-nodes"),
                         Reply::of_int(nodes + 1),
                         Reply::bulk("last-generated-id"),
                         id_reply(s->last_id),
                         Reply::bulk("max-deleted-entry-id"),
                         id_reply(s->max_deleted_id),
                         Reply::bulk("entries-added"),
                         Reply::of_int(static_cast<std::int64_t>(s->entries_added)),
                         Reply::bulk("recorded-first-entry-id"),
                         id_reply(s->first_id),
                         Reply::bulk("groups"),
                         Reply::of_int(static_cast<std::int64_t>(s->groups.size())),
                         Reply::bulk("first-entry"),
                         std::move(first),
                         Reply::bulk("last-entry"),
                         std::move(last)});
  }
  return subcommand_syntax_error(a);
}

}  // namespace seqby::sim
