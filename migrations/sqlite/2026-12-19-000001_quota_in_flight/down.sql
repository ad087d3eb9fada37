ALTER TABLE destinations DROP COLUMN quota_window_ms;
ALTER TABLE destinations DROP COLUMN quota_token;
ALTER TABLE destinations DROP COLUMN rate_granted;
