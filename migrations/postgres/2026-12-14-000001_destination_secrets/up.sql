-- A destination's signing secrets. Rotating adds a secret and gives every
-- secret valid until then an end (`expires_at`), so for a while requests
-- carry one signature per valid secret and a receiver can switch over at
-- its own pace. A NULL `expires_at` never ends. The secret that was the
-- destination's only one moves here, created when the destination was.
CREATE TABLE destination_secrets (
    id TEXT PRIMARY KEY,
    -- The order secrets were added in, for those added at one instant.
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    secret TEXT NOT NULL CHECK (secret <> ''),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ
);
CREATE INDEX destination_secrets_by_destination
    ON destination_secrets (destination_id, created_at, seq);
INSERT INTO destination_secrets (id, destination_id, secret, created_at, expires_at)
SELECT gen_random_uuid()::text, id, signing_secret, created_at, NULL
FROM destinations WHERE signing_secret IS NOT NULL;
ALTER TABLE destinations DROP COLUMN signing_secret;
