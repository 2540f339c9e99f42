-- fenced_ack: acknowledge one entry under the lease. XACK itself takes no consumer name, so the
-- lease check is the only fence (DESIGN section 3). Acknowledging twice is harmless (returns 0).
-- KEYS[1] = lease key, KEYS[2] = C:K
-- ARGV[1] = token O:N, ARGV[2] = group, ARGV[3] = entry id
-- Returns the number of entries acknowledged (0 or 1), or FENCED.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease not held by ' .. ARGV[1])
end
return redis.pcall('XACK', KEYS[2], ARGV[2], ARGV[3])
