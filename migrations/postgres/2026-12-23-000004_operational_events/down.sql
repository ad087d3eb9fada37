SET LOCAL lock_timeout = '1s';
DROP TABLE region_alerts;
DROP TABLE alert_windows;
DROP TABLE destination_alerts;
DROP TRIGGER failures_to_announce_recorded ON tasks;
DROP FUNCTION failures_to_announce_recorded();
DROP TABLE failures_to_announce;
DELETE FROM destination_events
    WHERE kind NOT IN ('destination.disabled', 'destination.enabled');
ALTER TABLE destination_events
    DROP CONSTRAINT destination_events_kind_check,
    ADD CONSTRAINT destination_events_kind_check
        CHECK (kind IN ('destination.disabled', 'destination.enabled')),
    DROP COLUMN data;
