ALTER TABLE destinations
    DROP CONSTRAINT destinations_quota_window_with_limit,
    DROP CONSTRAINT destinations_quota_token_with_quota,
    DROP COLUMN quota_window_ms,
    DROP COLUMN quota_token,
    DROP COLUMN rate_granted;
