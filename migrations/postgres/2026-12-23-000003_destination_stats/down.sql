DROP TABLE destination_stats;
DROP AGGREGATE destination_stats_sum(INTEGER[]);
DROP FUNCTION destination_stats_merge(INTEGER[], INTEGER[]);
DROP FUNCTION destination_stats_add(INTEGER[], INTEGER[]);
