-- The durable schedule. Every rule the state machine relies on is written
-- here as a constraint, so a bug in any consumer fails loudly instead of
-- leaving a row in a shape no transition expects.

CREATE TYPE task_state AS ENUM ('pending', 'leased', 'retry_wait', 'delivered', 'failed');
CREATE TYPE attempt_outcome AS ENUM ('delivered', 'retry_wait', 'failed', 'fenced', 'abandoned');

-- Fencing tokens come from one sequence so that a newer lease always carries
-- a larger token than any older lease of the same row.
CREATE SEQUENCE lease_tokens AS BIGINT;

CREATE TABLE destinations (
    id              TEXT PRIMARY KEY CHECK (id <> ''),
    region          TEXT NOT NULL CHECK (region IN ('us', 'eu')),
    url             TEXT NOT NULL CHECK (url ~ '^https?://'),
    signing_secret  TEXT,
    enabled         BOOLEAN NOT NULL DEFAULT TRUE,
    -- A destination-wide pause after a 429: every process of the region
    -- skips this destination's rows until then.
    paused_until    TIMESTAMPTZ,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Target of the tasks' composite key, which pins a task to its
    -- destination's region.
    UNIQUE (id, region)
);

-- Payloads hold health data and live apart from the scheduling envelope.
-- Only ciphertext is stored; the key never enters the database.
CREATE TABLE payloads (
    payload_ref     UUID PRIMARY KEY,
    content_type    TEXT NOT NULL CHECK (content_type <> ''),
    key_fingerprint BYTEA NOT NULL,
    nonce           BYTEA NOT NULL,
    ciphertext      BYTEA NOT NULL,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE tasks (
    id                UUID PRIMARY KEY,
    tenant_id         TEXT NOT NULL CHECK (tenant_id <> ''),
    reminder_id       TEXT NOT NULL CHECK (reminder_id <> ''),
    destination_id    TEXT NOT NULL,
    region            TEXT NOT NULL CHECK (region IN ('us', 'eu')),
    state             task_state NOT NULL DEFAULT 'pending',
    not_before        TIMESTAMPTZ NOT NULL,
    available_at      TIMESTAMPTZ NOT NULL,
    retry_horizon_at  TIMESTAMPTZ NOT NULL,
    lease_token       BIGINT,
    lease_owner       TEXT,
    lease_expires_at  TIMESTAMPTZ,
    attempt_count     INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    idempotency_key   TEXT NOT NULL UNIQUE,
    payload_ref       UUID NOT NULL UNIQUE REFERENCES payloads (payload_ref),
    last_status       SMALLINT,
    failure_reason    TEXT,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    delivered_at      TIMESTAMPTZ,
    finalized_at      TIMESTAMPTZ,
    UNIQUE (tenant_id, reminder_id),
    FOREIGN KEY (destination_id, region) REFERENCES destinations (id, region),
    CHECK (retry_horizon_at >= not_before),
    CHECK (available_at >= not_before),
    -- leased <=> a complete lease; any other state carries no lease at all.
    CHECK (state <> 'leased' OR (lease_token IS NOT NULL AND lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CHECK (state = 'leased' OR (lease_token IS NULL AND lease_owner IS NULL AND lease_expires_at IS NULL)),
    -- terminal <=> finalized; delivered <=> delivered_at; failed <=> a reason.
    CHECK ((state IN ('delivered', 'failed')) = (finalized_at IS NOT NULL)),
    CHECK ((state = 'delivered') = (delivered_at IS NOT NULL)),
    CHECK ((state = 'failed') = (failure_reason IS NOT NULL))
);

-- The two claim paths, probed once per destination of the region.
CREATE INDEX tasks_due ON tasks (destination_id, available_at)
    WHERE state IN ('pending', 'retry_wait');
CREATE INDEX tasks_expired_leases ON tasks (destination_id, lease_expires_at)
    WHERE state = 'leased';
CREATE INDEX destinations_region ON destinations (region);

-- Claimed rows are rewritten constantly; vacuum early so dead tuples do not
-- pile up at the head of the due index.
ALTER TABLE tasks SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 20000,
    autovacuum_vacuum_cost_delay = 0
);

-- Append-only: one row per attempt. Never a payload, never a response body.
CREATE TABLE attempts (
    id                    BIGSERIAL PRIMARY KEY,
    task_id               UUID NOT NULL REFERENCES tasks (id),
    attempt_number        INTEGER NOT NULL CHECK (attempt_number > 0),
    lease_token           BIGINT NOT NULL,
    consumer_id           TEXT NOT NULL,
    started_at            TIMESTAMPTZ,
    received_at           TIMESTAMPTZ,
    http_status           SMALLINT,
    transport_error       TEXT,
    retry_after_raw       TEXT,
    retry_after_deadline  TIMESTAMPTZ,
    outcome               attempt_outcome NOT NULL,
    next_available_at     TIMESTAMPTZ,
    recorded_at           TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX attempts_by_task ON attempts (task_id, id);
