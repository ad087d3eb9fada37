-- What the destination's receiver last announced of its quota (see the
-- PostgreSQL migration of the same name). Times are microseconds since
-- the epoch, as elsewhere here.
ALTER TABLE destinations ADD COLUMN quota_remaining REAL;
ALTER TABLE destinations ADD COLUMN quota_resets_at INTEGER;
ALTER TABLE destinations ADD COLUMN quota_limit INTEGER;
ALTER TABLE destinations ADD COLUMN quota_learned_at INTEGER;
