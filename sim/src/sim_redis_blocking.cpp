// Blocked XREAD, following Redis 7.0's blocked.c: a blocking XREAD with nothing newer than its ids
// is registered on each of its streams; an XADD to one of them (a plain command or inside a
// script) marks the stream ready, and once the client command has run, the ready streams are
// served in the order they became ready, each to its readers in the order they blocked. A reader
// is served when the stream's last id is past the id it reads after, with the entries of that one
// stream (serveClientsBlockedOnStreamKey), and is then removed from all its streams. Timeouts and
// connections are the caller's (unblock()): this file never reads a clock.
#include "seqby/core/check.h"
#include "sim_redis_engine.h"

namespace seqby::sim {

BlockResult SimRedisEngine::execute_blocking(const Command& command, BlockWake wake) {
  SEQBY_CHECK(!in_script_ && block_wake_ == nullptr);
  SEQBY_CHECK(wake);
  block_wake_ = &wake;
  blocked_now_ = 0;
  Reply reply = execute(command);
  block_wake_ = nullptr;
  if (blocked_now_ == 0) return BlockResult{std::move(reply), 0};
  SEQBY_CHECK(reply.is_nil());
  const BlockId id = blocked_now_;
  blocked_now_ = 0;
  return BlockResult{std::nullopt, id};
}

void SimRedisEngine::block_current(
    const std::vector<std::pair<const std::string*, StreamId>>& streams, std::int64_t count) {
  SEQBY_CHECK(block_wake_ != nullptr && blocked_now_ == 0);
  SEQBY_CHECK(!streams.empty());
  const BlockId id = block_next_++;
  BlockedRead read;
  read.count = count;
  read.wake = std::move(*block_wake_);
  read.keys.reserve(streams.size());
  for (const auto& [key, after] : streams) {
    auto& readers = blocked_on_[*key];
    // A key given twice: the reader is on its list once, with the first id (blockForKeys).
    if (!readers.empty() && readers.back().first == id) continue;
    readers.emplace_back(id, after);
    read.keys.push_back(*key);
  }
  blocked_.emplace(id, std::move(read));
  blocked_now_ = id;
}

bool SimRedisEngine::unblock(BlockId id) {
  auto it = blocked_.find(id);
  if (it == blocked_.end()) return false;
  for (const std::string& key : it->second.keys) {
    auto on = blocked_on_.find(key);
    SEQBY_CHECK(on != blocked_on_.end());
    auto& readers = on->second;
    for (auto r = readers.begin(); r != readers.end(); ++r) {
      if (r->first != id) continue;
      readers.erase(r);
      break;
    }
    if (readers.empty()) blocked_on_.erase(on);
  }
  blocked_.erase(it);
  return true;
}

void SimRedisEngine::signal_stream_ready(const std::string& key) {
  if (blocked_on_.find(key) == blocked_on_.end()) return;  // nobody reads it
  for (const std::string& ready : ready_keys_) {
    if (ready == key) return;  // signalled already in this command
  }
  ready_keys_.push_back(key);
}

void SimRedisEngine::serve_blocked() {
  std::vector<std::string> ready = std::move(ready_keys_);
  ready_keys_.clear();
  for (const std::string& key : ready) {
    auto on = blocked_on_.find(key);
    if (on == blocked_on_.end()) continue;  // its readers were served on another stream
    // Only a stream serves XREAD readers: one deleted or replaced by another type meanwhile
    // leaves them blocked (Redis 7.0 unblocks only XREADGROUP readers of a deleted stream).
    Value* v = lookup(key);
    Stream* s = v == nullptr ? nullptr : std::get_if<Stream>(&v->data);
    if (s == nullptr) continue;
    // A copy: serving a reader removes it from this list.
    const std::vector<std::pair<BlockId, StreamId>> readers = on->second;
    for (const auto& [id, after] : readers) {
      if (s->last_id <= after) continue;
      auto it = blocked_.find(id);
      SEQBY_CHECK(it != blocked_.end());
      StreamId start = after;
      parse::incr_id(start);  // cannot overflow: last_id > after
      std::vector<Reply> entries;
      for (auto e = s->entries.lower_bound(start); e != s->entries.end(); ++e) {
        entries.push_back(stream_entry_reply(e->first, e->second));
        if (it->second.count && static_cast<std::int64_t>(entries.size()) == it->second.count) {
          break;
        }
      }
      // The entries of this one stream (possibly none, if the script that added them also
      // deleted them), wrapped as an XREAD reply of one stream.
      Reply reply = array_of(array_of(Reply::bulk(key), Reply::array(std::move(entries))));
      BlockWake wake = std::move(it->second.wake);
      unblock(id);
      wake(std::move(reply));
    }
  }
  SEQBY_CHECK(ready_keys_.empty());  // serving writes nothing
}

}  // namespace seqby::sim
