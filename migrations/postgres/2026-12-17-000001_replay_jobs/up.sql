-- Bulk replays, recorded so that one survives a restart and reports how
-- far it has got: every failed task of the region that matches the filter
-- and ended at or before `created_at` goes back to `pending`, in task-id
-- order, a batch at a time. Each batch moves `cursor_task_id` and
-- `replayed` in the transaction that replays its tasks, under a lock on
-- the job's row, so two processes working one job never count a task
-- twice.
CREATE TABLE replay_jobs (
    id               UUID PRIMARY KEY,
    region           TEXT NOT NULL CHECK (region ~ '^[a-z][a-z0-9-]{0,31}$'),
    tenant_id        TEXT CHECK (tenant_id <> ''),
    reminder_id      TEXT CHECK (reminder_id <> ''),
    destination_id   TEXT CHECK (destination_id <> ''),
    failure_reason   TEXT CHECK (failure_reason <> ''),
    not_before_from  TIMESTAMPTZ,
    not_before_until TIMESTAMPTZ,
    requested_by     TEXT NOT NULL CHECK (requested_by <> ''),
    horizon_seconds  BIGINT NOT NULL CHECK (horizon_seconds > 0),
    created_at       TIMESTAMPTZ NOT NULL,
    replayed         BIGINT NOT NULL DEFAULT 0 CHECK (replayed >= 0),
    cursor_task_id   UUID,
    finished_at      TIMESTAMPTZ
);
-- The runner's question every second: which of my region's jobs are left.
CREATE INDEX replay_jobs_unfinished ON replay_jobs (region, created_at)
    WHERE finished_at IS NULL;
CREATE INDEX replay_jobs_by_region ON replay_jobs (region, created_at);

-- The console's task search, newest first, and the bulk replay's walk.
-- A claim's and a retry's updates stay HOT: none of these indexes names a
-- column they write. `tenant_id`, `destination_id`, `region`, `id` and
-- `not_before` never change after the insert; `failure_reason` changes
-- only when a row fails or is replayed, which also moves `finalized_at`
-- (already indexed by `tasks_finalized`), so those updates wrote index
-- entries before.
--
-- Cost: every insert writes three more index entries (tenant, destination,
-- not_before), about 60 to 80 bytes of WAL each; `tasks_failed` holds only
-- failed rows, so only a failure writes an entry there. Built in the
-- migration's transaction, which holds inserts into `tasks` until they
-- are built (docs/operations.md).
CREATE INDEX tasks_by_tenant ON tasks (tenant_id, id);
CREATE INDEX tasks_by_destination ON tasks (destination_id, id);
CREATE INDEX tasks_by_not_before ON tasks (region, not_before);
CREATE INDEX tasks_failed ON tasks (region, id) WHERE failure_reason IS NOT NULL;
