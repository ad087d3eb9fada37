DROP INDEX IF EXISTS task_queue_retrying;
