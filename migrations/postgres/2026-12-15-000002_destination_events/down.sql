DROP TABLE destination_events;
