ALTER TABLE attempts DROP CONSTRAINT attempts_pkey;
ALTER TABLE attempts ADD CONSTRAINT attempts_pkey PRIMARY KEY (id);
CREATE INDEX attempts_by_task ON attempts (task_id, id);
