DROP INDEX IF EXISTS tasks_cancelled;
