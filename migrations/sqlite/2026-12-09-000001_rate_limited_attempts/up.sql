-- `remit status` counts each destination's 429s of the last hour. Partial,
-- so only attempts answered 429 get an entry.
CREATE INDEX attempts_rate_limited ON attempts (recorded_at) WHERE http_status = 429;
