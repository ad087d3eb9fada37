-- The failures of the last week that their tasks still show (one replayed
-- before now is gone from its row), into the log the previous migration
-- made. Its trigger has recorded every failure since that migration
-- committed, so a failure this copy also finds is skipped. `tasks` is only
-- read: no lock this takes stalls a claim or a finish.
INSERT INTO task_failures (task_id, failed_at, region, destination_id, failure_reason)
SELECT t.id, t.finalized_at, t.region, t.destination_id, coalesce(t.failure_reason, 'unknown')
FROM tasks t
WHERE t.state = 'failed' AND t.finalized_at > now() - interval '7 days'
  AND NOT EXISTS (SELECT 1 FROM task_failures f
                  WHERE f.task_id = t.id AND f.failed_at = t.finalized_at);
