ALTER TABLE tasks DROP COLUMN traceparent;
