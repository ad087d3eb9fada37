-- Bulk replays, recorded so that one survives a restart and reports how
-- far it has got (see the PostgreSQL migration). Each batch moves the
-- cursor and the count in the `BEGIN IMMEDIATE` transaction that replays
-- its tasks, so two processes never count a task twice.
CREATE TABLE replay_jobs (
    id               TEXT PRIMARY KEY,
    region           TEXT NOT NULL CHECK (
                         length(region) BETWEEN 1 AND 32
                         AND region GLOB '[a-z]*'
                         AND region NOT GLOB '*[^a-z0-9-]*'),
    tenant_id        TEXT CHECK (tenant_id <> ''),
    reminder_id      TEXT CHECK (reminder_id <> ''),
    destination_id   TEXT CHECK (destination_id <> ''),
    failure_reason   TEXT CHECK (failure_reason <> ''),
    not_before_from  INTEGER,
    not_before_until INTEGER,
    requested_by     TEXT NOT NULL CHECK (requested_by <> ''),
    horizon_seconds  INTEGER NOT NULL CHECK (horizon_seconds > 0),
    created_at       INTEGER NOT NULL,
    replayed         INTEGER NOT NULL DEFAULT 0 CHECK (replayed >= 0),
    cursor_task_id   TEXT,
    finished_at      INTEGER
) STRICT;
CREATE INDEX replay_jobs_by_region ON replay_jobs (region, created_at);

-- The console's task search, newest first, and the bulk replay's walk.
-- Each insert writes three more index entries; `tasks_failed` holds only
-- failed rows.
CREATE INDEX tasks_by_tenant ON tasks (tenant_id, id);
CREATE INDEX tasks_by_destination ON tasks (destination_id, id);
CREATE INDEX tasks_by_not_before ON tasks (region, not_before);
CREATE INDEX tasks_failed ON tasks (region, id) WHERE state = 'failed';
