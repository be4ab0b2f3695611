-- 0016: every driver launch of a job with the agent that ran it (the
-- drivers table keeps only the latest), so that the log of an older
-- launch (sparkpack logs --attempt N) can still be read from its sandbox.
CREATE TABLE driver_launches (
    job_id    uuid NOT NULL REFERENCES jobs (id),
    attempt   integer NOT NULL CHECK (attempt >= 1),
    task_id   text NOT NULL,
    agent_id  text NOT NULL DEFAULT '',
    ended     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (job_id, attempt)
);
INSERT INTO driver_launches (job_id, attempt, task_id, agent_id, ended)
    SELECT job_id, attempt, task_id, agent_id, ended FROM drivers;
