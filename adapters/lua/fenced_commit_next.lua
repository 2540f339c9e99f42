-- fenced_commit_next: the one fenced script per event where the handler commits through the
-- fenced effect sink (docs/ARCHITECTURE.md "One script per event"): under one lease check, the
-- commit of the effect of the entry just handled, then, unless the sink refused it as out of
-- order, fenced_next's ack of that entry and its read or held check (lib/commit_next.lua). An
-- out-of-order commit acknowledges and reads nothing: the entry stays pending and is handled
-- again.
-- KEYS[1] = lease key, KEYS[2] = C:K (the partition stream), KEYS[3] = sink hash (last_seq,
-- last_token), KEYS[4] = effects hash (field = seq, value = effect)
-- ARGV[1..6] = fenced_next's (token O:N, group, '0' or '>', the entry to acknowledge, how many
-- new entries, a held entry's id or ''), ARGV[7] = seq, ARGV[8] = effect (stored verbatim)
-- In the steady state (lib/commit_next.lua steady_step: the ack of ARGV[4], the held entry
-- ARGV[6] entered, the commit the next in order) returns the ack's count alone, 0 or 1.
-- Otherwise returns {outcome, last seq after the commit, committer token} for out_of_order,
-- else those three followed by fenced_next's reply, or by its error reply when the step failed
-- after the commit stood (NOGROUP: a failover took the group back; an error reply of the
-- script's own would hide a commit it keeps); FENCED when the lease is not ours (nothing
-- committed, acknowledged or read).
-- Journal (lib/journal.lua): commit or commit_rejected with seq ARGV[7], then fenced_next's;
-- commit_fenced for a refusal.
local J = journal_of(4, 8)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'commit_fenced')
end
local steady = steady_step(J, KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[4], ARGV[5],
                           ARGV[6], ARGV[7], ARGV[8])
if steady then
  return steady
end
return commit_next_step(J, KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2], ARGV[3], ARGV[4],
                        ARGV[5], ARGV[6], ARGV[7], ARGV[8])
