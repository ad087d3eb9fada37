DROP INDEX attempts_rate_limited;
