-- fenced_steps: the steps of many partitions in one script (docs/ARCHITECTURE.md "Steps of many
-- partitions in one script"), for an instance whose workers step at once. Each step is exactly
-- one partition's fenced_commit_next (with a commit) or fenced_next (without), under a lease
-- check of its own: one step's refusal or failure is its own reply and leaves the others alone.
-- Nothing of a partition's order or fence changes: its steps still come one after the other,
-- each the lease check before entering its next entry. No journal (the engine journals with
-- one script per step).
-- Per step i, KEYS[4i-3..4i] = lease key, C:K (the partition stream), sink hash, effects hash;
-- ARGV[8i-7..8i] = token O:N (also the consumer name), group, '0' or '>', the entry to
-- acknowledge ('' for none), how many new entries, a held entry's id or '', seq ('' for no
-- commit: then the sink and effects keys are not touched), effect.
-- Returns one reply per step, in order: fenced_commit_next's (with a commit) or fenced_next's,
-- or the error reply either would have answered (FENCED when the lease is not ours: nothing
-- committed, acknowledged or read; NOGROUP).
local steps = #KEYS / 4
if steps < 1 or steps ~= math.floor(steps) or #ARGV ~= 8 * steps then
  return redis.error_reply('ERR fenced_steps: 4 keys and 8 values per step, got ' .. #KEYS ..
                           ' keys and ' .. #ARGV .. ' values')
end
local out = {}
for i = 1, steps do
  local k = 4 * (i - 1)
  local a = 8 * (i - 1)
  local token = ARGV[a + 1]
  if redis.call('GET', KEYS[k + 1]) ~= token then
    out[i] = redis.error_reply('FENCED lease not held by ' .. token)
  elseif ARGV[a + 7] == '' then
    out[i] = next_step(nil, KEYS[k + 2], ARGV[a + 2], token, ARGV[a + 3], ARGV[a + 4],
                       ARGV[a + 5], ARGV[a + 6])
  else
    out[i] = commit_next_step(nil, KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], token, ARGV[a + 2],
                              ARGV[a + 3], ARGV[a + 4], ARGV[a + 5], ARGV[a + 6], ARGV[a + 7],
                              ARGV[a + 8])
  end
end
return out
