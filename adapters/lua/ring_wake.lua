-- ring_wake: rings an engine instance's doorbell (docs/ARCHITECTURE.md "Idle partitions are
-- woken"): one entry on its private stream, which its blocking XREAD over its idle partitions
-- watches too, so that the read returns and is sent again over the instance's current idle set.
-- A wake-up is not a decision: nothing is fenced and nothing journaled.
-- KEYS[1] = the doorbell stream (C:__wake__:O)
-- ARGV[1] = how long the doorbell outlives its last ring, in milliseconds
-- Returns the new entry's id.
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '1', '*', 'ring', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return id
