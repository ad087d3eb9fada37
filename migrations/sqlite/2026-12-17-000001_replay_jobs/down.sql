DROP INDEX tasks_failed;
DROP INDEX tasks_by_not_before;
DROP INDEX tasks_by_destination;
DROP INDEX tasks_by_tenant;
DROP TABLE replay_jobs;
