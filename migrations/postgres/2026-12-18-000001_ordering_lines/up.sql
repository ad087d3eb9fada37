-- Ordering lines serialised by the database. The claim decides from its
-- snapshot whether a keyed row may go, and two claims whose snapshots were
-- both taken before either committed could each see their own task as the
-- head of one line (a task scheduled with an earlier `not_before` while a
-- claim of the head was running). A claim that takes a keyed task
-- therefore also takes its line's row with a compare-and-set on
-- `version`: the second claimer waits for the first's commit and then
-- finds the version moved, so it leaves the line alone this round.
--
-- Only claims write here, one row per line they have taken a task of (a
-- claim inserts the row the first time); tasks without a key never touch
-- it. `holder` is the task the last claim took, for the claim to tell its
-- own row from the others'.
CREATE TABLE ordering_lines (
    destination_id TEXT NOT NULL,
    ordering_key   TEXT NOT NULL,
    version        BIGINT NOT NULL CHECK (version > 0),
    holder         UUID NOT NULL,
    PRIMARY KEY (destination_id, ordering_key)
);
