-- When a destination's last error happened (see the PostgreSQL migration
-- of the same name).
ALTER TABLE destinations ADD COLUMN last_error_at INTEGER;
