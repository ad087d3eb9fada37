-- Back to one secret per destination: the newest one that has not ended.
ALTER TABLE destinations ADD COLUMN signing_secret TEXT;
UPDATE destinations d SET signing_secret = (
    SELECT s.secret FROM destination_secrets s
    WHERE s.destination_id = d.id AND (s.expires_at IS NULL OR s.expires_at > now())
    ORDER BY s.created_at DESC, s.seq DESC LIMIT 1
);
DROP TABLE destination_secrets;
