-- check_lease: a fenced no-op, run right before a handler is entered so that a stale owner never
-- enters a next event (DESIGN section 4).
-- KEYS[1] = lease key
-- ARGV[1] = token O:N
-- Returns 1, or a FENCED error reply.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease not held by ' .. ARGV[1])
end
return 1
