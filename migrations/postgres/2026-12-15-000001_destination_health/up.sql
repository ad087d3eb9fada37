-- A destination's health. `failure_streak` counts the attempts that have
-- failed since the last success (a 429 or 503 that carried Retry-After is
-- the receiver pacing remit and does not count), `failure_streak_since` is
-- when the first of them ended. The finish that makes the streak long
-- enough in both count and time disables the destination in its own
-- transaction: `enabled` false, with why (`disabled_reason`), when
-- (`disabled_at`) and the last error (a status or a transport error kind,
-- never payload bytes). `disable_after_seconds` and
-- `disable_after_failures` override the runtime's thresholds for this
-- destination. A success on a destination with no streak writes nothing.
ALTER TABLE destinations
    ADD COLUMN failure_streak INTEGER NOT NULL DEFAULT 0 CHECK (failure_streak >= 0),
    ADD COLUMN failure_streak_since TIMESTAMPTZ,
    ADD COLUMN disabled_reason TEXT,
    ADD COLUMN disabled_at TIMESTAMPTZ,
    ADD COLUMN last_error TEXT,
    ADD COLUMN disable_after_seconds BIGINT CHECK (disable_after_seconds >= 0),
    ADD COLUMN disable_after_failures INTEGER CHECK (disable_after_failures >= 1),
    ADD CONSTRAINT destinations_streak_since
        CHECK ((failure_streak = 0) = (failure_streak_since IS NULL));
