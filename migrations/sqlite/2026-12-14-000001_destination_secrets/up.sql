-- A destination's signing secrets (see the PostgreSQL migration of the
-- same name). Instants are microseconds since the epoch, as in every other
-- table. The rowid keeps the order secrets were added in, for those added
-- at one instant.
CREATE TABLE destination_secrets (
    id TEXT PRIMARY KEY NOT NULL,
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    -- Sealed with the payload key (the payloads' AEAD, a nonce of its
    -- own, the key's fingerprint beside it). `secret` holds a value in
    -- clear only when it came from the `destinations` column it replaces
    -- or from an old export: the first process started with the payload
    -- key seals it.
    secret TEXT CHECK (secret <> ''),
    key_fingerprint BLOB,
    nonce BLOB,
    ciphertext BLOB,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    -- In clear or sealed, never both or neither.
    CHECK ((secret IS NULL) = (ciphertext IS NOT NULL)),
    CHECK ((nonce IS NULL) = (ciphertext IS NULL)),
    CHECK ((key_fingerprint IS NULL) = (ciphertext IS NULL))
) STRICT;
CREATE INDEX destination_secrets_by_destination
    ON destination_secrets (destination_id, created_at);
INSERT INTO destination_secrets (id, destination_id, secret, created_at, expires_at)
SELECT lower(hex(randomblob(16))), id, signing_secret, created_at, NULL
FROM destinations WHERE signing_secret IS NOT NULL;
ALTER TABLE destinations DROP COLUMN signing_secret;
