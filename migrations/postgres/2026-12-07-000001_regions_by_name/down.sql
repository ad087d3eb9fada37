-- Fails while a row names a region other than us or eu.
ALTER TABLE tasks DROP CONSTRAINT tasks_region_name;
ALTER TABLE tasks ADD CONSTRAINT tasks_region_check CHECK (region IN ('us', 'eu'));
ALTER TABLE destinations DROP CONSTRAINT destinations_region_name;
ALTER TABLE destinations ADD CONSTRAINT destinations_region_check CHECK (region IN ('us', 'eu'));
