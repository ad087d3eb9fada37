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
    -- Sealed with the payload key (the payloads' AEAD, a nonce of its
    -- own, the key's fingerprint beside it). `secret` holds a value in
    -- clear only when it came from the `destinations` column it replaces
    -- or from an old export: the first process started with the payload
    -- key seals it.
    secret TEXT CHECK (secret <> ''),
    key_fingerprint BYTEA,
    nonce BYTEA,
    ciphertext BYTEA,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    -- In clear or sealed, never both or neither.
    CHECK ((secret IS NULL) = (ciphertext IS NOT NULL)),
    CHECK ((nonce IS NULL) = (ciphertext IS NULL)),
    CHECK ((key_fingerprint IS NULL) = (ciphertext IS NULL))
);
CREATE INDEX destination_secrets_by_destination
    ON destination_secrets (destination_id, created_at, seq);
INSERT INTO destination_secrets (id, destination_id, secret, created_at, expires_at)
SELECT gen_random_uuid()::text, id, signing_secret, created_at, NULL
FROM destinations WHERE signing_secret IS NOT NULL;
ALTER TABLE destinations DROP COLUMN signing_secret;
