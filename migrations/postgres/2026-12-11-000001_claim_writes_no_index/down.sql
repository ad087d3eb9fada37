DROP INDEX tasks_finalized;
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE state IN ('delivered', 'failed');
CREATE INDEX tasks_expired_leases ON tasks (destination_id, lease_expires_at)
    WHERE state = 'leased';
CREATE INDEX tasks_due ON tasks (destination_id, available_at)
    WHERE state IN ('pending', 'retry_wait');
DROP INDEX tasks_live;
