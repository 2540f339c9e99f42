-- publish_intent: the first step of a publish under the cluster key layout (docs/ARCHITECTURE.md
-- "The cluster key layout", step P0), in the index's hash slot: the key is added to the
-- category's partition index and one open publish intent is counted for it, atomically. While
-- the count is above 0 no reaper takes the key out of the index (reap_begin.lua), so the entry
-- the publisher appends next (publish_append.lua, another slot) is always discoverable.
-- KEYS[1] = C:__partitions__ (the index), KEYS[2] = {C:__partitions__}:__publishing__ (intents)
-- ARGV[1] = K (the partition key)
-- Returns the key's open intents, this one included.
-- All or nothing under an ACL (lib/permitted.lua), as publish.lua.
local refused = refused_write({{'SADD', KEYS[1], ARGV[1]}, {'HINCRBY', KEYS[2], ARGV[1], '1'}})
if refused then
  return refused
end
redis.call('SADD', KEYS[1], ARGV[1])
return redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
