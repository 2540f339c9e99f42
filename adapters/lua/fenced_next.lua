-- fenced_next: the one fenced step between two events of a partition (docs/ARCHITECTURE.md "One
-- script per event"): acknowledge the entry just handled, then, under one lease check, either
-- read for consumer O:N of group G or, for an entry an earlier read delivered and held, say it
-- may be entered. Either is the lease check before entering that entry (nothing is awaited
-- between this reply and the handler): a batch read delivers many entries at once, and each is
-- still entered only after a lease check of its own.
-- KEYS[1] = lease key, KEYS[2] = C:K (the partition stream)
-- ARGV[1] = token O:N (also the consumer name), ARGV[2] = group, ARGV[3] = '0' or '>',
-- ARGV[4] = the entry id to acknowledge first ('' for none), ARGV[5] = how many new entries ('>')
-- one read delivers at most (the pending read '0' reads one), ARGV[6] = a held entry's id to
-- check for instead of reading ('' for none)
-- Returns {acked, '', id, type, data, delivery_count, ...} (an entry per four values, the first
-- to enter now, the rest held), acked alone when the held entry ARGV[6] may be entered after
-- the ack of ARGV[4] (the steady state: lib/next_step.lua enter_held), or
-- {acked, last_id} when there is nothing to read: acked is -1 when no ack was asked, else
-- XACK's count (0: acknowledged already); last_id is, for a read of new entries ('>'), the
-- stream's last entry id ('0-0' when empty; '' for '0'), after which an idle worker waits for new
-- entries (XREAD BLOCK; a wake-up, not a decision). FENCED when the lease is not ours: nothing
-- acknowledged, nothing read. NOGROUP when the group does not exist.
-- Journal (lib/journal.lua): ack (detail 'again' when acknowledged already), then read
-- (delivery=N) of the entry to enter now; read_fenced for a refusal.
local J = journal_of(2, 6)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'read_fenced')
end
if steady_shape(ARGV[4], ARGV[5], ARGV[6]) then
  return enter_held(J, KEYS[2], ARGV[2], ARGV[4], ARGV[6])
end
return next_step(J, KEYS[2], ARGV[2], ARGV[1], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
