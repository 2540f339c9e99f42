-- acquire_many: acquire.lua for many partitions in one step (ADR decision 5), in the order given,
-- until `want` leases were granted: each is taken exactly as acquire.lua takes one (a free lease,
-- or one this owner still holds, at a fresh generation; one held by another owner is left).
-- KEYS[1..n] = the lease keys, KEYS[n+1..2n] = their generation counters (C:K:__fence__); when
-- journaling, KEYS[2n+1..3n] = each lease unit's journal stream
-- ARGV[1] = owner id (no colon), ARGV[2] = ttl in milliseconds, ARGV[3] = want (>= 1),
-- ARGV[4] = the journal's MAXLEN ~ ('0': no journal), ARGV[5] = group, then when journaling
-- each partition's category and key (2 values per partition)
-- Returns one integer per partition tried, in order (it stops after the want-th grant): the new
-- generation, or 0 when another owner holds the lease.
-- Journal (lib/journal.lua): acquire at the new generation, in the unit's journal.
local journaling = ARGV[4] ~= '0'
local n = journaling and #KEYS / 3 or #KEYS / 2
local want = tonumber(ARGV[3])
local prefix = ARGV[1] .. ':'
local out = {}
local granted = 0
for i = 1, n do
  if granted >= want then
    break
  end
  local current = redis.call('GET', KEYS[i])
  if current and string.sub(current, 1, #prefix) ~= prefix then
    out[i] = 0
  else
    local generation = redis.call('INCR', KEYS[n + i])
    redis.call('SET', KEYS[i], prefix .. generation, 'PX', ARGV[2])
    granted = granted + 1
    out[i] = generation
    if journaling then
      local a = 5 + (i - 1) * 2
      journal(journal_for(KEYS[2 * n + i], ARGV[4], ARGV[1], ARGV[a + 1], ARGV[a + 2], ARGV[5],
                          generation), 'acquire', '')
    end
  end
end
return out
