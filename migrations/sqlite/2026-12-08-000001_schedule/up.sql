-- The embedded store's schedule: the same tables, states and rules as the
-- PostgreSQL schema (migrations/postgres), written for SQLite. Instants are
-- INTEGER microseconds since the epoch, bound from the application; ids are
-- TEXT. STRICT tables refuse a value of the wrong type instead of keeping it.
-- Foreign keys hold because every connection turns them on.

CREATE TABLE destinations (
    id               TEXT PRIMARY KEY CHECK (id <> ''),
    -- A lowercase letter, then up to 31 lowercase letters, digits or '-'.
    region           TEXT NOT NULL CHECK (
                         length(region) BETWEEN 1 AND 32
                         AND region GLOB '[a-z]*'
                         AND region NOT GLOB '*[^a-z0-9-]*'),
    url              TEXT NOT NULL CHECK (url GLOB 'http://*' OR url GLOB 'https://*'),
    signing_secret   TEXT,
    enabled          INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    -- A destination-wide pause after a 429: every process skips this
    -- destination's rows until then.
    paused_until     INTEGER,
    -- The shared token bucket; NULL until first used, which means full.
    rate_tokens      REAL,
    rate_refilled_at INTEGER,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    -- Target of the tasks' composite key, which pins a task to its
    -- destination's region.
    UNIQUE (id, region)
) STRICT;

-- Payloads hold health data and live apart from the scheduling envelope.
-- Only ciphertext is stored; the key never enters the database.
CREATE TABLE payloads (
    payload_ref     TEXT PRIMARY KEY,
    content_type    TEXT NOT NULL CHECK (content_type <> ''),
    key_fingerprint BLOB NOT NULL,
    nonce           BLOB NOT NULL,
    ciphertext      BLOB NOT NULL,
    created_at      INTEGER NOT NULL
) STRICT;

CREATE TABLE tasks (
    -- Insertion order, which breaks ties between rows of the same age.
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
    payload_ref            TEXT NOT NULL REFERENCES payloads (payload_ref),
    last_status            INTEGER,
    failure_reason         TEXT,
    created_at             INTEGER NOT NULL,
    updated_at             INTEGER NOT NULL,
    delivered_at           INTEGER,
    finalized_at           INTEGER,
    UNIQUE (tenant_id, reminder_id),
    FOREIGN KEY (destination_id, region) REFERENCES destinations (id, region),
    CHECK (retry_horizon_at >= not_before),
    CHECK (available_at >= not_before),
    CHECK (attempts_before_replay >= 0 AND attempts_before_replay <= attempt_count),
    -- leased <=> a complete lease; any other state carries no lease at all.
    CHECK (state <> 'leased' OR (lease_token IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK (state = 'leased' OR (lease_token IS NULL AND lease_owner IS NULL AND lease_expires_at IS NULL)),
    -- terminal <=> finalized; delivered <=> delivered_at; failed <=> a reason.
    CHECK ((state IN ('delivered', 'failed')) = (finalized_at IS NOT NULL)),
    CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((state = 'failed') = (failure_reason IS NOT NULL))
) STRICT;

-- The two claim paths, probed once per destination of the region, and
-- retention's oldest-first walk over ended rows.
CREATE INDEX tasks_due ON tasks (destination_id, available_at, seq)
    WHERE state IN ('pending', 'retry_wait');
CREATE INDEX tasks_expired_leases ON tasks (destination_id, lease_expires_at, seq)
    WHERE state = 'leased';
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE state IN ('delivered', 'failed');
CREATE INDEX destinations_region ON destinations (region, id);

-- Append-only: one row per attempt. Never a payload, never a response body.
CREATE TABLE attempts (
    id                   INTEGER PRIMARY KEY,
    task_id              TEXT NOT NULL,
    attempt_number       INTEGER NOT NULL CHECK (attempt_number > 0),
    lease_token          INTEGER NOT NULL,
    consumer_id          TEXT NOT NULL,
    started_at           INTEGER,
    received_at          INTEGER,
    http_status          INTEGER,
    transport_error      TEXT,
    retry_after_raw      TEXT,
    retry_after_deadline INTEGER,
    outcome              TEXT NOT NULL
                         CHECK (outcome IN ('delivered', 'retry_wait', 'failed', 'fenced', 'abandoned')),
    next_available_at    INTEGER,
    recorded_at          INTEGER NOT NULL
) STRICT;
CREATE INDEX attempts_by_task ON attempts (task_id, id);

-- Fencing tokens come from one counter, so a newer lease always carries a
-- larger token than any older lease of the same row.
CREATE TABLE lease_tokens (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    last INTEGER NOT NULL
) STRICT;
INSERT INTO lease_tokens (id, last) VALUES (1, 0);
