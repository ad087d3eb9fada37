-- A job's action: `replay` (every job made before this migration) or
-- `cancel` (see the PostgreSQL migration of the same name). A cancel job
-- takes no failure reason. The CHECK belongs to the new column, so the
-- down migration can drop it.
ALTER TABLE replay_jobs ADD COLUMN action TEXT NOT NULL DEFAULT 'replay'
    CHECK (action IN ('replay', 'cancel') AND (action <> 'cancel' OR failure_reason IS NULL));
