-- Back to the shape before task changes: a cancelled task becomes a failed
-- one (reason `cancelled`), as PostgreSQL's down does, and the new columns
-- go. As there, the foreign key from `payload_ref` to `payloads` does not
-- come back: an erased payload's row is gone.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE tasks_old (
    seq                    INTEGER PRIMARY KEY,
    id                     TEXT NOT NULL UNIQUE,
    tenant_id              TEXT NOT NULL CHECK (tenant_id <> ''),
    reminder_id            TEXT NOT NULL CHECK (reminder_id <> ''),
    destination_id         TEXT NOT NULL,
    region                 TEXT NOT NULL,
    state                  TEXT NOT NULL DEFAULT 'pending'
                           CHECK (state IN ('pending', 'leased', 'retry_wait', 'delivered', 'failed')),
    not_before             INTEGER NOT NULL,
    available_at           INTEGER NOT NULL,
    retry_horizon_at       INTEGER NOT NULL,
    lease_token            INTEGER,
    lease_owner            TEXT,
    lease_expires_at       INTEGER,
    attempt_count          INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    attempts_before_replay INTEGER NOT NULL DEFAULT 0,
    idempotency_key        TEXT NOT NULL,
    payload_ref            TEXT NOT NULL,
    last_status            INTEGER,
    failure_reason         TEXT,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL,
    delivered_at           INTEGER,
    finalized_at           INTEGER,
    ordering_key           TEXT
        CHECK (ordering_key IS NULL OR (ordering_key <> '' AND length(CAST(ordering_key AS BLOB)) <= 200)),
    traceparent            TEXT
        CHECK (traceparent GLOB
            '00-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f]'),
    UNIQUE (tenant_id, reminder_id),
    FOREIGN KEY (destination_id, region) REFERENCES destinations (id, region),
    CHECK (retry_horizon_at >= not_before),
    CHECK (available_at >= not_before),
    CHECK (attempts_before_replay >= 0 AND attempts_before_replay <= attempt_count),
    CHECK (state <> 'leased' OR (lease_token IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK (state = 'leased' OR (lease_token IS NULL AND lease_owner IS NULL AND lease_expires_at IS NULL)),
    CHECK ((state IN ('delivered', 'failed')) = (finalized_at IS NOT NULL)),
    CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((state = 'failed') = (failure_reason IS NOT NULL))
) STRICT;

INSERT INTO tasks_old (seq, id, tenant_id, reminder_id, destination_id, region, state,
    not_before, available_at, retry_horizon_at, lease_token, lease_owner, lease_expires_at,
    attempt_count, attempts_before_replay, idempotency_key, payload_ref, last_status,
    failure_reason, created_at, updated_at, delivered_at, finalized_at, ordering_key,
    traceparent)
SELECT seq, id, tenant_id, reminder_id, destination_id, region,
    CASE WHEN state = 'cancelled' THEN 'failed' ELSE state END,
    not_before, available_at, retry_horizon_at, lease_token, lease_owner, lease_expires_at,
    attempt_count, attempts_before_replay, idempotency_key, payload_ref, last_status,
    CASE WHEN state = 'cancelled' THEN 'cancelled' ELSE failure_reason END,
    created_at, updated_at, delivered_at, finalized_at, ordering_key, traceparent
FROM tasks;

DROP TABLE tasks;
ALTER TABLE tasks_old RENAME TO tasks;

CREATE INDEX tasks_due ON tasks (destination_id, available_at, seq)
    WHERE state IN ('pending', 'retry_wait');
CREATE INDEX tasks_expired_leases ON tasks (destination_id, lease_expires_at, seq)
    WHERE state = 'leased';
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE state IN ('delivered', 'failed');
CREATE INDEX tasks_ordered_live ON tasks (destination_id, ordering_key, not_before, id)
    WHERE ordering_key IS NOT NULL AND finalized_at IS NULL;
CREATE INDEX tasks_tenant_turns
    ON tasks (region, destination_id, tenant_id, available_at, seq)
    WHERE finalized_at IS NULL;
CREATE INDEX tasks_by_tenant ON tasks (tenant_id, id);
CREATE INDEX tasks_by_destination ON tasks (destination_id, id);
CREATE INDEX tasks_by_not_before ON tasks (region, not_before);
CREATE INDEX tasks_failed ON tasks (region, id) WHERE state = 'failed';
