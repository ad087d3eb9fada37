DROP INDEX IF EXISTS tasks_waiting_change;
