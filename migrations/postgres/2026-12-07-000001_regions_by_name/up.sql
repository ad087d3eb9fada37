-- Regions come from configuration: any name of the form the code accepts
-- (a lowercase letter, then up to 31 lowercase letters, digits or '-'),
-- instead of the two the first schema listed. Residency is unchanged: a
-- task is pinned to its destination's region by the composite foreign key,
-- and a process claims only its own region.
ALTER TABLE destinations DROP CONSTRAINT destinations_region_check;
ALTER TABLE destinations ADD CONSTRAINT destinations_region_name
    CHECK (region ~ '^[a-z][a-z0-9-]{0,31}$');
ALTER TABLE tasks DROP CONSTRAINT tasks_region_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_region_name
    CHECK (region ~ '^[a-z][a-z0-9-]{0,31}$');
