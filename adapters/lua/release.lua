-- release: delete a lease by compare-and-set on graceful stop. Releasing a lease that is no
-- longer ours changes nothing (it is not an error: the lease is gone from us either way).
-- KEYS[1] = lease key
-- ARGV[1] = token O:N
-- Returns 1 when the lease was ours and is now deleted, 0 otherwise.
-- Journal (lib/journal.lua): release, or lose when the lease was gone already.
local J = journal_of(1, 1)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  journal(J, 'lose', '', 'lease gone at release')
  return 0
end
redis.call('DEL', KEYS[1])
journal(J, 'release', '')
return 1
