-- publish: append an event to its partition stream and record the key in the category's
-- partition index, atomically (ADR decisions 1 and 7).
-- KEYS[1] = C:K (the partition stream), KEYS[2] = C:__partitions__ (the index)
-- ARGV[1] = K (the partition key), ARGV[2] = event type, ARGV[3] = event data (JSON)
-- Returns the new entry id.
-- Journal (lib/journal.lua): publish, with the publisher's seq and detail.
-- All or nothing under an ACL (lib/permitted.lua): a command the user may not run is refused
-- before the first write, with NOPERM naming it (the journal's XADD is the entry's command).
local J = journal_of(2, 3)
local refused = refused_write({{'XADD', KEYS[1], '*', 'type', ''}, {'SADD', KEYS[2], ARGV[1]}})
if refused then
  return refused
end
local id = redis.call('XADD', KEYS[1], '*', 'type', ARGV[2], 'data', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
journal(J, 'publish', id)
return id
