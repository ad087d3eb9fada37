ALTER TABLE tasks SET (fillfactor = 70);
CREATE INDEX tasks_live ON tasks (region, destination_id COLLATE "C", available_at)
    WHERE finalized_at IS NULL;
CREATE INDEX tasks_tenant_turns
    ON tasks (region, destination_id COLLATE "C", tenant_id COLLATE "C", available_at)
    WHERE finalized_at IS NULL;
CREATE INDEX tasks_ordered_live ON tasks (destination_id, ordering_key, not_before, id)
    WHERE ordering_key IS NOT NULL AND finalized_at IS NULL;
CREATE INDEX tasks_finalized ON tasks (region, finalized_at)
    WHERE finalized_at IS NOT NULL;
DROP TRIGGER task_queue_inserted ON tasks;
DROP TRIGGER task_queue_updated ON tasks;
DROP TRIGGER task_queue_deleted ON tasks;
DROP TRIGGER task_queue_truncated ON tasks;
DROP FUNCTION task_queue_inserted();
DROP FUNCTION task_queue_updated();
DROP FUNCTION task_queue_deleted();
DROP FUNCTION task_queue_truncated();
DROP TABLE task_ends;
DROP TABLE task_queue;
