-- Operational events that reach a person (see the PostgreSQL migration of
-- the same name). Instants are INTEGER microseconds since the epoch; ids
-- are TEXT.

-- The outbox with the new kinds and `data`: SQLite cannot change a CHECK,
-- so the table is made again (it is small: rows are deleted once
-- scheduled). rowid keeps the order, and the copy keeps the rows' order.
CREATE TABLE destination_events_new (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN (
        'destination.disabled', 'destination.enabled', 'destination.failing',
        'destination.recovered', 'task.failed', 'reminder.late',
        'reminder.horizon_ending')),
    destination_id TEXT NOT NULL,
    region TEXT NOT NULL,
    reason TEXT,
    at INTEGER NOT NULL,
    last_error TEXT,
    data TEXT
);
INSERT INTO destination_events_new (id, kind, destination_id, region, reason, at, last_error)
SELECT id, kind, destination_id, region, reason, at, last_error
FROM destination_events ORDER BY rowid;
DROP TABLE destination_events;
ALTER TABLE destination_events_new RENAME TO destination_events;
CREATE INDEX destination_events_by_region ON destination_events (region);

-- Each move of a task into `failed`, recorded by the trigger below in the
-- transaction that made it, until the check announces (or drops) it.
CREATE TABLE failures_to_announce (
    task_id TEXT NOT NULL,
    failed_at INTEGER NOT NULL,
    region TEXT NOT NULL,
    destination_id TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    reminder_id TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    attempt_count INTEGER NOT NULL,
    not_before INTEGER NOT NULL,
    PRIMARY KEY (task_id, failed_at)
) STRICT;
CREATE INDEX failures_to_announce_by_region
    ON failures_to_announce (region, failed_at, task_id);

CREATE TRIGGER failures_to_announce_recorded AFTER UPDATE OF state ON tasks
    FOR EACH ROW WHEN NEW.state = 'failed' AND OLD.state IS NOT 'failed'
BEGIN
    INSERT OR IGNORE INTO failures_to_announce (task_id, failed_at, region, destination_id,
                                                tenant_id, reminder_id, failure_reason,
                                                attempt_count, not_before)
    VALUES (NEW.id, NEW.finalized_at, NEW.region, NEW.destination_id, NEW.tenant_id,
            NEW.reminder_id, NEW.failure_reason, NEW.attempt_count, NEW.not_before);
END;

CREATE TABLE destination_alerts (
    destination_id TEXT PRIMARY KEY REFERENCES destinations (id) ON DELETE CASCADE,
    region TEXT NOT NULL,
    late_checked_not_before INTEGER,
    late_checked_task TEXT,
    failing_since INTEGER,
    failing_percent INTEGER CHECK (failing_percent BETWEEN 1 AND 100),
    CHECK ((late_checked_not_before IS NULL) = (late_checked_task IS NULL)),
    CHECK ((failing_since IS NULL) = (failing_percent IS NULL))
) STRICT;

CREATE TABLE alert_windows (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('task.failed', 'reminder.late', 'reminder.horizon_ending')),
    region TEXT NOT NULL,
    last_sent_at INTEGER,
    held TEXT,
    PRIMARY KEY (destination_id, kind)
) STRICT;

CREATE TABLE region_alerts (
    region TEXT PRIMARY KEY,
    horizon_checked_at INTEGER NOT NULL,
    horizon_checked_task TEXT NOT NULL
) STRICT;

-- The late check's walk: each destination's live tasks by (`not_before`,
-- id); and the horizon check's: the region's tasks by
-- (`retry_horizon_at`, id).
CREATE INDEX tasks_late_check ON tasks (destination_id, not_before, id)
    WHERE finalized_at IS NULL;
CREATE INDEX tasks_horizon_check ON tasks (region, retry_horizon_at, id);
