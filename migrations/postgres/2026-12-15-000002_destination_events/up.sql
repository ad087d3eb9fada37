-- The outbox of operational events: a destination disabled (by a failure
-- streak, in the finish's transaction, or by hand) or enabled. A region's
-- runtime turns each row into an ordinary sealed task for the configured
-- events receiver and then deletes it, so an outage of that receiver, or a
-- crash at any point, loses no event (the task's key is the event's id,
-- so a second turn is a repeat).
CREATE TABLE destination_events (
    id UUID PRIMARY KEY,
    seq BIGSERIAL NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('destination.disabled', 'destination.enabled')),
    destination_id TEXT NOT NULL,
    region TEXT NOT NULL,
    reason TEXT,
    at TIMESTAMPTZ NOT NULL,
    last_error TEXT
);
CREATE INDEX destination_events_by_region ON destination_events (region, seq);
