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
-- the steady state (steady_step below) is answered by its ack's count alone.
local keys_per_step, args_per_step = 4, 8
if #ARGV ~= 2 * #KEYS then
  keys_per_step, args_per_step = 5, 16
end
local steps = #KEYS / keys_per_step
if steps < 1 or steps ~= math.floor(steps) or #ARGV ~= args_per_step * steps then
  return redis.error_reply('ERR fenced_steps: 4 keys and 8 values per step (journaled: 5 and ' ..
                           '16), got ' .. #KEYS .. ' keys and ' .. #ARGV .. ' values')
end
-- The steady state of a step: the entry just handled acknowledged, a held entry entered, and
-- with a commit, that commit accepted. Its reply says nothing the caller did not send but the
-- ack's count, so it is that integer (0 or 1) rather than fenced_commit_next's six values or
-- fenced_next's three: making that table and converting it cost the server a sixth of the step
-- (bench/real_redis.md "The steady step answered in short"). The same writes and journal records
-- as the general step, in the same order. Returns nil, having written nothing, for a step in
-- any other state (no ack or held entry, a bad count, a commit that is not the next in order);
-- after a commit that stood, an ack refused (NOGROUP) gets the general step's reply.
local function steady_step(J, k, a, token)
  local ack_id, held, seq = ARGV[a + 4], ARGV[a + 6], ARGV[a + 7]
  if ack_id == '' or held == '' or not read_count(ARGV[a + 5]) then
    return nil
  end
  if seq ~= '' then
    if tonumber(seq) ~= last_seq(KEYS[k + 3]) + 1 then
      return nil
    end
    write_commit(J, KEYS[k + 3], KEYS[k + 4], token, seq, ARGV[a + 8])
  end
  local acked = ack_entry(J, KEYS[k + 2], ARGV[a + 2], ack_id)
  if type(acked) == 'table' then
    if seq ~= '' then
      return {'accepted', tonumber(seq), token, acked}
    end
    return acked
  end
  journal(J, 'read', held, 'delivery=1')
  return acked
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
    out[i] = steady_step(J, k, a, token)
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
