ALTER TABLE destinations DROP COLUMN last_error_at;
