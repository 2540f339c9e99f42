-- journal_note: append a record that no script decides (a run header, a fault a driver struck, a
-- liveness marker, an engine's warning or resume) to a decision journal, in server order with
-- the decisions around it (lib/journal.lua).
-- KEYS[1] = the journal stream
-- ARGV[1] = MAXLEN (~), ARGV[2..] = the record's fields and values, in pairs (history fields)
-- Returns the entry id.
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, 2))
