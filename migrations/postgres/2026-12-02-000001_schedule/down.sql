DROP TABLE attempts;
DROP TABLE tasks;
DROP TABLE payloads;
DROP TABLE destinations;
DROP SEQUENCE lease_tokens;
DROP TYPE attempt_outcome;
DROP TYPE task_state;
