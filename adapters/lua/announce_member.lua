-- announce_member: record this engine instance as a live member of a (category, group): a member
-- key with a PX ttl (renewed by the heartbeat) plus the member set that lists it.
-- KEYS[1] = C:__member__:G:O (string), KEYS[2] = C:__members__:G (set)
-- ARGV[1] = owner id, ARGV[2] = ttl in milliseconds
-- Returns 1.
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
