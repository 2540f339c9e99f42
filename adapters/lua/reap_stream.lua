-- reap_stream: the middle step of a reap under the cluster key layout (step R2), in the
-- partition's hash slot: reap.lua's checks and deletes, without the index (another slot: the
-- reaper took the key out of it before, reap_begin.lua, and settles it after, reap_end.lua). The
-- owner removes a cold partition under its lease, only when every group subscribed to the
-- category (ARGV[3], read by the reaper from C:__subscribers__ before this step) has a consumer
-- group on the stream, every group has been delivered every entry and has nothing pending, and
-- nothing was appended for at least ARGV[2] ms of server time. It deletes the stream (with its
-- groups) and the lease; the generation counter is kept.
-- KEYS[1] = lease key, KEYS[2] = C:{K}
-- ARGV[1] = token O:N, ARGV[2] = idle threshold in milliseconds, ARGV[3] = the subscribed groups,
-- each followed by a newline (group names hold no control byte)
-- Returns 1 when reaped, 0 when the partition is not cold, or FENCED.
-- Journal (lib/journal.lua): reap (idle_ms=ARGV[2]) when reaped, or lose.
local J = journal_of(2, 3)
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
for subscriber in string.gmatch(ARGV[3], '([^\n]+)\n') do
  if not joined[subscriber] then
    return 0
  end
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local last_ms = tonumber(string.match(last_id, '^(%d+)-'))
if now_ms - last_ms < tonumber(ARGV[2]) then
  return 0
end
redis.call('DEL', KEYS[2])
redis.call('DEL', KEYS[1])
journal(J, 'reap', '', 'idle_ms=' .. ARGV[2])
return 1
