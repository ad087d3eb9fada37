DROP TRIGGER tasks_marks_revived;
DROP TRIGGER tasks_horizon_moved;
DROP TRIGGER tasks_late_moved;
DROP INDEX tasks_horizon_check;
CREATE INDEX tasks_horizon_check ON tasks (region, retry_horizon_at, id);
DROP INDEX tasks_late_check;
CREATE INDEX tasks_late_check ON tasks (destination_id, not_before, id)
    WHERE finalized_at IS NULL;
ALTER TABLE tasks DROP COLUMN horizon_seen;
ALTER TABLE tasks DROP COLUMN late_seen;
