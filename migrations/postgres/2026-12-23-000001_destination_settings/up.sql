-- A destination's own settings, set through the API: its limits, its send
-- timeout, its retry policy and when its reminders count as late. NULL
-- takes the runtime's value (the configuration's entry for the
-- destination, else its default), so every existing row keeps behaving as
-- it did.
--
-- `destinations` is small, but every claim, token take and finish locks
-- its rows: wait at most a second for the ACCESS EXCLUSIVE lock (an
-- instant once granted, since no column has a default to write), then
-- fail, to be tried again by `remit migrate`.
SET LOCAL lock_timeout = '1s';
ALTER TABLE destinations
    ADD COLUMN rate_per_second DOUBLE PRECISION
        CHECK (rate_per_second >= 0.001 AND rate_per_second <= 1000000),
    ADD COLUMN burst INTEGER CHECK (burst BETWEEN 1 AND 1000000),
    ADD COLUMN max_in_flight INTEGER CHECK (max_in_flight BETWEEN 1 AND 1000000),
    ADD COLUMN timeout_ms INTEGER CHECK (timeout_ms BETWEEN 100 AND 86400000),
    ADD COLUMN max_attempts INTEGER CHECK (max_attempts BETWEEN 1 AND 1000000),
    ADD COLUMN retry_horizon_seconds BIGINT
        CHECK (retry_horizon_seconds BETWEEN 0 AND 315360000),
    ADD COLUMN late_after_seconds BIGINT CHECK (late_after_seconds BETWEEN 1 AND 315360000),
    -- A deleted destination stays as a tombstone, disabled, so the tasks
    -- that ended under it keep their history until retention prunes them;
    -- registering its id again brings it back as new.
    ADD COLUMN deleted_at TIMESTAMPTZ;

-- The headers sent with every request to a destination, in `position`
-- order. A plain value is kept as it is; a secret one is sealed with the
-- payload key like a signing secret (bound to the destination and the
-- header's name), and only its last four characters are kept in clear,
-- for an operator to tell two apart (`hint`, NULL for a short one).
CREATE TABLE destination_headers (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    name TEXT NOT NULL CHECK (name <> '' AND name = lower(name)),
    position INTEGER NOT NULL CHECK (position >= 0),
    value TEXT,
    key_fingerprint BYTEA,
    nonce BYTEA,
    ciphertext BYTEA,
    hint TEXT,
    PRIMARY KEY (destination_id, name),
    CHECK ((value IS NOT NULL AND key_fingerprint IS NULL AND nonce IS NULL
            AND ciphertext IS NULL AND hint IS NULL)
           OR (value IS NULL AND key_fingerprint IS NOT NULL AND nonce IS NOT NULL
               AND ciphertext IS NOT NULL))
);
