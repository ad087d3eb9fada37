DROP INDEX tasks_ordered_live;
ALTER TABLE tasks DROP COLUMN ordering_key;
