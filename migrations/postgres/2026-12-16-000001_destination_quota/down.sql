ALTER TABLE destinations
    DROP CONSTRAINT destinations_quota_whole,
    DROP COLUMN quota_remaining,
    DROP COLUMN quota_resets_at,
    DROP COLUMN quota_limit,
    DROP COLUMN quota_learned_at;
