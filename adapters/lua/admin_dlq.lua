-- admin_dlq: the operator moves a halted partition's head to the partition's DLQ stream and
-- acknowledges it (ADR decision 6), atomically and only while ID is still the head: the lowest
-- pending id of group G. It also deletes the halt record, so the owner goes on with the next
-- event, in order. The DLQ entry is a copy of the head's fields (none when the entry itself was
-- deleted from the stream) followed by source_id (the head's id), group, reason (the halt
-- record's reason, "" when none was recorded) and delivery_count.
-- KEYS[1] = C:K (the partition stream), KEYS[2] = C:K:__halt__:G (the halt record),
-- KEYS[3] = C:K:dlq (the partition's DLQ)
-- ARGV[1] = group G, ARGV[2] = entry id
-- Returns {DLQ entry id, 1 when a halt record was deleted else 0}. Refuses, changing nothing,
-- with NOENTRY when the stream holds no entry ID (and ID is not pending either), or NOTHEAD
-- naming the current head (or saying nothing is pending) when ID is not the head.
-- Journal (lib/journal.lua): dlq (detail 'operator ...'; a refusal changes nothing: none).
local J = journal_of(3, 2)
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1)
local head = nil
if #pending > 0 then
  head = pending[1][1]
end
local entries = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])
if head ~= ARGV[2] then
  if #entries == 0 then
    return redis.error_reply('NOENTRY no entry ' .. ARGV[2] .. ' in ' .. KEYS[1])
  end
  if head == nil then
    return redis.error_reply('NOTHEAD ' .. ARGV[2] .. ' is not the head of group ' .. ARGV[1] ..
                             ' on ' .. KEYS[1] .. ': nothing pending')
  end
  return redis.error_reply('NOTHEAD ' .. ARGV[2] .. ' is not the head of group ' .. ARGV[1] ..
                           ' on ' .. KEYS[1] .. ': the head is ' .. head)
end
local fields = {}
if #entries > 0 then
  fields = entries[1][2]
end
local reason = redis.call('HGET', KEYS[2], 'reason')
if not reason then
  reason = ''
end
table.insert(fields, 'source_id')
table.insert(fields, head)
table.insert(fields, 'group')
table.insert(fields, ARGV[1])
table.insert(fields, 'reason')
table.insert(fields, reason)
table.insert(fields, 'delivery_count')
table.insert(fields, tostring(pending[1][4]))
local dlq_id = redis.call('XADD', KEYS[3], '*', unpack(fields))
redis.call('XACK', KEYS[1], ARGV[1], head)
journal(J, 'dlq', head)
return {dlq_id, redis.call('DEL', KEYS[2])}
