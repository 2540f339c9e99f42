-- release: delete a lease by compare-and-set on graceful stop. Releasing a lease that is no
-- longer ours changes nothing (it is not an error: the lease is gone from us either way).
-- KEYS[1] = lease key
-- ARGV[1] = token O:N
-- Returns 1 when the lease was ours and is now deleted, 0 otherwise.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
return 1
