-- The alert check's marks (PostgreSQL's migration of the same name says
-- why): whether a task was announced late, and whether its horizon was.
-- The check reads the live tasks without the mark through the indexes
-- below, and marks what it found; a move of the deadline clears the first
-- mark, a move of the horizon the second, and a task that comes back to
-- life loses both (the triggers below). The cursors the check walked by
-- are left for a build from before to run during a rolling deploy; they
-- are no longer read.
ALTER TABLE tasks ADD COLUMN late_seen INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN horizon_seen INTEGER NOT NULL DEFAULT 0;

-- What the old cursors had passed was announced, or not late when it
-- could have been: marked, so nothing is announced twice.
UPDATE tasks SET late_seen = 1
WHERE finalized_at IS NULL AND EXISTS (
    SELECT 1 FROM destination_alerts a
    WHERE a.destination_id = tasks.destination_id
      AND (tasks.not_before, tasks.id) <= (a.late_checked_not_before, a.late_checked_task));
UPDATE tasks SET horizon_seen = 1
WHERE finalized_at IS NULL AND EXISTS (
    SELECT 1 FROM region_alerts r
    WHERE r.region = tasks.region
      AND (tasks.retry_horizon_at, tasks.id) <= (r.horizon_checked_at, r.horizon_checked_task));

DROP INDEX tasks_late_check;
CREATE INDEX tasks_late_check ON tasks (destination_id, not_before, id)
    WHERE finalized_at IS NULL AND late_seen = 0;
DROP INDEX tasks_horizon_check;
CREATE INDEX tasks_horizon_check ON tasks (region, retry_horizon_at, id)
    WHERE finalized_at IS NULL AND horizon_seen = 0;

CREATE TRIGGER tasks_late_moved AFTER UPDATE OF not_before ON tasks
    WHEN NEW.not_before IS NOT OLD.not_before
BEGIN
    UPDATE tasks SET late_seen = 0 WHERE id = NEW.id;
END;
CREATE TRIGGER tasks_horizon_moved AFTER UPDATE OF retry_horizon_at ON tasks
    WHEN NEW.retry_horizon_at IS NOT OLD.retry_horizon_at
BEGIN
    UPDATE tasks SET horizon_seen = 0 WHERE id = NEW.id;
END;
CREATE TRIGGER tasks_marks_revived AFTER UPDATE OF finalized_at ON tasks
    WHEN OLD.finalized_at IS NOT NULL AND NEW.finalized_at IS NULL
BEGIN
    UPDATE tasks SET late_seen = 0, horizon_seen = 0 WHERE id = NEW.id;
END;
