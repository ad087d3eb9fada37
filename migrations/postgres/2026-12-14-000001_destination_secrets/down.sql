-- Back to one secret per destination, in clear: the newest one that has
-- not ended. A sealed secret cannot be opened in SQL, so a database that
-- holds one is not taken back (it would lose the secret).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM destination_secrets WHERE secret IS NULL) THEN
        RAISE EXCEPTION 'destination_secrets holds sealed secrets, which the older schema cannot keep';
    END IF;
END $$;
ALTER TABLE destinations ADD COLUMN signing_secret TEXT;
UPDATE destinations d SET signing_secret = (
    SELECT s.secret FROM destination_secrets s
    WHERE s.destination_id = d.id AND (s.expires_at IS NULL OR s.expires_at > now())
    ORDER BY s.created_at DESC, s.seq DESC LIMIT 1
);
DROP TABLE destination_secrets;
