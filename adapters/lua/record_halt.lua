-- record_halt: the owner records in Redis that its partition halted on a poison head (ADR
-- decision 6: the halt is visible to operators), under the lease. `seqby admin` reads it; an
-- operator's skip or dlq of the head deletes it, and the owner then goes on with the next event.
-- KEYS[1] = lease key, KEYS[2] = C:K:__halt__:G
-- ARGV[1] = token O:N, ARGV[2] = head entry id, ARGV[3] = reason (the handler's last error),
-- ARGV[4] = the head's delivery count
-- Returns the server time in milliseconds recorded as `since_ms`, or FENCED.
-- Journal (lib/journal.lua): halt (the reason), or lose.
local J = journal_of(2, 4)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'lose')
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[2], 'id', ARGV[2], 'reason', ARGV[3], 'since_ms', tostring(now_ms),
           'owner', ARGV[1], 'delivery_count', ARGV[4])
journal(J, 'halt', ARGV[2], 'failed: ' .. ARGV[3])
return now_ms
