ALTER TABLE destinations DROP COLUMN disable_after_failures;
ALTER TABLE destinations DROP COLUMN disable_after_seconds;
ALTER TABLE destinations DROP COLUMN last_error;
ALTER TABLE destinations DROP COLUMN disabled_at;
ALTER TABLE destinations DROP COLUMN disabled_reason;
ALTER TABLE destinations DROP COLUMN failure_streak_since;
ALTER TABLE destinations DROP COLUMN failure_streak;
