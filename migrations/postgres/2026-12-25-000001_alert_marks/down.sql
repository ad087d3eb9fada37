-- Back to the queue without the alert check's marks and horizon.
SET LOCAL lock_timeout = '1s';
CREATE OR REPLACE FUNCTION task_queue_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                            not_before, ordering_key, retrying)
    SELECT n.id, n.region, n.destination_id, n.tenant_id, n.available_at, n.not_before,
           n.ordering_key,
           -- (A leased task imported: whether it was tried before this lease.)
           n.state = 'retry_wait'
               OR (n.state = 'leased' AND n.attempt_count - 1 > n.attempts_before_replay)
    FROM new_rows n WHERE n.finalized_at IS NULL;
    INSERT INTO task_ends (task_id, region, finalized_at)
    SELECT n.id, n.region, n.finalized_at FROM new_rows n WHERE n.finalized_at IS NOT NULL;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION task_queue_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.finalized_at IS NOT NULL THEN
        -- Ended: out of the queue, into the log.
        DELETE FROM task_queue WHERE task_id = NEW.id;
        IF OLD.finalized_at IS DISTINCT FROM NEW.finalized_at THEN
            INSERT INTO task_ends (task_id, region, finalized_at)
            VALUES (NEW.id, NEW.region, NEW.finalized_at);
        END IF;
    ELSIF OLD.finalized_at IS NOT NULL THEN
        -- Live again (a replay).
        INSERT INTO task_queue (task_id, region, destination_id, tenant_id, available_at,
                                not_before, ordering_key, retrying)
        VALUES (NEW.id, NEW.region, NEW.destination_id, NEW.tenant_id, NEW.available_at,
                NEW.not_before, NEW.ordering_key, NEW.state = 'retry_wait')
        ON CONFLICT (task_id) DO NOTHING;
    ELSE
        -- Moved, or waiting for a retry now and not before (or the other
        -- way round); a leased task keeps its mark.
        UPDATE task_queue q
        SET region = NEW.region, destination_id = NEW.destination_id,
            tenant_id = NEW.tenant_id, available_at = NEW.available_at,
            not_before = NEW.not_before, ordering_key = NEW.ordering_key,
            retrying = CASE WHEN NEW.state = 'leased' THEN q.retrying
                            ELSE NEW.state = 'retry_wait' END
        WHERE q.task_id = NEW.id;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER task_queue_updated ON tasks;
CREATE TRIGGER task_queue_updated AFTER UPDATE ON tasks
    FOR EACH ROW
    WHEN (OLD.finalized_at IS DISTINCT FROM NEW.finalized_at
          OR (OLD.region, OLD.destination_id, OLD.tenant_id, OLD.available_at,
              OLD.not_before, OLD.ordering_key)
             IS DISTINCT FROM (NEW.region, NEW.destination_id, NEW.tenant_id,
                               NEW.available_at, NEW.not_before, NEW.ordering_key)
          OR (NEW.state <> 'leased' AND OLD.state IS DISTINCT FROM NEW.state))
    EXECUTE FUNCTION task_queue_updated();

ALTER TABLE task_queue
    DROP COLUMN retry_horizon_at,
    DROP COLUMN late_seen,
    DROP COLUMN horizon_seen;
