-- Back to one secret per destination, in clear (see the PostgreSQL
-- migration): refused, by the CHECK below, while sealed secrets exist.
CREATE TEMP TABLE sealed_secrets_guard (sealed INTEGER CHECK (sealed = 0));
INSERT INTO sealed_secrets_guard SELECT count(*) FROM destination_secrets WHERE secret IS NULL;
DROP TABLE sealed_secrets_guard;
ALTER TABLE destinations ADD COLUMN signing_secret TEXT;
UPDATE destinations SET signing_secret = (
    SELECT s.secret FROM destination_secrets s
    WHERE s.destination_id = destinations.id
      AND (s.expires_at IS NULL OR s.expires_at > CAST(unixepoch('subsec') * 1000000 AS INTEGER))
    ORDER BY s.created_at DESC, s.rowid DESC LIMIT 1
);
DROP TABLE destination_secrets;
