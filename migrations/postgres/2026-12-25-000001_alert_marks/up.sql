-- The alert check's marks. Until now the check walked each destination's
-- live tasks by (`not_before`, task) from a cursor, and the region's tasks
-- by (`retry_horizon_at`, task) from another, so a task that entered
-- behind a cursor (scheduled backdated, moved earlier, or given a horizon
-- shorter than one already read) was never announced. Now each queue row
-- says whether its task was announced late (`late_seen`) and whether its
-- horizon was (`horizon_seen`); the check reads the unmarked rows through
-- partial indexes of them (the next migrations) and marks what it found.
-- A move of the deadline clears the first mark, a move of the horizon the
-- second, and a task that comes back to life gets a new row without
-- either. The horizon lives in the queue too, so that check reads live
-- tasks only.
--
-- Columns with a constant default are written to the catalog only: the
-- ACCESS EXCLUSIVE lock on `task_queue` (and the trigger's on `tasks`) is
-- held for an instant, but every claim and finish touches these tables,
-- so wait at most a second for it, then fail, to be tried again by
-- `remit migrate`. The rows there now get their horizon, and the marks
-- the old cursors imply, in the next migration, in batches.
SET LOCAL lock_timeout = '1s';

ALTER TABLE task_queue
    ADD COLUMN retry_horizon_at TIMESTAMPTZ,
    ADD COLUMN late_seen BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN horizon_seen BOOLEAN NOT NULL DEFAULT false;

CREATE OR REPLACE FUNCTION task_queue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                            not_before, ordering_key, retrying, retry_horizon_at)
    SELECT n.id, n.region, n.destination_id, n.tenant_id, n.available_at, n.not_before,
           n.ordering_key,
           -- (A leased task imported: whether it was tried before this lease.)
           n.state = 'retry_wait'
               OR (n.state = 'leased' AND n.attempt_count - 1 > n.attempts_before_replay),
           n.retry_horizon_at
    FROM new_rows n WHERE n.finalized_at IS NULL;
    INSERT INTO task_ends (task_id, region, finalized_at)
    SELECT n.id, n.region, n.finalized_at FROM new_rows n WHERE n.finalized_at IS NOT NULL;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION task_queue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.finalized_at IS NOT NULL THEN
        -- Ended: out of the queue (its marks with it), into the log.
        DELETE FROM task_queue WHERE task_id = NEW.id;
        IF OLD.finalized_at IS DISTINCT FROM NEW.finalized_at THEN
            INSERT INTO task_ends (task_id, region, finalized_at)
            VALUES (NEW.id, NEW.region, NEW.finalized_at);
        END IF;
    ELSIF OLD.finalized_at IS NOT NULL THEN
        -- Live again (a replay, or a move of an ended task): unmarked.
        INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                                not_before, ordering_key, retrying, retry_horizon_at)
        VALUES (NEW.id, NEW.region, NEW.destination_id, NEW.tenant_id, NEW.available_at,
                NEW.not_before, NEW.ordering_key, NEW.state = 'retry_wait',
                NEW.retry_horizon_at)
        ON CONFLICT (task_id) DO NOTHING;
    ELSE
        -- Moved, or waiting for a retry now and not before (or the other
        -- way round); a leased task keeps its mark. A new deadline is
        -- announced late afresh, a new horizon as ending afresh.
        UPDATE task_queue q
        SET region = NEW.region, destination_id = NEW.destination_id,
            tenant_id = NEW.tenant_id, available_at = NEW.available_at,
            not_before = NEW.not_before, ordering_key = NEW.ordering_key,
            retrying = CASE WHEN NEW.state = 'leased' THEN q.retrying
                            ELSE NEW.state = 'retry_wait' END,
            retry_horizon_at = NEW.retry_horizon_at,
            late_seen = q.late_seen AND NEW.not_before IS NOT DISTINCT FROM OLD.not_before,
            horizon_seen = q.horizon_seen
                AND NEW.retry_horizon_at IS NOT DISTINCT FROM OLD.retry_horizon_at
        WHERE q.task_id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

-- The horizon is now copied too: a change of it alone runs the function.
DROP TRIGGER task_queue_updated ON tasks;
CREATE TRIGGER task_queue_updated AFTER UPDATE ON tasks
    FOR EACH ROW
    WHEN (OLD.finalized_at IS DISTINCT FROM NEW.finalized_at
          OR (OLD.region, OLD.destination_id, OLD.tenant_id, OLD.available_at,
              OLD.not_before, OLD.ordering_key, OLD.retry_horizon_at)
             IS DISTINCT FROM (NEW.region, NEW.destination_id, NEW.tenant_id,
                               NEW.available_at, NEW.not_before, NEW.ordering_key,
                               NEW.retry_horizon_at)
          OR (NEW.state <> 'leased' AND OLD.state IS DISTINCT FROM NEW.state))
    EXECUTE FUNCTION task_queue_updated();
