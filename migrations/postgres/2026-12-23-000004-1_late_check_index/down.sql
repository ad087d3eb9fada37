DROP INDEX IF EXISTS task_queue_late_check;
