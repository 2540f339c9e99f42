-- acquire_many: acquire.lua for many partitions in one step (ADR decision 5), in the order given,
-- until `want` leases were granted: each is taken exactly as acquire.lua takes one (a free lease,
-- or one this owner still holds, at a fresh generation; one held by another owner is left).
-- A unit whose streams are given is taken only when at least one of them is a stream and none
-- is a key of another type: an index member with no stream, or whose key holds a string, is no
-- partition (docs/ARCHITECTURE.md "Index members that are no partition"), and its lease is not
-- taken (so no empty stream is created for it, and nothing loops on it).
-- KEYS[1..n] = the lease keys, KEYS[n+1..2n] = their generation counters (C:K:__fence__); when
-- journaling, KEYS[2n+1..3n] = each lease unit's journal stream; then s keys per unit, its
-- streams (C:K, or a process manager's C:X of each category), s = ARGV[6]
-- ARGV[1] = owner id (no colon), ARGV[2] = ttl in milliseconds, ARGV[3] = want (>= 1),
-- ARGV[4] = the journal's MAXLEN ~ ('0': no journal), ARGV[5] = group, ARGV[6] = s (streams
-- per unit, '0': not looked at), then when journaling each partition's category and key
-- (2 values per partition)
-- Returns one value per partition tried, in order (it stops after the want-th grant): the new
-- generation, 0 when another owner holds the lease, or (a bulk string) why the unit is no
-- partition: 'no stream C:K' or 'C:K is a string, not a stream'.
-- Journal (lib/journal.lua): acquire at the new generation, in the unit's journal.
local journaling = ARGV[4] ~= '0'
local streams = tonumber(ARGV[6])
local before = journaling and 3 or 2
local n = #KEYS / (before + streams)
local want = tonumber(ARGV[3])
local prefix = ARGV[1] .. ':'

-- Why unit i cannot be a partition, or nil when it can (or its streams are not looked at).
local function no_partition(i)
  if streams == 0 then
    return nil
  end
  local missing = {}
  for j = 1, streams do
    local key = KEYS[before * n + (i - 1) * streams + j]
    local kind = redis.call('TYPE', key)['ok']
    if kind == 'none' then
      missing[#missing + 1] = key
    elseif kind ~= 'stream' then
      return key .. ' is a ' .. kind .. ', not a stream'
    end
  end
  if #missing == streams then
    return 'no stream ' .. table.concat(missing, ', ')
  end
  return nil
end

local out = {}
local granted = 0
for i = 1, n do
  if granted >= want then
    break
  end
  local current = redis.call('GET', KEYS[i])
  local why = nil
  if current and string.sub(current, 1, #prefix) ~= prefix then
    out[i] = 0
  else
    why = no_partition(i)
  end
  if why then
    out[i] = why
  elseif out[i] == nil then
    local generation = redis.call('INCR', KEYS[n + i])
    redis.call('SET', KEYS[i], prefix .. generation, 'PX', ARGV[2])
    granted = granted + 1
    out[i] = generation
    if journaling then
      local a = 6 + (i - 1) * 2
      journal(journal_for(KEYS[2 * n + i], ARGV[4], ARGV[1], ARGV[a + 1], ARGV[a + 2], ARGV[5],
                          generation), 'acquire', '')
    end
  end
end
return out
