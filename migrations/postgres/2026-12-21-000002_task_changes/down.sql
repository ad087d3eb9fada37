UPDATE tasks SET state = 'failed', failure_reason = 'cancelled' WHERE state = 'cancelled';
ALTER TABLE tasks
    DROP CONSTRAINT tasks_ended_check,
    ADD CONSTRAINT tasks_check4
        CHECK ((state IN ('delivered', 'failed')) = (finalized_at IS NOT NULL)),
    DROP CONSTRAINT tasks_cancelled_check,
    DROP CONSTRAINT tasks_waiting_change_check,
    DROP COLUMN payload_erased_at,
    DROP COLUMN move_to,
    DROP COLUMN waiting_change,
    DROP COLUMN cancelled_by,
    DROP COLUMN cancelled_at;
