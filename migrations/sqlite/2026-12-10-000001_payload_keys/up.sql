-- The fingerprints of the payload keys this store's payloads are sealed
-- with (see the PostgreSQL migration of the same name). Instants are
-- microseconds since the epoch, as in every other table.
CREATE TABLE payload_keys (
    fingerprint BLOB PRIMARY KEY NOT NULL,
    recorded_at INTEGER NOT NULL
) STRICT;
INSERT INTO payload_keys (fingerprint, recorded_at)
SELECT DISTINCT key_fingerprint, CAST(unixepoch('subsec') * 1000000 AS INTEGER) FROM payloads;
