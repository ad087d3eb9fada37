-- An operator's changes to a task after scheduling it: cancel, reschedule,
-- erase its payload (see the PostgreSQL migrations of 2026-12-21).
--
-- `cancelled_at`/`cancelled_by`: who asked for the cancel, and when (kept,
-- as a record, when the attempt in flight delivered the task anyway).
-- `waiting_change`/`move_to`: a cancel or a move asked while an attempt
-- was in flight. It waits for the attempt to end; the claim passes the row
-- by until then, and the settle applies it (`Changes::settle_changes`).
-- `payload_erased_at`: the payload's sealed bytes are gone. An erased
-- payload's row is deleted and the task keeps its reference as a record,
-- so `payload_ref` no longer points at a row: its foreign key goes.
--
-- SQLite cannot change a CHECK or drop a foreign key in place, so the
-- table is rebuilt (https://sqlite.org/lang_altertable.html#otheralter):
-- a new table of the whole shape, the rows copied, the old one dropped,
-- the new one renamed, every index recreated. Nothing references `tasks`
-- and it has no trigger or view. This runs inside the migration's
-- transaction, where `PRAGMA foreign_keys` cannot change; the checks of
-- the remaining foreign key (to `destinations`) wait for the commit
-- instead of running halfway through the copy.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE tasks_new (
    -- Insertion order, which breaks ties between rows of the same age.
    seq                    INTEGER PRIMARY KEY,
    id                     TEXT NOT NULL UNIQUE,
    tenant_id              TEXT NOT NULL CHECK (tenant_id <> ''),
    reminder_id            TEXT NOT NULL CHECK (reminder_id <> ''),
    destination_id         TEXT NOT NULL,
    region                 TEXT NOT NULL,
    state                  TEXT NOT NULL DEFAULT 'pending'
                           CHECK (state IN ('pending', 'leased', 'retry_wait', 'delivered', 'failed', 'cancelled')),
    not_before             INTEGER NOT NULL,
    available_at           INTEGER NOT NULL,
    retry_horizon_at       INTEGER NOT NULL,
    lease_token            INTEGER,
    lease_owner            TEXT,
    lease_expires_at       INTEGER,
    attempt_count          INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    attempts_before_replay INTEGER NOT NULL DEFAULT 0,
    idempotency_key        TEXT NOT NULL,
    -- The payload's row, until an operator erases it.
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
    cancelled_at           INTEGER,
    cancelled_by           TEXT,
    waiting_change         TEXT,
    move_to                INTEGER,
    payload_erased_at      INTEGER,
    UNIQUE (tenant_id, reminder_id),
    FOREIGN KEY (destination_id, region) REFERENCES destinations (id, region),
    CHECK (retry_horizon_at >= not_before),
    CHECK (available_at >= not_before),
    CHECK (attempts_before_replay >= 0 AND attempts_before_replay <= attempt_count),
    -- leased <=> a complete lease; any other state carries no lease at all.
    CHECK (state <> 'leased' OR (lease_token IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK (state = 'leased' OR (lease_token IS NULL AND lease_owner IS NULL AND lease_expires_at IS NULL)),
    -- terminal <=> finalized; delivered <=> delivered_at; failed <=> a reason.
    CHECK ((state IN ('delivered', 'failed', 'cancelled')) = (finalized_at IS NOT NULL)),
    CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((state = 'failed') = (failure_reason IS NOT NULL)),
    -- cancelled => who asked, and when.
    CHECK (state <> 'cancelled' OR (cancelled_at IS NOT NULL AND cancelled_by IS NOT NULL)),
    -- A waiting change is a cancel, or a move with its time.
    CHECK (waiting_change IS NULL
           OR (waiting_change IN ('cancel', 'move')
               AND (waiting_change = 'cancel' OR move_to IS NOT NULL)))
) STRICT;

INSERT INTO tasks_new (seq, id, tenant_id, reminder_id, destination_id, region, state,
    not_before, available_at, retry_horizon_at, lease_token, lease_owner, lease_expires_at,
    attempt_count, attempts_before_replay, idempotency_key, payload_ref, last_status,
    failure_reason, created_at, updated_at, delivered_at, finalized_at, ordering_key,
    traceparent)
SELECT seq, id, tenant_id, reminder_id, destination_id, region, state,
    not_before, available_at, retry_horizon_at, lease_token, lease_owner, lease_expires_at,
    attempt_count, attempts_before_replay, idempotency_key, payload_ref, last_status,
    failure_reason, created_at, updated_at, delivered_at, finalized_at, ordering_key,
    traceparent
FROM tasks;

DROP TABLE tasks;
ALTER TABLE tasks_new RENAME TO tasks;

-- Every index of the old table, those naming the terminal states with the
-- new one (a query reads a partial index only when it repeats its WHERE).
CREATE INDEX tasks_due ON tasks (destination_id, available_at, seq)
    WHERE state IN ('pending', 'retry_wait');
CREATE INDEX tasks_expired_leases ON tasks (destination_id, lease_expires_at, seq)
    WHERE state = 'leased';
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE state IN ('delivered', 'failed', 'cancelled');
CREATE INDEX tasks_ordered_live ON tasks (destination_id, ordering_key, not_before, id)
    WHERE ordering_key IS NOT NULL AND finalized_at IS NULL;
CREATE INDEX tasks_tenant_turns
    ON tasks (region, destination_id, tenant_id, available_at, seq)
    WHERE finalized_at IS NULL;
CREATE INDEX tasks_by_tenant ON tasks (tenant_id, id);
CREATE INDEX tasks_by_destination ON tasks (destination_id, id);
CREATE INDEX tasks_by_not_before ON tasks (region, not_before);
CREATE INDEX tasks_failed ON tasks (region, id) WHERE state = 'failed';
-- The rows whose change waits for an attempt, for the settle: few at any
-- time.
CREATE INDEX tasks_waiting_change ON tasks (region) WHERE waiting_change IS NOT NULL;
