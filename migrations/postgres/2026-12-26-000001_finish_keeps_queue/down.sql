-- Stop every process of this version first: its finishes keep the queue
-- and the end log themselves and would log each end twice once the
-- trigger runs for their rows again.
SET LOCAL lock_timeout = '1s';
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
