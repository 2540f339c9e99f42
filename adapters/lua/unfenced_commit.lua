-- unfenced_commit: the KNOWN-BROKEN variant no_fence of fenced_commit.lua (the same script without its lease
-- check), selected only by RedisBrokerOptions::unfenced in simulated runs. Rejected by the ADR
-- ("Alternatives Considered", fencing tokens): a stale owner would still commit.
-- fenced_commit: the effect sink used by tests and scenarios, with optimistic concurrency on a
-- per-key sequence number (1, 2, 3, ...) under the lease. Only seq == last + 1 is accepted; a
-- seq at or below the last is a duplicate (for seq == last the reply names the token that
-- committed it, so a caller whose earlier reply was lost can recognise its own commit).
-- KEYS[1] = lease key, KEYS[2] = sink hash (last_seq, last_token),
-- KEYS[3] = effects hash (field = seq, value = effect)
-- ARGV[1] = token O:N, ARGV[2] = seq, ARGV[3] = effect (opaque text, stored verbatim)
-- Returns {'accepted'|'duplicate'|'out_of_order', last seq after the call, committer token},
-- or FENCED.
local last = tonumber(redis.call('HGET', KEYS[2], 'last_seq') or '0')
local seq = tonumber(ARGV[2])
if seq <= last then
  local by = ''
  if seq == last then
    by = redis.call('HGET', KEYS[2], 'last_token') or ''
  end
  return {'duplicate', last, by}
end
if seq ~= last + 1 then
  return {'out_of_order', last, ''}
end
redis.call('HSET', KEYS[2], 'last_seq', ARGV[2], 'last_token', ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
return {'accepted', seq, ARGV[1]}
