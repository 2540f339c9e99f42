-- publish_append: the second step of a publish under the cluster key layout (step P1), in the
-- partition's hash slot: the event is appended to its partition stream. The key is in the index
-- already (publish_intent.lua) and stays there until this publish's intent is closed
-- (publish_done.lua), which the publisher sends only once this step has answered.
-- KEYS[1] = C:{K} (the partition stream)
-- ARGV[1] = event type, ARGV[2] = event data (JSON)
-- Returns the new entry id.
-- Journal (lib/journal.lua): publish, with the publisher's seq and detail.
local J = journal_of(1, 2)
local id = redis.call('XADD', KEYS[1], '*', 'type', ARGV[1], 'data', ARGV[2])
journal(J, 'publish', id)
return id
