-- The rows whose change waits for an attempt, for the settle that runs in
-- every process every few seconds: few at any time, and none of the columns
-- a claim or a finish writes is in it, so both stay in-place (HOT) updates.
-- Built without blocking writes to `tasks` (outside a transaction, see
-- metadata.toml); IF NOT EXISTS, so a run interrupted halfway can be run
-- again after dropping an invalid index by hand.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_waiting_change
    ON tasks (region) WHERE waiting_change IS NOT NULL;
