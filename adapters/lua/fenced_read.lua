-- fenced_read: read ONE entry of a partition for consumer O:N of group G, under the lease
-- (lib/read_one.lua reads it). The previous release's read step, kept for its workers during a
-- rolling upgrade and for the KNOWN-BROKEN variants; the engine reads through fenced_next.
-- KEYS[1] = lease key, KEYS[2] = C:K (the partition stream)
-- ARGV[1] = token O:N (also the consumer name), ARGV[2] = group, ARGV[3] = '0' or '>'
-- Returns nil when there is nothing to read, else {id, type, data, delivery_count};
-- FENCED when the lease is not ours; NOGROUP when the group does not exist.
-- Journal (lib/journal.lua): read (delivery=N) or read_fenced.
local J = journal_of(2, 3)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'read_fenced')
end
return read_one(J, KEYS[2], ARGV[2], ARGV[1], ARGV[3])
