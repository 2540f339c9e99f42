-- fenced_commit: the effect sink used by tests and scenarios, with optimistic concurrency on a
-- per-key sequence number (1, 2, 3, ...) under the lease. Only seq == last + 1 is accepted; a
-- seq at or below the last is a duplicate (for seq == last the reply names the token that
-- committed it, so a caller whose earlier reply was lost can recognise its own commit).
-- KEYS[1] = lease key, KEYS[2] = sink hash (last_seq, last_token),
-- KEYS[3] = effects hash (field = seq, value = effect)
-- ARGV[1] = token O:N, ARGV[2] = seq, ARGV[3] = effect (opaque text, stored verbatim)
-- Returns {'accepted'|'duplicate'|'out_of_order', last seq after the call, committer token},
-- or FENCED.
-- Journal (lib/journal.lua): commit, commit_rejected (duplicate or out_of_order, the last seq)
-- or commit_fenced, with seq ARGV[2].
local J = journal_of(3, 3)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'commit_fenced')
end
local last = tonumber(redis.call('HGET', KEYS[2], 'last_seq') or '0')
local seq = tonumber(ARGV[2])
if seq <= last then
  local by = ''
  if seq == last then
    by = redis.call('HGET', KEYS[2], 'last_token') or ''
  end
  journal(J, 'commit_rejected', '', 'duplicate last=' .. last .. ' by ' .. by, ARGV[2])
  return {'duplicate', last, by}
end
if seq ~= last + 1 then
  journal(J, 'commit_rejected', '', 'out_of_order last=' .. last, ARGV[2])
  return {'out_of_order', last, ''}
end
redis.call('HSET', KEYS[2], 'last_seq', ARGV[2], 'last_token', ARGV[1])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
journal(J, 'commit', '', nil, ARGV[2])
return {'accepted', seq, ARGV[1]}
