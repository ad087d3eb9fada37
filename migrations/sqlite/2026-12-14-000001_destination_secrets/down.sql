ALTER TABLE destinations ADD COLUMN signing_secret TEXT;
UPDATE destinations SET signing_secret = (
    SELECT s.secret FROM destination_secrets s
    WHERE s.destination_id = destinations.id
      AND (s.expires_at IS NULL OR s.expires_at > CAST(unixepoch('subsec') * 1000000 AS INTEGER))
    ORDER BY s.created_at DESC, s.rowid DESC LIMIT 1
);
DROP TABLE destination_secrets;
