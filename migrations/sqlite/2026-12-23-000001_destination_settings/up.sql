-- A destination's own settings and headers (see the PostgreSQL migration
-- of the same name). NULL takes the runtime's value.
ALTER TABLE destinations ADD COLUMN rate_per_second REAL
    CHECK (rate_per_second >= 0.001 AND rate_per_second <= 1000000);
ALTER TABLE destinations ADD COLUMN burst INTEGER CHECK (burst BETWEEN 1 AND 1000000);
ALTER TABLE destinations ADD COLUMN max_in_flight INTEGER
    CHECK (max_in_flight BETWEEN 1 AND 1000000);
ALTER TABLE destinations ADD COLUMN timeout_ms INTEGER CHECK (timeout_ms BETWEEN 100 AND 86400000);
ALTER TABLE destinations ADD COLUMN max_attempts INTEGER
    CHECK (max_attempts BETWEEN 1 AND 1000000);
ALTER TABLE destinations ADD COLUMN retry_horizon_seconds INTEGER
    CHECK (retry_horizon_seconds BETWEEN 0 AND 315360000);
ALTER TABLE destinations ADD COLUMN late_after_seconds INTEGER
    CHECK (late_after_seconds BETWEEN 1 AND 315360000);
-- A deleted destination's tombstone (see the PostgreSQL migration).
ALTER TABLE destinations ADD COLUMN deleted_at INTEGER;

CREATE TABLE destination_headers (
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    name TEXT NOT NULL CHECK (name <> '' AND name = lower(name)),
    position INTEGER NOT NULL CHECK (position >= 0),
    value TEXT,
    key_fingerprint BLOB,
    nonce BLOB,
    ciphertext BLOB,
    hint TEXT,
    PRIMARY KEY (destination_id, name),
    CHECK ((value IS NOT NULL AND key_fingerprint IS NULL AND nonce IS NULL
            AND ciphertext IS NULL AND hint IS NULL)
           OR (value IS NULL AND key_fingerprint IS NOT NULL AND nonce IS NOT NULL
               AND ciphertext IS NOT NULL))
);
