DROP TABLE destination_stats;
DROP AGGREGATE destination_stats_sum(BIGINT[]);
DROP FUNCTION destination_stats_merge(BIGINT[], BIGINT[]);
DROP FUNCTION destination_stats_add(BIGINT[], INTEGER[]);
