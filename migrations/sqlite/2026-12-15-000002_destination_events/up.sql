-- The outbox of operational events (see the PostgreSQL migration of the
-- same name). `at` is microseconds since the epoch; rowid keeps the order.
CREATE TABLE destination_events (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('destination.disabled', 'destination.enabled')),
    destination_id TEXT NOT NULL,
    region TEXT NOT NULL,
    reason TEXT,
    at INTEGER NOT NULL,
    last_error TEXT
);
CREATE INDEX destination_events_by_region ON destination_events (region);
