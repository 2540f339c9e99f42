-- reap: the owner removes a cold partition (ADR decision 7, Consequences), under the lease, only
-- when every group subscribed to the category (KEYS[4], Broker::subscribe) has a consumer group
-- on the stream, it is empty (every group has been delivered every entry and has nothing
-- pending) and it has been idle (no entry appended) for at least ARGV[3] ms of server time. A
-- subscriber that has not joined the stream yet (a process manager that has not taken the value:
-- down, not started, or its slots full) has not read it, so the partition is not reaped under
-- it. It deletes the stream (with its groups), the key's index entry and the lease, atomically:
-- a publish (one script too) runs wholly before, and then the partition is not empty, or wholly
-- after, and then it re-creates the stream and the index entry, so discovery finds the
-- partition again. The generation counter C:K:__fence__ is kept, so a re-created partition never
-- hands out a generation a stale owner could still hold.
-- KEYS[1] = lease key, KEYS[2] = C:K, KEYS[3] = C:__partitions__, KEYS[4] = C:__subscribers__
-- ARGV[1] = token O:N, ARGV[2] = the partition key, ARGV[3] = idle threshold in milliseconds
-- Returns 1 when reaped, 0 when the partition is not cold, or FENCED.
-- Journal (lib/journal.lua): reap (idle_ms=ARGV[3]) when reaped, or lose.
local J = journal_of(4, 3)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'lose')
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  return 0
end
local function field(flat, name)
  for i = 1, #flat, 2 do
    if flat[i] == name then
      return flat[i + 1]
    end
  end
  return nil
end
local last_id = field(redis.call('XINFO', 'STREAM', KEYS[2]), 'last-generated-id')
local groups = redis.call('XINFO', 'GROUPS', KEYS[2])
if #groups == 0 and redis.call('XLEN', KEYS[2]) > 0 then
  return 0
end
local joined = {}
for _, group in ipairs(groups) do
  if tonumber(field(group, 'pending')) > 0 or field(group, 'last-delivered-id') ~= last_id then
    return 0
  end
  joined[field(group, 'name')] = true
end
for _, subscriber in ipairs(redis.call('SMEMBERS', KEYS[4])) do
  if not joined[subscriber] then
    return 0
  end
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local last_ms = tonumber(string.match(last_id, '^(%d+)-'))
if now_ms - last_ms < tonumber(ARGV[3]) then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[2])
redis.call('DEL', KEYS[1])
journal(J, 'reap', '', 'idle_ms=' .. ARGV[3])
return 1
