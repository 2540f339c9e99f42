-- fenced_commit: the effect sink used by tests and scenarios, with optimistic concurrency on a
-- per-key sequence number under the lease (lib/commit_effect.lua says how it decides).
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
return commit_effect(J, KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3])
