ALTER TABLE destinations
    DROP COLUMN rate_tokens,
    DROP COLUMN rate_refilled_at;
