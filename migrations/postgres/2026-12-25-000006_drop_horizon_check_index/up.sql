-- The horizon check reads `task_queue_horizon_unseen` now; every insert
-- of a task wrote an entry here for nothing. Dropped without blocking
-- writes (see metadata.toml).
DROP INDEX CONCURRENTLY IF EXISTS tasks_horizon_check
