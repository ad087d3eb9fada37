-- The W3C traceparent of the span that scheduled a task (the API request's,
-- when tracing is on), so each attempt is traced as its child. Expand-only:
-- older code never names the column, and NULL is what it means for them.
-- NOT VALID: every existing row is NULL, so the constraint holds without a
-- scan of the table under its lock; new and updated rows are checked.
ALTER TABLE tasks
    ADD COLUMN traceparent TEXT,
    ADD CONSTRAINT tasks_traceparent_check
        CHECK (traceparent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$') NOT VALID;
