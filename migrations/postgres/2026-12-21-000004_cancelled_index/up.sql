-- The cancelled tasks, for the reports' counts (`remit status`): the
-- region of every row an operator cancelled. `cancelled_at` is written only
-- by a cancel, never by a claim or a finish, so both stay in-place (HOT)
-- updates. Built without blocking writes (see metadata.toml); one statement,
-- as an index built concurrently must be.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_cancelled
    ON tasks (region) WHERE cancelled_at IS NOT NULL;
