-- reap_begin: the first step of a reap under the cluster key layout (step R1), in the index's
-- hash slot: the key moves from the index to the reaping set (which discovery reads too), only
-- when no publish intent is open for it (publish_intent.lua). A key already in the reaping set
-- (a reaper died between its steps) is taken as it is: the reap resumes.
-- KEYS[1] = C:__partitions__, KEYS[2] = {C:__partitions__}:__reaping__,
-- KEYS[3] = {C:__partitions__}:__publishing__
-- ARGV[1] = K (the partition key)
-- Returns 1 when the key is in the reaping set (go on with reap_stream.lua), 0 when a publish is
-- open or the key is in neither set (nothing to reap: stop).
local open = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if open > 0 then
  return 0
end
if redis.call('SMOVE', KEYS[1], KEYS[2], ARGV[1]) == 1 then
  return 1
end
return redis.call('SISMEMBER', KEYS[2], ARGV[1])
