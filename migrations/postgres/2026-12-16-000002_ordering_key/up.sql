-- Order where a receiver needs it. Tasks of one destination with the same
-- `ordering_key` are sent one at a time, in order of `not_before`, then of
-- id (task ids are time-ordered, so the order of scheduling): the claim
-- takes a keyed row only when no other row of its destination and key
-- that has not ended comes before it.
--
-- The partial index holds only keyed rows that have not ended, so a task
-- without a key never enters it (its insert, claim and end write nothing
-- here), and the claim's probe for an earlier row of a line is one short
-- descent. It names no column the claim writes, so a claim stays HOT.
ALTER TABLE tasks ADD COLUMN ordering_key TEXT
    CHECK (ordering_key IS NULL OR (ordering_key <> '' AND octet_length(ordering_key) <= 200));
CREATE INDEX tasks_ordered_live ON tasks (destination_id, ordering_key, not_before, id)
    WHERE ordering_key IS NOT NULL AND finalized_at IS NULL;
