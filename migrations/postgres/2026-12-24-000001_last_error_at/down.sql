SET LOCAL lock_timeout = '1s';
ALTER TABLE destinations DROP COLUMN last_error_at;
