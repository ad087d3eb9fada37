ALTER TABLE attempts ADD CONSTRAINT attempts_task_id_fkey FOREIGN KEY (task_id) REFERENCES tasks (id);
ALTER TABLE tasks ADD CONSTRAINT tasks_payload_ref_key UNIQUE (payload_ref);
ALTER TABLE tasks ADD CONSTRAINT tasks_idempotency_key_key UNIQUE (idempotency_key);
