-- renew_many: the heartbeat's renew of many leases in one step (ADR decision 5): each lease is
-- extended by compare-and-set exactly as renew.lua extends one, independently of the others.
-- KEYS[1..n] = the lease keys; when journaling, KEYS[n+1..2n] = each lease unit's journal stream
-- ARGV[1] = ttl in milliseconds, ARGV[2] = the journal's MAXLEN ~ ('0': no journal),
-- ARGV[3] = node (owner id), ARGV[4] = group, then per lease: the token O:N, and when
-- journaling also its category, key and generation (1 or 4 values per lease)
-- Returns one character per lease, in order, as one string: '1' renewed, '0' refused (the lease is
-- not ours). One bulk reply, where an integer per lease was a reply element each for the server
-- to write and the client to parse.
-- Journal (lib/journal.lua): renew, or lose (the refusal), in each lease unit's journal.
local journaling = ARGV[2] ~= '0'
local stride = journaling and 4 or 1
local n = (#ARGV - 4) / stride
local out = {}
-- The loop below runs once per lease, up to a batch of 1,024 a call, every heartbeat: it reads
-- KEYS and ARGV through locals rather than a global lookup each, and calls journal() only when
-- journaling (bench/real_redis.md "The renewal's Lua loop"). redis.call stays spelled out: the
-- ACL lists' test reads each script's commands from it.
local keys, argv = KEYS, ARGV
local ttl = argv[1]
-- One MGET reads every lease (a GET each costs a call of its own); the script is atomic, so what
-- it read is what each compare-and-set compares against, as with a GET per lease. A user whose
-- ACL predates MGET here (the least privilege of a release before it, kept through a rolling
-- upgrade) is not sent it (redis.acl_check_cmd, Redis 7.0: asking logs no denial, where a
-- refused MGET was an ACL LOG entry every heartbeat): then one GET per lease, as that release
-- did.
local held = {err = 'not asked'}
if not redis.acl_check_cmd or redis.acl_check_cmd('MGET', KEYS[1]) then
  held = redis.pcall('MGET', unpack(KEYS, 1, n))
end
if held.err then
  held = {}
  for i = 1, n do
    held[i] = redis.call('GET', KEYS[i])
  end
end
for i = 1, n do
  local a = 4 + (i - 1) * stride
  local token = argv[a + 1]
  local J = nil
  if journaling then
    J = journal_for(keys[n + i], argv[2], argv[3], argv[a + 2], argv[a + 3], argv[4], argv[a + 4])
  end
  if held[i] == token then
    redis.call('PEXPIRE', keys[i], ttl)
    if J then
      journal(J, 'renew', '')
    end
    out[i] = '1'
  else
    journal(J, 'lose', '', 'FENCED lease not held by ' .. token)
    out[i] = '0'
  end
end
return table.concat(out)
