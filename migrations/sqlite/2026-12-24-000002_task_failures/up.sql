-- Every move of a task into `failed`, kept as a record for the reports
-- (see the PostgreSQL migration of the same name): a replayed failure
-- stays in the hour it happened. Instants are microseconds.
CREATE TABLE task_failures (
    task_id TEXT NOT NULL,
    failed_at INTEGER NOT NULL,
    region TEXT NOT NULL,
    destination_id TEXT NOT NULL,
    failure_reason TEXT NOT NULL
) STRICT;
CREATE INDEX task_failures_by_time ON task_failures (region, failed_at);

INSERT INTO task_failures (task_id, failed_at, region, destination_id, failure_reason)
SELECT id, finalized_at, region, destination_id, coalesce(failure_reason, 'unknown')
FROM tasks
WHERE state = 'failed' AND finalized_at IS NOT NULL;

CREATE TRIGGER task_failures_recorded AFTER UPDATE OF state ON tasks
    FOR EACH ROW WHEN NEW.state = 'failed' AND OLD.state IS NOT 'failed'
BEGIN
    INSERT INTO task_failures (task_id, failed_at, region, destination_id, failure_reason)
    VALUES (NEW.id, NEW.finalized_at, NEW.region, NEW.destination_id,
            coalesce(NEW.failure_reason, 'unknown'));
END;
