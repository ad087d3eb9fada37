-- A destination's signing secrets (see the PostgreSQL migration of the
-- same name). Instants are microseconds since the epoch, as in every other
-- table. The rowid keeps the order secrets were added in, for those added
-- at one instant.
CREATE TABLE destination_secrets (
    id TEXT PRIMARY KEY NOT NULL,
    destination_id TEXT NOT NULL REFERENCES destinations (id) ON DELETE CASCADE,
    secret TEXT NOT NULL CHECK (secret <> ''),
    created_at INTEGER NOT NULL,
    expires_at INTEGER
) STRICT;
CREATE INDEX destination_secrets_by_destination
    ON destination_secrets (destination_id, created_at);
INSERT INTO destination_secrets (id, destination_id, secret, created_at, expires_at)
SELECT lower(hex(randomblob(16))), id, signing_secret, created_at, NULL
FROM destinations WHERE signing_secret IS NOT NULL;
ALTER TABLE destinations DROP COLUMN signing_secret;
