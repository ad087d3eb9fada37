DROP TABLE destination_stats;
