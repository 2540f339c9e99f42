-- fenced_next: the one fenced step between two events of a partition (docs/ARCHITECTURE.md "One
-- script per event"): acknowledge the entry just handled, then read the next ONE entry for
-- consumer O:N of group G, under one lease check. The read is the lease check before entering
-- that entry (nothing is awaited between this reply and the handler).
-- KEYS[1] = lease key, KEYS[2] = C:K (the partition stream)
-- ARGV[1] = token O:N (also the consumer name), ARGV[2] = group, ARGV[3] = '0' or '>',
-- ARGV[4] = the entry id to acknowledge first ('' for none)
-- Returns {acked, id, type, data, delivery_count}, or {acked, last_id} when there is nothing to
-- read: acked is -1 when no ack was asked, else XACK's count (0: acknowledged already); last_id
-- is, for a read of new entries ('>'), the stream's last entry id ('0-0' when empty; '' for '0'), after which an idle worker waits for new
-- entries (XREAD BLOCK; a wake-up, not a decision). FENCED when the lease is not ours: nothing
-- acknowledged, nothing read. NOGROUP when the group does not exist.
-- Journal (lib/journal.lua): ack (detail 'again' when acknowledged already), then read
-- (delivery=N); read_fenced for a refusal.
local J = journal_of(2, 4)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'read_fenced')
end
local acked = -1
if ARGV[4] ~= '' then
  acked = redis.pcall('XACK', KEYS[2], ARGV[2], ARGV[4])
  if type(acked) == 'table' then
    return acked
  end
  journal(J, 'ack', ARGV[4], acked == 0 and 'again' or '')
end
local entry = read_one(J, KEYS[2], ARGV[2], ARGV[1], ARGV[3])
if type(entry) == 'table' and entry.err then
  return entry
end
if entry then
  return {acked, '', entry[1], entry[2], entry[3], entry[4]}
end
if ARGV[3] ~= '>' then
  return {acked, ''}
end
local last = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', 1)
return {acked, last[1] and last[1][1] or '0-0'}
