-- admin_skip: the operator acknowledges a halted partition's head without processing it (ADR
-- decision 6), atomically and only while ID is still the head: the lowest pending id of group G.
-- It also deletes the halt record, so the owner goes on with the next event, in order.
-- KEYS[1] = C:K (the partition stream), KEYS[2] = C:K:__halt__:G (the halt record)
-- ARGV[1] = group G, ARGV[2] = entry id
-- Returns 1 when a halt record was deleted, 0 when there was none. Refuses, changing nothing,
-- with NOENTRY when the stream holds no entry ID (and ID is not pending either), or NOTHEAD
-- naming the current head (or saying nothing is pending) when ID is not the head.
-- Journal (lib/journal.lua): skip (detail 'operator ...'; a refusal changes nothing: none).
local J = journal_of(2, 2)
local pending = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1)
local head = nil
if #pending > 0 then
  head = pending[1][1]
end
if head ~= ARGV[2] then
  if #redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2]) == 0 then
    return redis.error_reply('NOENTRY no entry ' .. ARGV[2] .. ' in ' .. KEYS[1])
  end
  if head == nil then
    return redis.error_reply('NOTHEAD ' .. ARGV[2] .. ' is not the head of group ' .. ARGV[1] ..
                             ' on ' .. KEYS[1] .. ': nothing pending')
  end
  return redis.error_reply('NOTHEAD ' .. ARGV[2] .. ' is not the head of group ' .. ARGV[1] ..
                           ' on ' .. KEYS[1] .. ': the head is ' .. head)
end
redis.call('XACK', KEYS[1], ARGV[1], head)
journal(J, 'skip', head)
return redis.call('DEL', KEYS[2])
