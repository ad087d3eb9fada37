-- A batch of finishes keeps `task_queue` and `task_ends` itself, set-wise,
-- in the statement that moves its rows (`END_MANY_SQL`), instead of one
-- call of `task_queue_updated` per row (about 12 µs a row; a finish of
-- some forty tasks executes a sixth faster without them). Such a
-- statement says so for its own transaction with
-- `set_config('remit.queue_follows', 'statement', true)`, and the trigger
-- leaves its rows alone; every other update of `tasks` still runs it.
-- Only the trigger's WHEN changes; the function is the same (PostgreSQL
-- cannot alter a trigger's WHEN, so the trigger is made anew).
-- The trigger's change waits at most a second for its lock: claims and
-- finishes never queue behind it for longer.
SET LOCAL lock_timeout = '1s';
DROP TRIGGER task_queue_updated ON tasks;
CREATE TRIGGER task_queue_updated AFTER UPDATE ON tasks
    FOR EACH ROW
    WHEN ((OLD.finalized_at IS DISTINCT FROM NEW.finalized_at
           OR (OLD.region, OLD.destination_id, OLD.tenant_id, OLD.available_at,
               OLD.not_before, OLD.ordering_key, OLD.retry_horizon_at)
              IS DISTINCT FROM (NEW.region, NEW.destination_id, NEW.tenant_id,
                                NEW.available_at, NEW.not_before, NEW.ordering_key,
                                NEW.retry_horizon_at)
           OR (NEW.state <> 'leased' AND OLD.state IS DISTINCT FROM NEW.state))
          AND current_setting('remit.queue_follows', true) IS DISTINCT FROM 'statement')
    EXECUTE FUNCTION task_queue_updated();
