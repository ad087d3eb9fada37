DROP INDEX tasks_horizon_check;
DROP INDEX tasks_late_check;
DROP TABLE region_alerts;
DROP TABLE alert_windows;
DROP TABLE destination_alerts;
DROP TRIGGER failures_to_announce_recorded;
DROP TABLE failures_to_announce;
CREATE TABLE destination_events_old (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('destination.disabled', 'destination.enabled')),
    destination_id TEXT NOT NULL,
    region TEXT NOT NULL,
    reason TEXT,
    at INTEGER NOT NULL,
    last_error TEXT
);
INSERT INTO destination_events_old (id, kind, destination_id, region, reason, at, last_error)
SELECT id, kind, destination_id, region, reason, at, last_error FROM destination_events
WHERE kind IN ('destination.disabled', 'destination.enabled') ORDER BY rowid;
DROP TABLE destination_events;
ALTER TABLE destination_events_old RENAME TO destination_events;
CREATE INDEX destination_events_by_region ON destination_events (region);
