-- drop_stale_consumers: delete the group's old-generation consumers (named O':M with M lower
-- than this holder's generation) whose pending list is empty, under the lease. XGROUP
-- DELCONSUMER discards a consumer's pending entries, so a consumer with any pending entry is
-- kept (reclaim moves them first). Consumers not named O:M are left alone.
-- KEYS[1] = lease key, KEYS[2] = C:K
-- ARGV[1] = token O:N, ARGV[2] = group, ARGV[3] = N (this holder's generation)
-- Returns the number of consumers deleted, or FENCED / NOGROUP.
-- Journal (lib/journal.lua): drop (the consumers deleted) when it deleted any, or lose.
local J = journal_of(2, 3)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'lose')
end
local consumers = redis.pcall('XINFO', 'CONSUMERS', KEYS[2], ARGV[2])
if type(consumers) == 'table' and consumers.err then
  return consumers
end
local own_generation = tonumber(ARGV[3])
local dropped = 0
local names = {}
for _, consumer in ipairs(consumers) do
  local name, pending = nil, nil
  for i = 1, #consumer, 2 do
    if consumer[i] == 'name' then
      name = consumer[i + 1]
    elseif consumer[i] == 'pending' then
      pending = consumer[i + 1]
    end
  end
  local generation = name and tonumber(string.match(name, '^[^:]+:(%d+)$'))
  if generation and generation < own_generation and pending == 0 then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[2], ARGV[2], name)
    dropped = dropped + 1
    names[#names + 1] = name
  end
end
if dropped > 0 then
  journal(J, 'drop', '', 'consumers=' .. table.concat(names, ','))
end
return dropped
