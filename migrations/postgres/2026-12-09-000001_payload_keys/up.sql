-- The fingerprints of the payload keys this store's payloads are sealed
-- with, so a process started with another key is refused at once instead
-- of sealing payloads no other process can open. Filled from the payloads
-- already stored; remit records its key here on first use.
CREATE TABLE payload_keys (
    fingerprint BYTEA PRIMARY KEY,
    recorded_at TIMESTAMPTZ NOT NULL
);
INSERT INTO payload_keys (fingerprint, recorded_at)
SELECT DISTINCT key_fingerprint, now() FROM payloads;
