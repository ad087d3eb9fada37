-- The cancelled tasks, for the reports' counts (`remit status`) and the
-- searches by state, newest first: every row an operator cancelled, by
-- region and id. `cancelled_at` is written only
-- by a cancel, never by a claim or a finish, so both stay in-place (HOT)
-- updates. Built without blocking writes (see metadata.toml); one statement,
-- as an index built concurrently must be. A build that failed halfway
-- leaves an invalid index of this name: `remit migrate` drops it before it
-- runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_cancelled
    ON tasks (region, id) WHERE cancelled_at IS NOT NULL;
