-- unfenced_ack: the KNOWN-BROKEN variant no_fence of fenced_ack.lua (the same script without its lease
-- check), selected only by RedisBrokerOptions::unfenced in simulated runs. Rejected by the ADR
-- ("Alternatives Considered", fencing tokens): a stale owner would still ack.
-- fenced_ack: acknowledge one entry under the lease. XACK itself takes no consumer name, so the
-- lease check is the only fence (DESIGN section 3). Acknowledging twice is harmless (returns 0).
-- KEYS[1] = lease key, KEYS[2] = C:K
-- ARGV[1] = token O:N, ARGV[2] = group, ARGV[3] = entry id
-- Returns the number of entries acknowledged (0 or 1), or FENCED.
return redis.pcall('XACK', KEYS[2], ARGV[2], ARGV[3])
