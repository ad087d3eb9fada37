SET LOCAL lock_timeout = '5s';
ALTER TABLE destinations DROP COLUMN last_error_at;
