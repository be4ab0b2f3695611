-- 0002: the Spark driver task of each job, so that a restart knows whether
-- a driver was launched, where, and how it ended.
CREATE TABLE drivers (
    job_id      uuid PRIMARY KEY REFERENCES jobs (id),
    attempt     integer NOT NULL CHECK (attempt >= 1),
    task_id     text NOT NULL,
    agent_id    text NOT NULL DEFAULT '',
    state       text NOT NULL DEFAULT '',
    message     text NOT NULL DEFAULT '',
    ended       boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL
);
