-- live_members: the live engine instances of a (category, group). An owner whose member key has
-- expired is removed from the member set in the same step, so the check and the removal cannot
-- race with its re-announcement.
-- KEYS[1] = C:__members__:G (set), KEYS[2..n] = C:__member__:G:O for each listed owner O
-- ARGV[1..n-1] = the owner ids, aligned with KEYS[2..n]
-- Returns the live owner ids, in argument order.
local alive = {}
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    table.insert(alive, ARGV[i - 1])
  else
    redis.call('SREM', KEYS[1], ARGV[i - 1])
  end
end
return alive
