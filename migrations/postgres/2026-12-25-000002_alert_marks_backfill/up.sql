-- The queue rows from before the marks: each gets its task's horizon, and
-- the marks the old cursors imply (a task the late check had passed was
-- announced, or was not late when it could have been; a horizon the
-- horizon check had passed likewise), so nothing is announced twice. In
-- batches of 5,000 rows by task id, each committed on its own (this
-- migration runs outside a transaction, and the block commits as it goes),
-- so a claim or a finish waits at most for one batch's row locks. Every
-- row is visited, those the previous migration's trigger wrote meanwhile
-- too (a retry of a running process rewrites its queue row): the marks
-- the cursors imply are added to any a check has set since.
DO $$
DECLARE
    after UUID := '00000000-0000-0000-0000-000000000000';
    last UUID;
BEGIN
    LOOP
        SELECT b.task_id INTO last
        FROM (SELECT q.task_id FROM task_queue q WHERE q.task_id > after
              ORDER BY q.task_id LIMIT 5000) b
        ORDER BY b.task_id DESC LIMIT 1;
        EXIT WHEN last IS NULL;
        UPDATE task_queue q
        SET retry_horizon_at = t.retry_horizon_at,
            late_seen = q.late_seen
                OR coalesce((q.not_before, q.task_id)
                            <= (a.late_checked_not_before, a.late_checked_task), false),
            horizon_seen = q.horizon_seen
                OR coalesce((t.retry_horizon_at, t.id)
                            <= (r.horizon_checked_at, r.horizon_checked_task), false)
        FROM tasks t
        LEFT JOIN destination_alerts a ON a.destination_id = t.destination_id
        LEFT JOIN region_alerts r ON r.region = t.region
        WHERE q.task_id > after AND q.task_id <= last
          AND t.id = q.task_id;
        after := last;
        COMMIT;
    END LOOP;
END
$$
