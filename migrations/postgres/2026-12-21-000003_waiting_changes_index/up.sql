-- The rows whose change waits for an attempt, for the settle that runs in
-- every process every few seconds: few at any time, and none of the columns
-- a claim or a finish writes is in it, so both stay in-place (HOT) updates.
-- Built without blocking writes to `tasks` (outside a transaction, see
-- metadata.toml). A build that failed halfway leaves an invalid index of
-- this name: `remit migrate` drops it before it runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_waiting_change
    ON tasks (region) WHERE waiting_change IS NOT NULL;
