-- fenced_steps: the steps of many partitions in one script (docs/ARCHITECTURE.md "Steps of many
-- partitions in one script"), for an instance whose workers step at once. Each step is exactly
-- one partition's fenced_commit_next (with a commit) or fenced_next (without), under a lease
-- check of its own: one step's refusal or failure is its own reply and leaves the others alone.
-- Nothing of a partition's order or fence changes: its steps still come one after the other,
-- each the lease check before entering its next entry.
-- Per step, 4 KEYS: lease key, C:K (the partition stream), sink hash, effects hash; and 8 ARGV:
-- token O:N (also the consumer name), group, '0' or '>', the entry to acknowledge ('' for none),
-- how many new entries, a held entry's id or '', seq ('' for no commit: then the sink and
-- effects keys are not touched), effect. Journaled (lib/journal.lua), every step appends its
-- journal tail to its own: a 5th key and 8 more values (so 5 keys and 16 values a step).
-- Returns one reply per step, in order: fenced_commit_next's (with a commit) or fenced_next's,
-- or the error reply either would have answered (FENCED when the lease is not ours: nothing
-- committed, acknowledged or read; NOGROUP); each step journals as that script does. A step in
-- the steady state is answered by its ack's count alone (lib/commit_next.lua steady_step).
local keys_per_step, args_per_step = 4, 8
if #ARGV ~= 2 * #KEYS then
  keys_per_step, args_per_step = 5, 16
end
local steps = #KEYS / keys_per_step
if steps < 1 or steps ~= math.floor(steps) or #ARGV ~= args_per_step * steps then
  return redis.error_reply('ERR fenced_steps: 4 keys and 8 values per step (journaled: 5 and ' ..
                           '16), got ' .. #KEYS .. ' keys and ' .. #ARGV .. ' values')
end
local out = {}
for i = 1, steps do
  local k = keys_per_step * (i - 1)
  local a = args_per_step * (i - 1)
  local J = nil
  if keys_per_step == 5 then
    J = journal_at(KEYS[k + 5], a + 8)
  end
  local token = ARGV[a + 1]
  local commit = ARGV[a + 7] ~= ''
  if redis.call('GET', KEYS[k + 1]) ~= token then
    out[i] = fenced(J, commit and 'commit_fenced' or 'read_fenced', token)
  else
    out[i] = steady_step(J, KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], token, ARGV[a + 2],
                         ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[a + 8])
    if out[i] == nil and not commit then
      out[i] = next_step(J, KEYS[k + 2], ARGV[a + 2], token, ARGV[a + 3], ARGV[a + 4],
                         ARGV[a + 5], ARGV[a + 6])
    elseif out[i] == nil then
      out[i] = commit_next_step(J, KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], token, ARGV[a + 2],
                                ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7],
                                ARGV[a + 8])
    end
  end
end
return out
