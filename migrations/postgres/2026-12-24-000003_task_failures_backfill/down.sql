-- The copied failures stay in the log: it holds nothing but what the
-- tasks said, and the previous migration's down drops the whole log.
SELECT 1;
