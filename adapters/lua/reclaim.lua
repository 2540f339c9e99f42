-- reclaim: move every pending entry of the group's older consumers to this consumer O:N, under
-- the lease (ADR decision 5, crash reclaim). JUSTID: ownership moves without counting as a
-- delivery, so an entry's delivery count keeps counting real reads only (the reads that follow
-- bump it). XAUTOCLAIM scans at most 10*COUNT entries a call; the cursor is looped here at most
-- ARGV[4] times, and the caller loops again while the returned cursor is not 0-0.
-- KEYS[1] = lease key, KEYS[2] = C:K
-- ARGV[1] = token O:N, ARGV[2] = group, ARGV[3] = COUNT per call, ARGV[4] = calls at most,
-- ARGV[5] = start cursor ('0-0' to start)
-- Returns {claimed count, next cursor}, or FENCED / NOGROUP.
-- Journal (lib/journal.lua): reclaim (count=N) when it moved any, or lose (the refusal).
local J = journal_of(2, 5)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'lose')
end
local cursor = ARGV[5]
local claimed = 0
for call = 1, tonumber(ARGV[4]) do
  local reply = redis.pcall('XAUTOCLAIM', KEYS[2], ARGV[2], ARGV[1], 0, cursor,
                            'COUNT', ARGV[3], 'JUSTID')
  if type(reply) == 'table' and reply.err then
    return reply
  end
  cursor = reply[1]
  claimed = claimed + #reply[2]
  if cursor == '0-0' then
    break
  end
end
if claimed > 0 then
  journal(J, 'reclaim', '', 'count=' .. claimed)
end
return {claimed, cursor}
