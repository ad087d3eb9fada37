ALTER TABLE destinations DROP COLUMN quota_learned_at;
ALTER TABLE destinations DROP COLUMN quota_limit;
ALTER TABLE destinations DROP COLUMN quota_resets_at;
ALTER TABLE destinations DROP COLUMN quota_remaining;
