DROP TABLE payload_keys;
