DROP TABLE lease_tokens;
DROP TABLE attempts;
DROP TABLE tasks;
DROP TABLE payloads;
DROP TABLE destinations;
