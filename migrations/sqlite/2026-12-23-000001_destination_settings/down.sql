DROP TABLE destination_headers;
ALTER TABLE destinations DROP COLUMN rate_per_second;
ALTER TABLE destinations DROP COLUMN burst;
ALTER TABLE destinations DROP COLUMN max_in_flight;
ALTER TABLE destinations DROP COLUMN timeout_ms;
ALTER TABLE destinations DROP COLUMN max_attempts;
ALTER TABLE destinations DROP COLUMN retry_horizon_seconds;
ALTER TABLE destinations DROP COLUMN late_after_seconds;
ALTER TABLE destinations DROP COLUMN deleted_at;
