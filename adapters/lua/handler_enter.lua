-- handler_enter: the `record` test handler marks the lease unit as having an event in its handler
-- (a cross-instance in-progress marker), so that two instances inside one unit's handler at once
-- are seen by the server. A marker left by this same owner (its exit's reply or DEL was lost)
-- is the owner's own, never an overlap: it is replaced. Another owner's marker is left alone and
-- reported.
-- KEYS[1] = UNIT:__inprogress__:G (the marker)
-- ARGV[1] = the marker value (owner id:[category:]event id), ARGV[2] = owner id,
-- ARGV[3] = the marker's ttl in milliseconds, ARGV[4] = event id
-- Returns the other owner's marker value when there is one (an overlap), else nil.
-- Journal (lib/journal.lua): warn (inprogress_overlap holder=...) on an overlap, then enter.
local J = journal_of(1, 4)
local holder = redis.call('GET', KEYS[1])
local own = ARGV[2] .. ':'
if holder and string.sub(holder, 1, #own) ~= own then
  journal(J, 'warn', ARGV[4], 'inprogress_overlap holder=' .. holder)
  journal(J, 'enter', ARGV[4])
  return holder
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
journal(J, 'enter', ARGV[4])
return false
