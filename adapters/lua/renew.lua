-- renew: extend a lease by compare-and-set; only the exact holder O:N may (ADR decision 5).
-- KEYS[1] = lease key
-- ARGV[1] = token O:N, ARGV[2] = ttl in milliseconds
-- Returns 1, or a FENCED error reply when the lease is not (or no longer) ours.
-- Journal (lib/journal.lua): renew, or lose (the refusal).
local J = journal_of(1, 2)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'lose')
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
journal(J, 'renew', '')
return 1
