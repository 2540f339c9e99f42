-- handler_exit: the `record` test handler leaves the lease unit's handler: it deletes its own
-- in-progress marker (handler_enter.lua), never another owner's (a lapsed marker may have been
-- taken by another instance).
-- KEYS[1] = UNIT:__inprogress__:G (the marker)
-- ARGV[1] = this execution's marker value, ARGV[2] = event id, ARGV[3] = how it ended ('ok' or
-- 'failed: REASON', as the engine's exit record says)
-- Returns 1 when the marker was deleted, 0 when it was not ours (or gone).
-- Journal (lib/journal.lua): exit (ARGV[3]).
local J = journal_of(1, 3)
local deleted = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  deleted = redis.call('DEL', KEYS[1])
end
journal(J, 'exit', ARGV[2], ARGV[3])
return deleted
