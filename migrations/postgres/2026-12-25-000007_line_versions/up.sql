-- Ordering lines may now be pruned (retention deletes the row of a line
-- with no live task), so a line's row can be made anew. A claim whose
-- snapshot saw the old row must not take the line against the new one:
-- versions come from one sequence and are never reused, and the claim's
-- compare-and-set compares the version it saw, so a row made since, or a
-- version taken since, is always another's. The sequence starts past every
-- version there is. Touches no table a claim or a finish writes.
CREATE SEQUENCE ordering_line_versions;
SELECT setval('ordering_line_versions', (SELECT coalesce(max(version), 0) + 1 FROM ordering_lines));
