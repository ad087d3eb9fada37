-- The alert check's horizons about to run out: the region's tasks by
-- (`retry_horizon_at`, id), which the check walks from the last one it
-- looked at to `horizon_warning` ahead, once over each task. A claim or a
-- finish never writes `retry_horizon_at` (a replay or a move does), so
-- both stay in-place (HOT) updates. Built without blocking writes (see
-- metadata.toml); one statement, as an index built concurrently must be. A
-- build that failed halfway leaves an invalid index of this name: `remit
-- migrate` drops it before it runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS tasks_horizon_check
    ON tasks (region, retry_horizon_at, id);
