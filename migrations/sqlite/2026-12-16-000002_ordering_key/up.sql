-- Order where a receiver needs it (see the PostgreSQL migration of the
-- same name). Task ids are time-ordered text, so `id` is the order of
-- scheduling here too.
ALTER TABLE tasks ADD COLUMN ordering_key TEXT
    CHECK (ordering_key IS NULL OR (ordering_key <> '' AND length(CAST(ordering_key AS BLOB)) <= 200));
CREATE INDEX tasks_ordered_live ON tasks (destination_id, ordering_key, not_before, id)
    WHERE ordering_key IS NOT NULL AND finalized_at IS NULL;
