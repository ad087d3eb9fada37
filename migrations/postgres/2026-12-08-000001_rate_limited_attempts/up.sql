-- `remit status` counts each destination's 429s of the last hour. Partial,
-- so only attempts answered 429 get an entry: the delivery path's other
-- inserts pay nothing for it. Built in the migration's transaction, which
-- holds finishes' attempt inserts until it is built: on a large attempts
-- table, migrate at a quiet moment (docs/operations.md). CONCURRENTLY
-- would not block them, but it waits for every other transaction of the
-- database, including a second process waiting for the migration lock.
CREATE INDEX attempts_rate_limited ON attempts (recorded_at) WHERE http_status = 429;
