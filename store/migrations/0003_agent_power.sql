-- 0003: power management's record of each agent (package power): its
-- state, when it entered it, and the last error, so that a restart resumes
-- every agent at its step.
CREATE TABLE agent_power (
    agent_id     text PRIMARY KEY,
    hostname     text NOT NULL DEFAULT '',
    attributes   jsonb NOT NULL DEFAULT '{}'::jsonb,
    cpus         double precision NOT NULL DEFAULT 0,
    mem_mb       double precision NOT NULL DEFAULT 0,
    price        double precision NOT NULL DEFAULT 0,
    state        text NOT NULL CHECK (state IN ('on','draining','powering-off','off','booting')),
    since        timestamptz NOT NULL,
    requested    boolean NOT NULL DEFAULT false,
    failures     integer NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT '',
    avoid_until  timestamptz,
    registered_at timestamptz,
    updated_at   timestamptz NOT NULL
);
