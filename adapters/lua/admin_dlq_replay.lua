-- admin_dlq_replay: the operator appends a copy of DLQ entry ID back to the tail of its partition
-- stream, after every event published since (`seqby admin dlq-replay --after-later-events`: an
-- explicit choice, since order is then not the original one), records K in the partition index
-- and deletes the DLQ entry, atomically: one script, as publish is, so a reap runs wholly before
-- or after it. The copy holds the entry's fields without the four admin_dlq appended last
-- (source_id, group, reason, delivery_count). It takes no lease: the owner reads the copy as a
-- new event.
-- KEYS[1] = C:K:dlq, KEYS[2] = C:K (the partition stream), KEYS[3] = C:__partitions__ (absent
-- under the cluster layout, where the index is in another slot: the caller opens a publish
-- intent first, publish_intent.lua, which indexes K, and closes it after, publish_done.lua, as a
-- publish does, so a reap still runs wholly before or after the copy)
-- ARGV[1] = the DLQ entry id, ARGV[2] = K
-- Returns the new entry id on C:K. Refuses, changing nothing, with NOENTRY when the DLQ holds no
-- entry ID, or when the entry holds no event fields (the head was gone when it was moved).
local entries = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
if #entries == 0 then
  return redis.error_reply('NOENTRY no entry ' .. ARGV[1] .. ' in ' .. KEYS[1])
end
local fields = entries[1][2]
local n = #fields
if n >= 8 and fields[n - 7] == 'source_id' and fields[n - 5] == 'group' and
    fields[n - 3] == 'reason' and fields[n - 1] == 'delivery_count' then
  n = n - 8
end
if n == 0 then
  return redis.error_reply('NOENTRY entry ' .. ARGV[1] .. ' of ' .. KEYS[1] ..
                           ' holds no event fields to replay')
end
local event = {}
for i = 1, n do
  event[i] = fields[i]
end
local id = redis.call('XADD', KEYS[2], '*', unpack(event))
if KEYS[3] then
  redis.call('SADD', KEYS[3], ARGV[2])
end
redis.call('XDEL', KEYS[1], ARGV[1])
return id
