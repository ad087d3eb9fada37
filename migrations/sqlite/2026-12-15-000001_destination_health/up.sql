-- A destination's failure streak, why and when it was disabled, its last
-- error and its own thresholds (see the PostgreSQL migration of the same
-- name). Times are microseconds since the epoch, as elsewhere here.
ALTER TABLE destinations ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE destinations ADD COLUMN failure_streak_since INTEGER;
ALTER TABLE destinations ADD COLUMN disabled_reason TEXT;
ALTER TABLE destinations ADD COLUMN disabled_at INTEGER;
ALTER TABLE destinations ADD COLUMN last_error TEXT;
ALTER TABLE destinations ADD COLUMN disable_after_seconds INTEGER;
ALTER TABLE destinations ADD COLUMN disable_after_failures INTEGER;
