-- The late check reads `task_queue_late` now. Dropped without
-- blocking writes (see metadata.toml).
DROP INDEX CONCURRENTLY IF EXISTS task_queue_late_check
