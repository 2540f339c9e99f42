-- reap_end: the last step of a reap under the cluster key layout (step R3), in the index's hash
-- slot. After a reap (reap_stream.lua deleted the stream) the key leaves the reaping set; a
-- publish that began after reap_begin.lua has put it back in the index itself. After anything
-- else (not cold, fenced, no answer) the key moves back to the index.
-- KEYS[1] = C:__partitions__, KEYS[2] = {C:__partitions__}:__reaping__
-- ARGV[1] = K (the partition key), ARGV[2] = 1 when reap_stream.lua answered that it reaped, else 0
-- Returns 1 when the key left the reaping set for good, 0 when it moved back (or was not there).
if ARGV[2] == '1' then
  return redis.call('SREM', KEYS[2], ARGV[1])
end
redis.call('SMOVE', KEYS[2], KEYS[1], ARGV[1])
return 0
