-- fenced_ack: acknowledge one entry under the lease. XACK itself takes no consumer name, so the
-- lease check is the only fence (DESIGN section 3). Acknowledging twice is harmless (returns 0).
-- KEYS[1] = lease key, KEYS[2] = C:K
-- ARGV[1] = token O:N, ARGV[2] = group, ARGV[3] = entry id
-- Returns the number of entries acknowledged (0 or 1), or FENCED.
-- Journal (lib/journal.lua): ack (detail 'again' when it was acknowledged already) or ack_fenced.
local J = journal_of(2, 3)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'ack_fenced')
end
local acked = redis.pcall('XACK', KEYS[2], ARGV[2], ARGV[3])
if type(acked) == 'number' then
  journal(J, 'ack', ARGV[3], acked == 0 and 'again' or '')
end
return acked
