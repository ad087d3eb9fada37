DROP INDEX IF EXISTS tasks_horizon_check;
