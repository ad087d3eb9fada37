-- The horizon check's reads: the region's live tasks whose horizon was
-- not yet announced, by (`retry_horizon_at`, task). A claim or a finish
-- writes nothing here (a finish that ends a task deletes its queue row); a
-- move or a replay, which write the queue row already, one entry more. It
-- takes the place of `tasks_horizon_check` (dropped next), which held
-- every task, ended ones too. Built without blocking writes (see
-- metadata.toml); one statement, as an index built concurrently must be.
-- A build that failed halfway leaves an invalid index of this name:
-- `remit migrate` drops it before it runs this again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS task_queue_horizon_unseen
    ON task_queue (region, retry_horizon_at, task_id) WHERE NOT horizon_seen
