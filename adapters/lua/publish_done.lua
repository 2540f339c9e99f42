-- publish_done: the last step of a publish under the cluster key layout (step P2), in the index's
-- hash slot: this publish's intent is closed (the count goes down by one, the field goes at 0).
-- Sent only after publish_append.lua answered, and never sent twice: a second close would close
-- another publisher's intent.
-- KEYS[1] = {C:__partitions__}:__publishing__ (intents)
-- ARGV[1] = K (the partition key)
-- Returns the key's open intents left.
local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left <= 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return left
