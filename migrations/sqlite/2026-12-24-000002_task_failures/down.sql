DROP TRIGGER task_failures_recorded;
DROP TABLE task_failures;
